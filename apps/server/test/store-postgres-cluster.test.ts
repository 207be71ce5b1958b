import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ServerEvent } from '@claw/channel';
import { postgresAvailable } from '@claw/session-store-pg/testing';
import { FakeOpenAIServer, type FakeTurn } from '@claw/testing/node';
import { describe, expect, it } from 'vitest';
import { WsClient } from './helpers.js';
import { delay, instanceOf, pgServerTests, sleepGone, until } from './pg-fixtures.js';
import { ServerProcess, processesWith, serverEnv } from './process.js';

// Several real claw-server processes sharing one PostgreSQL (SCALE-4): a client of instance B
// works on a session instance A owns — it answers A's approvals, follows A's events through
// dropped LISTEN connections and a database restart, interrupts A's task and prompts A — and
// what it sees is what A's own clients see.

const tests = pgServerTests('claw-server-pg-cluster-');
const { folder, database, sleepStarted } = tests;
let model: FakeOpenAIServer | undefined;

type Approval = 'allow' | 'ask';

/** A claw-server on the store `url` and the fake model; its first WebSocket client said hello. */
async function startServer(workDir: string, url: string, options: { approval?: Approval; args?: string[] } = {}) {
  if (model === undefined) throw new Error('start the model first');
  const cwd = await folder();
  const portFile = path.join(cwd, 'ports.json');
  const server = new ServerProcess(
    [
      '--workdir', workDir, '--tcp-port', '0', '--http-port', '0', '--port-file', portFile,
      '--approval', options.approval ?? 'allow', '--store', url, ...(options.args ?? []),
    ],
    { env: serverEnv({ OPENAI_API_KEY: 'test', OPENAI_BASE_URL: model.baseURL }), cwd },
  );
  const ports = await server.ports(portFile);
  const client = await WsClient.connect(ports.http);
  await client.hello(server.token());
  return { server, ports, client };
}

type Started = Awaited<ReturnType<typeof startServer>>;

/** Another WebSocket client of a started server (its connection is named `ws-<n>` there). */
async function anotherClient(started: Started): Promise<WsClient> {
  const client = await WsClient.connect(started.ports.http);
  await client.hello(started.server.token());
  return client;
}

/** Opens `sessionId` on `client`; the `session_opened` answer. */
async function open(client: WsClient, sessionId: string, role?: 'controller' | 'observer') {
  const from = client.events.length;
  client.send({ type: 'open', session_id: sessionId, ...(role === undefined ? {} : { role }) });
  const answer = await client.waitFor(
    () => client.events.slice(from).find((event) => event.type === 'session_opened' || event.type === 'error'),
    'an answer to open',
    10_000,
  );
  if (answer.type !== 'session_opened') throw new Error(`could not open ${sessionId}: ${JSON.stringify(answer)}`);
  return answer;
}

/** The file, in the workspace, that the tools write a line to each time they run. */
const markerFile = 'ran.txt';

async function markerLines(workDir: string): Promise<string[]> {
  const text = await readFile(path.join(workDir, markerFile), 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line !== '');
}

/**
 * The fake model: a prompt that contains one of `commands`' keys gets a `bash` call of that
 * command (id `call-<key>`, spaces as dashes); after the tool's result, or for any other prompt, `finish` answers.
 */
function modelTurns(
  commands: Record<string, string>,
  finish: (prompt: string) => FakeTurn = (prompt) => ({ text: `answered: ${prompt}` }),
) {
  return (body: unknown): FakeTurn => {
    const messages = (body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
    const last = messages.at(-1);
    const content = messages.filter((message) => message.role === 'user').at(-1)?.content;
    const prompt = typeof content === 'string' ? content : '';
    if (last?.role === 'user') {
      for (const [key, command] of Object.entries(commands)) {
        if (prompt.includes(key)) {
          return { toolCalls: [{ id: `call-${key.replaceAll(' ', '-')}`, name: 'bash', arguments: JSON.stringify({ command }) }] };
        }
      }
    }
    return finish(prompt);
  };
}

/** A distinct sleep length (`<seconds>.<digits>`), so that the test finds its own `sleep`. */
function sleepTag(seconds: number): string {
  return `${seconds}.${process.pid % 1000}${Date.now() % 1000}${Math.floor(Math.random() * 10)}`;
}

const endTypes = new Set(['task_completed', 'task_failed', 'task_canceled']);

/** The session events (those with a seq) `client` got of `sessionId`, as `seq:type`. */
function durable(client: WsClient, sessionId: string): string[] {
  return client.events.flatMap((event) =>
    'seq' in event && event.type !== 'history' && event.session_id === sessionId ? [`${event.seq}:${event.type}`] : [],
  );
}

/** Waits until `client` saw the task end and the session go back to idle after it. */
async function taskEnded(client: WsClient, sessionId: string, ms = 10_000): Promise<ServerEvent> {
  const end = await client.waitFor(
    () => client.events.find((event) => endTypes.has(event.type) && 'session_id' in event && event.session_id === sessionId),
    'the task to end',
    ms,
  );
  const endSeq = 'seq' in end ? end.seq : 0;
  await client.next('state', (event) => event.session_id === sessionId && event.state === 'idle' && event.seq > endSeq, 0, ms);
  return end;
}

describe.skipIf(!postgresAvailable())('claw-server instances sharing PostgreSQL (SCALE-4)', () => {
  const { cluster } = tests.inSuite(async () => {
    await model?.close();
    model = undefined;
  });

  it('sessions opened without an id on two instances get ids of their own instance, never the same one', async () => {
    const workDir = await folder();
    model = await FakeOpenAIServer.start({ turns: () => ({ text: 'hi' }) });
    const url = await cluster().createDatabase();
    const a = await startServer(workDir, url);
    const b = await startServer(workDir, url);
    a.client.send({ type: 'open' });
    b.client.send({ type: 'open' });
    const onA = await a.client.next('session_opened', () => true, 0, 10_000);
    const onB = await b.client.next('session_opened', () => true, 0, 10_000);
    expect(onA.session_id).toBe(`ws-channel-session-${instanceOf(a.server).slice(0, 8)}-1`);
    expect(onB.session_id).toBe(`ws-channel-session-${instanceOf(b.server).slice(0, 8)}-1`);
    // Each is its own: a prompt on one is not seen on the other.
    a.client.send({ type: 'prompt', content: 'only on A' });
    await a.client.next('task_completed', () => true, 0, 10_000);
    expect(b.client.of('task_started')).toEqual([]);
  });

  it('an approval raised on A is answered through B: the tool runs once, both see who answered, a second answer is refused on either instance, one audit row', async () => {
    const workDir = await folder();
    model = await FakeOpenAIServer.start({
      turns: modelTurns({ mark: `echo ran >> ${markerFile}` }, () => ({ text: 'marked' })),
    });
    const url = await cluster().createDatabase();
    const a = await startServer(workDir, url, { approval: 'ask' });
    const b = await startServer(workDir, url, { approval: 'ask' });
    const db = await database(url);
    await open(a.client, 'approve-1');
    a.client.send({ type: 'prompt', session_id: 'approve-1', content: 'mark the file' });
    const request = await a.client.next('approval_request', () => true, 0, 10_000);
    expect(request).toMatchObject({ tool_name: 'bash', session_id: 'approve-1' });
    // Nothing ran before the answer.
    expect(await markerLines(workDir)).toEqual([]);

    // B's second connection opens it as a controller: ws-2 of B, named with B's instance (A's
    // client is ws-1 of A), so that who answered is clear on every instance.
    const answerer = await anotherClient(b);
    const opened = await open(answerer, 'approve-1');
    expect(opened.role).toBe('controller');
    // It learns of the question: in the pending approvals if the store had it, else live.
    const pending = opened.pending_approvals.find((event) => event.request_id === request.request_id) ??
      await answerer.next('approval_request', (event) => event.request_id === request.request_id, 0, 10_000);
    expect(pending).toMatchObject({ request_id: request.request_id, tool_name: 'bash', seq: request.seq });

    answerer.send({
      type: 'approval_response', session_id: 'approve-1', request_id: request.request_id, decision: 'allow_once',
    });
    for (const client of [a.client, answerer]) {
      const resolved = await client.next('approval_resolved', (event) => event.request_id === request.request_id, 0, 10_000);
      expect(resolved).toMatchObject({ decision: 'allow_once', by: `ws-2@${instanceOf(b.server).slice(0, 8)}` });
    }
    const completedOnA = await a.client.next('task_completed', () => true, 0, 10_000);
    expect(completedOnA.content).toBe('marked');
    const completedOnB = await answerer.next('task_completed', () => true, 0, 10_000);
    expect(completedOnB.seq).toBe(completedOnA.seq);
    expect(await markerLines(workDir)).toEqual(['ran']);

    // The first answer won: a second one is refused, from A's client and from B's.
    for (const client of [a.client, answerer]) {
      const from = client.events.length;
      client.send({
        type: 'approval_response', session_id: 'approve-1', request_id: request.request_id, decision: 'deny',
      });
      const refused = await client.next('error', () => true, from, 10_000);
      expect(refused).toMatchObject({ code: 'approval_not_pending', request_id: request.request_id });
    }
    expect(a.client.of('approval_resolved')).toHaveLength(1);
    expect(answerer.of('approval_resolved')).toHaveLength(1);
    expect(await markerLines(workDir)).toEqual(['ran']);

    // The decision is audited once, in the shared table, by the instance whose gate asked (A).
    const audit = await db.query<{ instance: string; entry: { decision: string; toolName: string } }>(
      'SELECT instance, entry FROM claw_audit WHERE entry->>\'requestId\' = $1',
      [request.request_id],
    );
    const all = await db.query<{ count: string }>('SELECT count(*) AS count FROM claw_audit');
    expect(Number(all.rows[0]?.count), 'claw_audit has no rows at all: the audit is not wired to the database').toBeGreaterThan(0);
    expect(audit.rows).toHaveLength(1);
    expect(audit.rows[0]?.entry).toMatchObject({ decision: 'allow_once', toolName: 'bash' });
    expect(audit.rows[0]?.instance).toBe(instanceOf(a.server));
  });

  it('kill -9 of the owner while it asks: another instance raises the question again, and what it allows runs once (SCALE-3)', async () => {
    const workDir = await folder();
    model = await FakeOpenAIServer.start({
      turns: modelTurns({ mark: `echo ran >> ${markerFile}` }, () => ({ text: 'marked' })),
    });
    const url = await cluster().createDatabase();
    const a = await startServer(workDir, url, { approval: 'ask', args: ['--lease-ms', '2000'] });
    const b = await startServer(workDir, url, { approval: 'ask', args: ['--lease-ms', '2000'] });
    await open(a.client, 'ask-1');
    await open(b.client, 'ask-1');
    a.client.send({ type: 'prompt', session_id: 'ask-1', content: 'mark the file' });
    const first = await b.client.next('approval_request', () => true, 0, 10_000);

    const pid = a.server.child.pid;
    if (pid === undefined) throw new Error('no pid');
    process.kill(pid, 'SIGKILL');
    const killedAt = Date.now();
    expect(await a.server.exited).toBe('SIGKILL');
    // B takes the session over and asks again: the same call, the same task, a new question.
    const again = await b.client.next('approval_request', (event) => event.request_id !== first.request_id, 0, 2000 + 6000);
    expect(Date.now() - killedAt).toBeLessThan(2000 + 6000);
    expect(again).toMatchObject({ tool_name: 'bash', arguments: first.arguments, task_id: first.task_id });
    expect(b.client.of('approval_resolved').find((event) => event.request_id === first.request_id))
      .toMatchObject({ decision: 'deny', by: 'canceled' });
    expect(await markerLines(workDir)).toEqual([]);

    b.client.send({ type: 'approval_response', session_id: 'ask-1', request_id: again.request_id, decision: 'allow_once' });
    const done = await b.client.next('task_completed', () => true, 0, 10_000);
    expect(done).toMatchObject({ task_id: first.task_id, content: 'marked' });
    expect(await markerLines(workDir)).toEqual(['ran']);
    const db = await database(url);
    const row = await db.query('SELECT epoch, owner_instance FROM claw_sessions WHERE id = $1', ['ask-1']);
    expect(row.rows[0]).toEqual({ epoch: '2', owner_instance: instanceOf(b.server) });
  });

  it('a question on A stays open while only a client of B watches, past A\'s idle timeout, and B\'s answer runs the tool once', async () => {
    const workDir = await folder();
    model = await FakeOpenAIServer.start({
      turns: modelTurns({ mark: `echo ran >> ${markerFile}` }, () => ({ text: 'marked' })),
    });
    const url = await cluster().createDatabase();
    // A 1.5 s idle timeout on both: without B's word that it watches, A would deny after it.
    const args = ['--idle-timeout-ms', '1500'];
    const a = await startServer(workDir, url, { approval: 'ask', args });
    const b = await startServer(workDir, url, { approval: 'ask', args });
    await open(a.client, 'watched-1');
    await open(b.client, 'watched-1');
    a.client.send({ type: 'prompt', session_id: 'watched-1', content: 'mark the file' });
    const request = await b.client.next('approval_request', () => true, 0, 10_000);
    // A's own client leaves the session: from now on only B's client watches.
    a.client.send({ type: 'close', session_id: 'watched-1' });
    await a.client.next('session_closed', () => true, 0, 10_000);
    await delay(4000);
    expect(b.client.of('approval_resolved')).toEqual([]);
    b.client.send({ type: 'approval_response', session_id: 'watched-1', request_id: request.request_id, decision: 'allow_once' });
    const resolved = await b.client.next('approval_resolved', () => true, 0, 10_000);
    expect(resolved).toMatchObject({ decision: 'allow_once', request_id: request.request_id });
    expect(await b.client.next('task_completed', () => true, 0, 10_000)).toMatchObject({ content: 'marked' });
    expect(await markerLines(workDir)).toEqual(['ran']);
  });

  it('every LISTEN backend terminated again and again mid-stream: B\'s client gets every event A\'s got, in order, and a large tool output intact', async () => {
    const workDir = await folder();
    // bash output is cut in the middle beyond 64 KiB (defaultMaxOutputBytes in @claw/core), so
    // the output stays under it: 2,048 lines of 30 bytes, 61,440 bytes (60 KiB).
    const lines = 2048;
    const bigText = Array.from({ length: lines }, (_, index) => `row ${String(index + 1).padStart(6, '0')} abcdefghijklmnopqr`).join('\n');
    expect(Buffer.byteLength(`${bigText}\n`)).toBe(61_440);
    // And a file of exactly 100 KB, read whole by read_file (up to 100,000 characters a call).
    const fileText = Array.from({ length: 1000 }, (_, index) => `line ${String(index + 1).padStart(4, '0')} ${'x'.repeat(89)}`).join('\n');
    expect(Buffer.byteLength(`${fileText}\n`)).toBe(100_000);
    await writeFile(path.join(workDir, 'big.txt'), `${fileText}\n`);
    const deltas = Array.from({ length: 12 }, (_, index) => `part ${index + 1}. `);
    const printAndRead = modelTurns(
      { print: `sleep 1; printf 'row %06d abcdefghijklmnopqr\\n' $(seq 1 ${lines})` },
      () => ({ text: deltas.join(''), textChunks: deltas, chunkDelayMs: 200 }),
    );
    model = await FakeOpenAIServer.start({
      turns: (body: unknown): FakeTurn => {
        const last = (body as { messages?: Array<{ role: string; tool_call_id?: string }> }).messages?.at(-1);
        if (last?.role === 'tool' && last.tool_call_id === 'call-print') {
          return { toolCalls: [{ id: 'call-read', name: 'read_file', arguments: JSON.stringify({ path: 'big.txt' }) }] };
        }
        return printAndRead(body);
      },
    });
    const url = await cluster().createDatabase();
    const a = await startServer(workDir, url);
    const b = await startServer(workDir, url);
    const db = await database(url);
    await open(a.client, 'listen-1');
    await open(b.client, 'listen-1');
    const listeners = async () => {
      const rows = await db.query<{ pid: number; application_name: string }>(
        'SELECT pid, application_name FROM pg_stat_activity WHERE query ILIKE \'LISTEN%\' AND pid <> pg_backend_pid()',
      );
      return rows.rows;
    };
    // Both instances listen (A for its inbox, B for A's changes), each on a connection of its own.
    const names = new Set([`claw ${instanceOf(a.server)} listen`, `claw ${instanceOf(b.server)} listen`]);
    await until(async () => {
      const found = new Set((await listeners()).map((row) => row.application_name));
      return [...names].every((name) => found.has(name)) ? true : undefined;
    }, 'both instances to LISTEN');
    for (const row of await listeners()) expect(names).toContain(row.application_name);

    a.client.send({ type: 'prompt', session_id: 'listen-1', content: 'print the big text' });
    let rounds = 0;
    let terminated = 0;
    while (!a.client.events.some((event) => endTypes.has(event.type))) {
      const killed = await db.query<{ terminated: boolean }>(
        'SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity WHERE query ILIKE \'LISTEN%\' AND pid <> pg_backend_pid()',
      );
      const count = killed.rows.filter((row) => row.terminated).length;
      if (count > 0) rounds += 1;
      terminated += count;
      await delay(300);
      if (rounds > 100) throw new Error('the task did not end');
    }
    // The listeners were cut several times while the events flowed (else this proves nothing).
    expect(rounds).toBeGreaterThanOrEqual(3);
    expect(terminated).toBeGreaterThanOrEqual(4);

    await taskEnded(a.client, 'listen-1');
    await taskEnded(b.client, 'listen-1', 15_000);
    const onA = durable(a.client, 'listen-1');
    const onB = durable(b.client, 'listen-1');
    expect(onA.filter((entry) => entry.endsWith(':text_delta'))).toHaveLength(deltas.length);
    expect(onB).toEqual(onA);
    const seqs = onB.map((entry) => Number(entry.split(':')[0]));
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, index) => (seqs[0] ?? 0) + index));
    const resultOnB = b.client.of('tool_result').find((event) => event.tool_call_id === 'call-print');
    expect(resultOnB?.is_error).toBe(false);
    expect(resultOnB?.result).toContain(bigText);
    expect(resultOnB?.result).not.toContain('cut;');
    expect(resultOnB?.result).toBe(a.client.of('tool_result')[0]?.result);
    const readOnB = b.client.of('tool_result').find((event) => event.tool_call_id === 'call-read');
    expect(readOnB?.is_error).toBe(false);
    expect(readOnB?.result).toContain(fileText);
    expect(readOnB?.result).toBe(a.client.of('tool_result').find((event) => event.tool_call_id === 'call-read')?.result);
    expect(b.client.of('task_completed')[0]?.content).toBe(deltas.join(''));
    // They came back: each instance listens again.
    await until(async () => ((await listeners()).length >= 2 ? true : undefined), 'the listeners to reconnect');
  }, 40_000);

  // The restart itself (fast shutdown, start again on the same port) is over in well under half
  // the lease, so A may keep its lease; held down for 1.5 s it outlasts half the 2 s lease, and A
  // must give the session up (SCALE-2) without leaving it stuck.
  it.each([
    { outage: 'an immediate restart', downMs: 0 },
    { outage: 'down 1.5 s, past half the lease', downMs: 1500 },
  ])('a database restart while A runs a tool ($outage): the tool ran once, the task ends, and the session is not left stuck', async ({ downMs }) => {
    const tag = sleepTag(3);
    const workDir = await folder();
    model = await FakeOpenAIServer.start({
      turns: modelTurns({ 'long job': `echo ran >> ${markerFile}; sleep ${tag}` }),
    });
    const url = await cluster().createDatabase();
    const a = await startServer(workDir, url, { args: ['--lease-ms', '2000'] });
    const db = await database(url);
    const sessionId = `restart-${downMs}`;
    await open(a.client, sessionId);
    a.client.send({ type: 'prompt', session_id: sessionId, content: 'run the long job' });
    await sleepStarted(tag);
    await a.client.next('tool_call', () => true, 0, 10_000);
    const restartedAt = Date.now();
    await cluster().stop();
    if (downMs > 0) await delay(downMs);
    await cluster().start();
    const restartMs = Date.now() - restartedAt;
    await db.end().catch(() => undefined);
    const after = await database(url);
    const deadline = restartedAt + 20_000;

    // The task ends, as A's client sees it (else the store is asked below, through B).
    const end = await a.client.waitFor(
      () => a.client.events.find((event) => endTypes.has(event.type)),
      'the task to end',
      15_000,
    ).catch(() => undefined);

    // The lease: held by a live instance that renews it, or free (released or lapsed).
    interface LeaseRow { owner: string | null; owner_instance: string | null; live: boolean; until: string | null }
    const leaseRow = async (): Promise<LeaseRow | undefined> => {
      const rows = await after.query<LeaseRow>(
        `SELECT owner, owner_instance, coalesce(lease_until > now(), false) AS live,
           (extract(epoch FROM lease_until) * 1000)::text AS until
         FROM claw_sessions WHERE id = $1`,
        [sessionId],
      );
      return rows.rows[0];
    };
    const seen: Array<LeaseRow & { at: number }> = [];
    const lease = await until(async () => {
      const row = await leaseRow();
      if (row === undefined) return undefined;
      seen.push({ ...row, at: Date.now() - restartedAt });
      if (row.owner === null || !row.live) return { kind: 'free' as const, row };
      const earlier = seen.find((sample) => sample.owner === row.owner && sample.live);
      return earlier !== undefined && Number(row.until) > Number(earlier.until)
        ? { kind: 'renewed' as const, row }
        : undefined;
    }, 'the lease to be renewed by its holder or to become free', Math.max(1000, deadline - Date.now()));

    // Another instance opens the session: the store has the task ended (idle), and a new prompt
    // through it completes, on the instance that holds the lease or, when it was free, on B.
    const b = await startServer(workDir, url, { args: ['--lease-ms', '2000'] });
    const reopened = await open(b.client, sessionId);
    const from = b.client.events.length;
    b.client.send({ type: 'prompt', session_id: sessionId, content: 'carry on' });
    const done = await b.client.next('task_completed', () => true, from, 10_000).catch((error: unknown) => error);
    const owned = await leaseRow();
    // The session as stored, replayed from its first event.
    const replay = await anotherClient(b);
    replay.send({ type: 'open', session_id: sessionId, after: 0, role: 'observer' });
    const doneSeq = typeof done === 'object' && done !== null && 'seq' in done ? Number(done.seq) : 0;
    await replay.next('state', (event) => event.seq > doneSeq, 0, 5000).catch(() => undefined);
    // What happened: the message of every check below.
    const story = JSON.stringify({
      downMs,
      restartMs,
      endOnA: end,
      eventsOnA: durable(a.client, sessionId),
      lease: lease.kind,
      leaseSamples: seen,
      instances: { a: instanceOf(a.server), b: instanceOf(b.server) },
      reopenedOnB: { state: reopened.state, last_seq: reopened.last_seq },
      newPrompt: done instanceof Error ? done.message : done,
      ownerAfter: owned?.owner_instance,
      stored: durable(replay, sessionId),
      stderrA: a.server.stderr.split('\n').filter((line) => line.includes(sessionId)),
    }, null, 2);
    expect(end ?? reopened.state, `a task end event on A's client, or the session idle when reopened:\n${story}`).toSatisfy(
      (outcome: unknown) => (typeof outcome === 'object' && outcome !== null) || outcome === 'idle',
    );
    expect(reopened.state, story).toBe('idle');
    expect(done, story).toMatchObject({ type: 'task_completed', content: 'answered: carry on' });
    expect(owned?.owner_instance, story).toBe(instanceOf(lease.kind === 'renewed' ? a.server : b.server));
    if (lease.kind === 'renewed') {
      // A kept the session: everything it told its client around the restart was stored, same seqs.
      expect(durable(replay, sessionId).slice(0, durable(a.client, sessionId).length), story)
        .toEqual(durable(a.client, sessionId));
    }
    // The tool never ran twice.
    await sleepGone(tag);
    expect(await markerLines(workDir), story).toEqual(['ran']);
  }, 45_000);

  it('B\'s client sees the progress of A\'s running command as A\'s does, and an interrupt sent through B cancels it: both see task_canceled, the process is gone', async () => {
    const tag = sleepTag(30);
    const workDir = await folder();
    model = await FakeOpenAIServer.start({
      turns: modelTurns({ 'long job': `echo ran >> ${markerFile}; echo started; sleep ${tag}` }),
    });
    const url = await cluster().createDatabase();
    const a = await startServer(workDir, url);
    const b = await startServer(workDir, url);
    await open(a.client, 'interrupt-1');
    await open(b.client, 'interrupt-1');
    a.client.send({ type: 'prompt', session_id: 'interrupt-1', content: 'run the long job' });
    await sleepStarted(tag);
    const call = await b.client.next('tool_call', () => true, 0, 10_000);
    // Still running a moment later: only the interrupt stops it.
    await delay(300);
    expect(await processesWith(`sleep ${tag}`)).not.toEqual([]);
    // bash reports its progress 5 s into the command; A relays it to B (not stored: no seq).
    const progressOnA = await a.client.next('tool_progress', () => true, 0, 15_000);
    const progressOnB = await b.client.next('tool_progress', () => true, 0, 10_000);
    expect(progressOnA).toMatchObject({ session_id: 'interrupt-1', task_id: call.task_id, tool_call_id: call.tool_call_id, tool_name: 'bash' });
    expect(progressOnA.message).toContain('last output: "started"');
    expect(progressOnB).toEqual(progressOnA);
    expect('seq' in progressOnB).toBe(false);

    const from = b.client.events.length;
    b.client.send({ type: 'interrupt', session_id: 'interrupt-1' });
    const onA = await a.client.next('task_canceled', () => true, 0, 10_000);
    const onB = await b.client.next('task_canceled', () => true, 0, 10_000);
    expect(onA.task_id).toBe(call.task_id);
    expect(onB).toMatchObject({ task_id: call.task_id, seq: onA.seq });
    expect(b.client.events.slice(from).filter((event) => event.type === 'error')).toEqual([]);
    await sleepGone(tag);
    await taskEnded(b.client, 'interrupt-1');
    expect(b.client.of('state').at(-1)?.state).toBe('idle');
    expect(await markerLines(workDir)).toEqual(['ran']);
  });

  it('a prompt through B while A runs a task is refused with session_busy; once it ended, one starts a task on A', async () => {
    const tag = sleepTag(2);
    const workDir = await folder();
    model = await FakeOpenAIServer.start({ turns: modelTurns({ 'short job': `echo ran >> ${markerFile}; sleep ${tag}` }) });
    const url = await cluster().createDatabase();
    const a = await startServer(workDir, url);
    const b = await startServer(workDir, url);
    const db = await database(url);
    await open(a.client, 'busy-1');
    await open(b.client, 'busy-1');
    a.client.send({ type: 'prompt', session_id: 'busy-1', content: 'run the short job' });
    await sleepStarted(tag);
    await b.client.next('tool_call', () => true, 0, 10_000);

    const from = b.client.events.length;
    b.client.send({ type: 'prompt', session_id: 'busy-1', content: 'meanwhile' });
    const refused = await b.client.next('error', () => true, from, 10_000);
    expect(refused).toMatchObject({ code: 'session_busy', session_id: 'busy-1' });
    // The running task went on, and no second one started.
    const first = await a.client.next('task_completed', () => true, 0, 10_000);
    expect(first.content).toBe('answered: run the short job');
    expect(a.client.of('task_started').map((event) => event.content)).toEqual(['run the short job']);
    await taskEnded(b.client, 'busy-1');

    const next = b.client.events.length;
    b.client.send({ type: 'prompt', session_id: 'busy-1', content: 'now then' });
    const startedOnB = await b.client.next('task_started', (event) => event.content === 'now then', next, 10_000);
    const startedOnA = await a.client.next('task_started', (event) => event.content === 'now then', 0, 10_000);
    expect(startedOnA).toMatchObject({ task_id: startedOnB.task_id, seq: startedOnB.seq });
    const done = await a.client.next('task_completed', (event) => event.task_id === startedOnA.task_id, 0, 10_000);
    expect(done.content).toBe('answered: now then');
    await b.client.next('task_completed', (event) => event.task_id === startedOnA.task_id, next, 10_000);
    expect(b.client.events.slice(next).filter((event) => event.type === 'error')).toEqual([]);
    // It ran on A: A still owns the session.
    const owner = await db.query('SELECT owner_instance FROM claw_sessions WHERE id = $1', ['busy-1']);
    expect(owner.rows[0]).toEqual({ owner_instance: instanceOf(a.server) });
    expect(await markerLines(workDir)).toEqual(['ran']);
  });
});
