import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { toolCallStartedText } from '@claw/session-store';
import { postgresAvailable } from '@claw/session-store-pg/testing';
import { FakeOpenAIServer, type FakeTurn } from '@claw/testing/node';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { WsClient } from './helpers.js';
import { delay, instanceOf, pgServerTests, sleepGone, until } from './pg-fixtures.js';
import { ServerProcess, processesWith, serverEnv } from './process.js';

// Leases of sessions in PostgreSQL across real claw-server processes (SCALE-2, SCALE-3): the
// owner that loses a session stops its tool, a killed owner's session is taken over without
// running its tool again, and a frozen owner's late writes are rejected.

const tests = pgServerTests('claw-server-pg-lease-');
const { folder, database, sleepStarted } = tests;
let model: FakeOpenAIServer | undefined;

/** A claw-server on the store `url`, tools allowed without asking, on the fake model. */
async function startServer(workDir: string, url: string, args: string[] = []) {
  if (model === undefined) throw new Error('start the model first');
  const cwd = await folder();
  const portFile = path.join(cwd, 'ports.json');
  const server = new ServerProcess(
    [
      '--workdir', workDir, '--tcp-port', '0', '--http-port', '0', '--port-file', portFile,
      '--approval', 'allow', '--store', url, ...args,
    ],
    { env: serverEnv({ OPENAI_API_KEY: 'test', OPENAI_BASE_URL: model.baseURL }), cwd },
  );
  const ports = await server.ports(portFile);
  const client = await WsClient.connect(ports.http);
  await client.hello(server.token());
  return { server, ports, client };
}

/** The file, in the workspace, that {@link markedSleep} writes a line to each time it runs. */
const markerFile = 'ran.txt';

/** A command that writes one line to the marker file each time it runs, then sleeps (found by `tag`). */
function markedSleep(tag: string): string {
  return `echo ran >> ${markerFile}; sleep ${tag}`;
}

/**
 * The fake model: a prompt that mentions "long job" gets the marked sleep; any other, a text.
 */
function modelTurns(tag: string) {
  return (body: unknown): FakeTurn => {
    const messages = (body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
    const last = messages.at(-1);
    if (last?.role === 'user' && String(last.content).includes('long job')) {
      return { toolCalls: [{ id: 'call-sleep', name: 'bash', arguments: JSON.stringify({ command: markedSleep(tag) }) }] };
    }
    return { text: `answered: ${String(messages.filter((message) => message.role === 'user').at(-1)?.content)}` };
  };
}

/** A distinct sleep length, so that the test finds its own `sleep` among the machine's processes. */
function sleepTag(): string {
  return `3${Math.floor(Math.random() * 9)}.${process.pid % 1000}${Date.now() % 1000}`;
}

async function lastSeq(db: pg.Client, sessionId: string): Promise<number> {
  const rows = await db.query<{ seq: string | null }>(
    'SELECT max(seq) AS seq FROM claw_changes WHERE session_id = $1',
    [sessionId],
  );
  return Number(rows.rows[0]?.seq ?? 0);
}

/** Records, for every change that commits, the application name of the connection that wrote it. */
async function auditWriters(db: pg.Client): Promise<void> {
  await db.query(`
    CREATE TABLE test_writers (session_id text, seq bigint, writer text, at timestamptz DEFAULT clock_timestamp());
    CREATE FUNCTION test_record_writer() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO test_writers (session_id, seq, writer)
        VALUES (NEW.session_id, NEW.seq, current_setting('application_name'));
      RETURN NEW;
    END $$;
    CREATE TRIGGER test_record_writer AFTER INSERT ON claw_changes
      FOR EACH ROW EXECUTE FUNCTION test_record_writer();
  `);
}

/** Opens `sessionId` on `client`, again and again while another instance still holds it. */
async function openWhenFree(client: WsClient, sessionId: string, ms: number) {
  const deadline = Date.now() + ms;
  for (;;) {
    const from = client.events.length;
    client.send({ type: 'open', session_id: sessionId });
    const answer = await client.waitFor(
      () => client.events.slice(from).find((event) => event.type === 'session_opened' || event.type === 'error'),
      'an answer to open',
      10_000,
    );
    if (answer.type === 'session_opened') return { opened: answer, from };
    if (Date.now() > deadline) throw new Error(`could not open ${sessionId}: ${JSON.stringify(answer)}`);
    await delay(100);
  }
}

describe.skipIf(!postgresAvailable())('claw-server leases on PostgreSQL (SCALE-2, SCALE-3)', () => {
  const { cluster } = tests.inSuite(async () => {
    await model?.close();
    model = undefined;
  });

  it('--lease-ms and --lease-renew-ms set the lease, checked with errors that say what to do', async () => {
    const help = await ServerProcess.run(['--help']);
    expect(help.stdout).toMatch(/--lease-ms <n>[\s\S]*default: 10000, at least 1000/);
    expect(help.stdout).toContain('--lease-renew-ms <n>');
    const cases: Array<[string[], RegExp]> = [
      [['--lease-ms', '500'], /--lease-ms needs a whole number of at least 1000, got "500"/],
      [['--lease-ms', 'soon'], /--lease-ms needs a whole number/],
      [['--lease-renew-ms', '0'], /--lease-renew-ms needs a whole number of at least 1/],
      [['--lease-ms', '2000', '--lease-renew-ms', '1000'], /--lease-renew-ms must be below half of the lease \(2000 ms\).*e\.g\. --lease-renew-ms 666/],
      [['--lease-renew-ms', '5000'], /--lease-renew-ms must be below half of the lease \(10000 ms\)/],
    ];
    for (const [args, message] of cases) {
      const result = await ServerProcess.run(['--demo', ...args]);
      expect(result.status, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
    }

    model = await FakeOpenAIServer.start({ turns: [{ text: 'hello' }] });
    const url = await cluster().createDatabase();
    const workDir = await folder();
    const a = await startServer(workDir, url, ['--lease-ms', '2000']);
    expect(a.server.stderr).toContain('leases of 2000 ms renewed every 666 ms');
    a.client.send({ type: 'open', session_id: 'short' });
    await a.client.next('session_opened');
    const db = await database(url);
    const remaining = async () => {
      const rows = await db.query<{ ms: number }>(
        'SELECT (extract(epoch FROM lease_until - now()) * 1000)::float8 AS ms FROM claw_sessions WHERE id = $1',
        ['short'],
      );
      return rows.rows[0]?.ms ?? Number.NaN;
    };
    expect(await remaining()).toBeLessThanOrEqual(2000);
    // Renewed: however long it is held, the lease never runs out. Waited for on the database's
    // clock (not a sleep racing the renewals): the lease first read has run out by now.
    const firstUntil = (await db.query<{ until: Date }>(
      'SELECT lease_until AS until FROM claw_sessions WHERE id = $1',
      ['short'],
    )).rows[0]?.until;
    await until(async () => {
      const rows = await db.query<{ past: boolean }>('SELECT now() > $1 AS past', [firstUntil]);
      return rows.rows[0]?.past === true ? true : undefined;
    }, 'the first lease to run out', 20_000);
    const left = await remaining();
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(2000);
    const b = await startServer(workDir, url, ['--lease-ms', '3000', '--lease-renew-ms', '500']);
    expect(b.server.stderr).toContain('leases of 3000 ms renewed every 500 ms');
  });

  it('on lease_lost the owner stops the task and kills its tool process, and writes nothing more', async () => {
    const tag = sleepTag();
    const workDir = await folder();
    const marker = path.join(workDir, markerFile);
    model = await FakeOpenAIServer.start({ turns: modelTurns(tag) });
    const url = await cluster().createDatabase();
    const a = await startServer(workDir, url);
    const db = await database(url);
    a.client.send({ type: 'open', session_id: 'lost-1' });
    await a.client.next('session_opened');
    a.client.send({ type: 'prompt', content: 'run the long job' });
    const sleeping = await sleepStarted(tag);
    expect(sleeping.length).toBeGreaterThan(0);
    // Still running a moment later: nothing but the loss of the lease stops it.
    await delay(500);
    expect(await processesWith(`sleep ${tag}`)).not.toEqual([]);

    // Another instance takes the session over (as after a lapse): the owner and epoch change.
    const before = await lastSeq(db, 'lost-1');
    await db.query(
      `UPDATE claw_sessions SET owner = 'another-owner', owner_instance = 'another-instance',
         epoch = epoch + 1, lease_until = now() + interval '1 minute' WHERE id = $1`,
      ['lost-1'],
    );
    // A learns it at its next renewal, cancels the task and kills the tool's process.
    await sleepGone(tag);
    expect(a.server.stderr).toMatch(/"lost-1" was taken over by another claw instance/);
    // Its client is told the session was lost (and why) before A let it go.
    const lost = await a.client.next('error', (event) => event.code === 'lease_lost', 0, 10_000);
    expect(lost.message).toMatch(/taken over by another claw instance/);
    // What A numbered after the loss (its cancellation) is never shown: the new owner numbers
    // those seqs. Every event its client got is stored.
    expect(a.client.of('task_canceled')).toEqual([]);
    const shown = Math.max(...a.client.events.flatMap((event) => ('seq' in event ? [event.seq] : [])));
    // Its cancellation was not written: the session is the new owner's.
    expect(await lastSeq(db, 'lost-1')).toBe(before);
    const row = await db.query('SELECT owner, epoch FROM claw_sessions WHERE id = $1', ['lost-1']);
    expect(row.rows[0]).toMatchObject({ owner: 'another-owner' });
    expect((await readFile(marker, 'utf8')).trim().split('\n')).toEqual(['ran']);

    // A let the session go: its client's next prompt is refused, and opening it again on A reads
    // the store, where the new owner holds it (served from there, SCALE-4), instead of showing
    // what A had in memory (its cancellation).
    const from = a.client.events.length;
    a.client.send({ type: 'prompt', content: 'again' });
    await a.client.next('error', () => true, from, 10_000);
    expect(a.client.of('task_started').map((event) => event.content)).toEqual(['run the long job']);
    const other = await WsClient.connect(a.ports.http);
    const welcome = await other.hello(a.server.token());
    expect(JSON.stringify(welcome)).toContain('lost-1');
    other.send({ type: 'open', session_id: 'lost-1' });
    const reopened = await other.next('session_opened', () => true, 0, 10_000);
    // What the store has: A's cancellation was never written.
    expect(reopened.last_seq).toBe(shown);
    expect(reopened.state).toBe('running');
    expect(await lastSeq(db, 'lost-1')).toBe(before);
  });

  it('kill -9 of the owner: another instance takes the session over after the lease, pairs the call with "started, outcome unknown", never runs the tool again, and serves a new prompt', async () => {
    const tag = sleepTag();
    const workDir = await folder();
    model = await FakeOpenAIServer.start({ turns: modelTurns(tag) });
    const url = await cluster().createDatabase();
    const a = await startServer(workDir, url, ['--lease-ms', '2000']);
    const b = await startServer(workDir, url, ['--lease-ms', '2000']);
    a.client.send({ type: 'open', session_id: 'crash-1' });
    await a.client.next('session_opened');
    // While A owns the session, a client of B follows it (SCALE-4): it sees A's events live.
    b.client.send({ type: 'open', session_id: 'crash-1' });
    expect(await b.client.next('session_opened', () => true, 0, 10_000)).toMatchObject({ state: 'idle' });
    a.client.send({ type: 'prompt', content: 'run the long job' });
    await sleepStarted(tag);
    await a.client.next('tool_call', () => true, 0, 10_000);
    const call = await b.client.next('tool_call', () => true, 0, 10_000);
    expect(call.tool_call_id).toBe('call-sleep');
    expect(b.client.of('task_started').map((event) => event.content)).toEqual(['run the long job']);
    // A client that opens it on B now finds it running.
    const watcher = await WsClient.connect(b.ports.http);
    await watcher.hello(b.server.token());
    watcher.send({ type: 'open', session_id: 'crash-1', role: 'observer' });
    expect(await watcher.next('session_opened', () => true, 0, 10_000)).toMatchObject({ state: 'running' });

    const pid = a.server.child.pid;
    if (pid === undefined) throw new Error('no pid');
    process.kill(pid, 'SIGKILL');
    const killedAt = Date.now();
    expect(await a.server.exited).toBe('SIGKILL');
    // B takes it over once A's 2 s lease lapsed, and its client sees, without reopening, the call
    // paired with "started, outcome unknown" and the task ended (within the lease plus a few s).
    const result = await b.client.next('tool_result', (event) => event.tool_call_id === 'call-sleep', 0, 2000 + 6000);
    expect(result).toMatchObject({ result: toolCallStartedText, is_error: true, task_id: call.task_id });
    const failed = await b.client.next('task_failed', () => true, 0, 5000);
    expect(failed).toMatchObject({ code: 'task_interrupted', task_id: call.task_id });
    expect(failed.error).toContain('call-sleep: started, outcome unknown');
    expect(Date.now() - killedAt).toBeLessThan(2000 + 6000);
    const seqs = b.client.events.flatMap((event) => ('seq' in event ? [event.seq] : []));
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(new Set(seqs).size).toBe(seqs.length);
    // A client that opens it now sees the pair in the history.
    const { from } = await openWhenFree(b.client, 'crash-1', 5000);
    const history = await b.client.next('history', () => true, from);
    const paired = history.messages.filter((message) => message.role === 'tool' && message.tool_call_id === 'call-sleep');
    expect(paired).toEqual([{ role: 'tool', tool_call_id: 'call-sleep', content: toolCallStartedText, is_error: true }]);
    const db = await database(url);
    const row = await db.query<{ epoch: string; owner_instance: string }>(
      'SELECT epoch, owner_instance FROM claw_sessions WHERE id = $1',
      ['crash-1'],
    );
    expect(row.rows[0]).toEqual({ epoch: '2', owner_instance: instanceOf(b.server) });

    // A new prompt on B completes; the tool never ran again.
    b.client.send({ type: 'prompt', content: 'carry on' });
    const done = await b.client.next('task_completed', () => true, from, 10_000);
    expect(done.content).toBe('answered: carry on');
    expect((await readFile(path.join(workDir, markerFile), 'utf8')).trim().split('\n')).toEqual(['ran']);
  });

  it('SIGSTOP of the owner past its lease: another instance takes over; on SIGCONT the old owner\'s writes are rejected and it kills its tool', async () => {
    const tag = sleepTag();
    const workDir = await folder();
    model = await FakeOpenAIServer.start({ turns: modelTurns(tag) });
    const url = await cluster().createDatabase();
    const a = await startServer(workDir, url, ['--lease-ms', '2000']);
    const b = await startServer(workDir, url, ['--lease-ms', '2000']);
    const db = await database(url);
    await auditWriters(db);
    a.client.send({ type: 'open', session_id: 'frozen-1' });
    await a.client.next('session_opened');
    a.client.send({ type: 'prompt', content: 'run the long job' });
    await sleepStarted(tag);
    await a.client.next('tool_call', () => true, 0, 10_000);
    const writersA = await db.query<{ count: string }>(
      'SELECT count(*) AS count FROM test_writers WHERE writer = $1',
      [`claw ${instanceOf(a.server)}`],
    );
    // The audit sees A's writes (else the check below could not fail).
    expect(Number(writersA.rows[0]?.count)).toBeGreaterThan(0);

    a.server.signal('SIGSTOP');
    try {
      await until(async () => {
        const rows = await db.query<{ lapsed: boolean }>(
          'SELECT lease_until <= now() AS lapsed FROM claw_sessions WHERE id = $1',
          ['frozen-1'],
        );
        return rows.rows[0]?.lapsed === true ? true : undefined;
      }, 'A\'s lease to lapse');
      const { from } = await openWhenFree(b.client, 'frozen-1', 8000);
      const history = await b.client.next('history', () => true, from);
      expect(JSON.stringify(history.messages)).toContain(toolCallStartedText);
      // B ended the task A left running: wait until that is written.
      await until(async () => {
        const rows = await db.query(
          'SELECT 1 FROM claw_changes WHERE session_id = $1 AND change LIKE \'%"state":"idle"%\'',
          ['frozen-1'],
        );
        return rows.rowCount === 1 ? true : undefined;
      }, 'B to end the interrupted task');
      const takeover = await db.query<{ epoch: string; owner_instance: string; at: Date }>(
        'SELECT epoch, owner_instance, now() AS at FROM claw_sessions WHERE id = $1',
        ['frozen-1'],
      );
      expect(takeover.rows[0]).toMatchObject({ epoch: '2', owner_instance: instanceOf(b.server) });
      const seqAfterTakeover = await lastSeq(db, 'frozen-1');
      // The frozen owner's tool still runs: only A itself can stop it, once it wakes.
      expect(await processesWith(`sleep ${tag}`)).not.toEqual([]);

      a.server.signal('SIGCONT');
      await sleepGone(tag);
      await until(async () => (/"frozen-1" was (taken over|given up)/.test(a.server.stderr) ? true : undefined), 'A to report the loss');
      // Nothing of A's landed after B took over; the session is B's as B left it.
      const late = await db.query(
        'SELECT seq FROM test_writers WHERE writer = $1 AND at >= $2',
        [`claw ${instanceOf(a.server)}`, takeover.rows[0]?.at],
      );
      expect(late.rows).toEqual([]);
      expect(await lastSeq(db, 'frozen-1')).toBe(seqAfterTakeover);
      const row = await db.query('SELECT epoch, owner_instance FROM claw_sessions WHERE id = $1', ['frozen-1']);
      expect(row.rows[0]).toEqual({ epoch: '2', owner_instance: instanceOf(b.server) });
      expect((await readFile(path.join(workDir, markerFile), 'utf8')).trim().split('\n')).toEqual(['ran']);
    } finally {
      a.server.signal('SIGCONT');
    }
  });
});
