// Inbound A2A tasks are bounded (TRUST-6): at most 8 run at once (more are refused before any
// session is made), a finished task is answerable for the retention window and then forgotten,
// the finished tasks remembered are capped, and one store serves every address of the server.
// Driven over real HTTP on 127.0.0.1 with the official SDK's client, as a2a.test.ts does.
import { request as httpRequest } from 'node:http';
import type { Message, StreamResponse, Task } from '@a2a-js/sdk';
import type { InboundTaskClock } from '@claw/a2a/server';
import { ManualClock } from '@claw/testing';
import { ClientFactory, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { afterEach, describe, expect, it } from 'vitest';
import { parseServerArgs, serveDefaults } from '../src/args.js';
import { GateTool, cleanUp, gateCall, startServer, token, type TestServer } from './helpers.js';

afterEach(cleanUp);

const base = (server: TestServer): string => `http://127.0.0.1:${server.address.http}`;

async function client(server: TestServer) {
  const factory = new ClientFactory({
    transports: [
      new JsonRpcTransportFactory({
        fetchImpl: (input, init) => {
          const headers = new Headers(init?.headers);
          headers.set('Authorization', `Bearer ${token}`);
          return fetch(input, { ...init, headers });
        },
      }),
    ],
  });
  return factory.createFromUrl(base(server));
}

type A2aClient = Awaited<ReturnType<typeof client>>;

const userMessage = (text: string, taskId = ''): Message => ({
  messageId: `m-${Math.random().toString(16).slice(2)}`,
  contextId: '',
  taskId,
  role: 1,
  parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

const send = (text: string, taskId = '') =>
  ({ tenant: '', message: userMessage(text, taskId), configuration: undefined, metadata: undefined });

const getTask = (a2a: A2aClient, id: string) => a2a.getTask({ tenant: '', id, historyLength: undefined });

const TaskState = { completed: 3, canceled: 5 };

function asTask(result: Message | Task): Task {
  if (!('status' in result)) throw new Error('expected a task, got a message');
  return result;
}

const refusal = 'the server is running its maximum of 8 inbound tasks: try again when one of them finishes';

/** Starts a streamed task and returns its id once the task exists; the rest is read on. */
async function startStreamed(a2a: A2aClient, text: string) {
  const stream = a2a.sendMessageStream(send(text));
  const first = await stream.next();
  const id = first.value?.payload?.$case === 'task' ? first.value.payload.value.id : '';
  if (id === '') throw new Error('expected the task first');
  const rest = (async () => {
    const seen: StreamResponse[] = [];
    for await (const event of stream) seen.push(event);
    return seen;
  })();
  return { id, rest };
}

async function a2aSessions(server: TestServer): Promise<string[]> {
  const listed = await fetch(`${base(server)}/api/sessions`, { headers: { Authorization: `Bearer ${token}` } });
  const { sessions } = await listed.json() as { sessions: Array<{ session_id: string }> };
  return sessions.map((session) => session.session_id).filter((id) => id.startsWith('a2a-')).sort();
}

/** One JSON-RPC call with the Host header given (the address the client used). */
function rpcAt(server: TestServer, host: string, method: string, params: unknown): Promise<unknown> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
  return new Promise((resolve, reject) => {
    const call = httpRequest({
      host: '127.0.0.1',
      port: server.address.http,
      path: '/a2a',
      method: 'POST',
      headers: {
        Host: host,
        Authorization: `Bearer ${token}`,
        'Content-Type': 'application/json',
        'A2A-Version': '1.0',
        'Content-Length': Buffer.byteLength(body),
      },
    }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
    });
    call.on('error', reject);
    call.end(body);
  });
}

/** A clock the test moves; the store's timers fire only when the test moves it past them. */
class FakeClock extends ManualClock implements InboundTaskClock {}

const hour = 60 * 60_000;

describe('inbound A2A tasks are bounded (TRUST-6)', () => {
  it('refuses a 9th task while 8 run (no session made for it), and accepts one again when one finishes', async () => {
    const gate = new GateTool();
    const server = await startServer({
      // Eight tasks wait in the gate; the one accepted later answers at once; the last one waits.
      steps: [...Array.from({ length: 8 }, (_, index) => gateCall(`task ${index}`)), { text: 'done' }, gateCall('last')],
      tools: [gate.tool],
    });
    const a2a = await client(server);
    const running = [];
    for (let index = 0; index < 8; index += 1) running.push(await startStreamed(a2a, `task ${index}`));
    await gate.whenStarted(8);
    expect(await a2aSessions(server)).toHaveLength(8);

    await expect(a2a.sendMessage(send('one too many'))).rejects.toThrow(refusal);
    await expect((async () => {
      for await (const event of a2a.sendMessageStream(send('one too many, streamed'))) void event;
    })()).rejects.toThrow(refusal);
    const raw = await rpcAt(server, `127.0.0.1:${server.address.http}`, 'SendMessage', {
      message: { messageId: 'raw', role: 'ROLE_USER', parts: [{ text: 'one too many, raw' }] },
    });
    expect(raw).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: refusal } });
    const envelope = await fetch(`${base(server)}/a2a/message`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: 'one too many, over the envelope' }),
    });
    expect(envelope.status).toBe(503);
    expect(await envelope.json()).toEqual({ code: 503, message: refusal, data: null });
    // A message into a running task starts nothing (a claw run takes no messages while it runs).
    const first = running[0];
    if (first === undefined) throw new Error('expected a running task');
    await expect(a2a.sendMessage(send('and also this', first.id))).rejects.toThrow(
      `task ${first.id} is still running and takes no more messages: wait until it ends (GetTask), ` +
      'then send the follow-up as a new message without a taskId',
    );
    expect(await a2aSessions(server)).toHaveLength(8);
    expect(server.provider.calls).toHaveLength(8);

    // One ends (canceled): there is room for exactly one more.
    await a2a.cancelTask({ tenant: '', id: first.id, metadata: undefined });
    await first.rest;
    const accepted = asTask(await a2a.sendMessage(send('now there is room')));
    expect(accepted.status?.state).toBe(TaskState.completed);
    expect(await a2aSessions(server)).toContain(`a2a-${accepted.id}`);
    // That one finished too: seven run, one more may start, then it is full again.
    const blocker = await startStreamed(a2a, 'take the free place');
    await gate.whenStarted(9);
    await expect(a2a.sendMessage(send('full again'))).rejects.toThrow(refusal);
    expect((await a2aSessions(server)).filter((id) => id === `a2a-${blocker.id}`)).toHaveLength(1);
    expect(await a2aSessions(server)).toHaveLength(10);
  });

  it('answers GetTask for a finished task until the retention window ends, then task-not-found', async () => {
    const clock = new FakeClock();
    const server = await startServer({
      then: { text: 'the report' },
      server: { a2a: { taskClock: clock } },
    });
    const a2a = await client(server);
    const task = asTask(await a2a.sendMessage(send('do it')));
    expect(task.status?.state).toBe(TaskState.completed);
    clock.advance(24 * hour - 1);
    const kept = await getTask(a2a, task.id);
    expect(kept.status?.state).toBe(TaskState.completed);
    expect(kept.artifacts).toHaveLength(1);
    clock.advance(1);
    await expect(getTask(a2a, task.id)).rejects.toThrow(`Task not found: ${task.id}`);
    // The session stays: it is the lasting record of the task.
    expect(await a2aSessions(server)).toEqual([`a2a-${task.id}`]);
  });

  it('remembers at most the configured number of finished tasks, forgetting the oldest first', async () => {
    const server = await startServer({
      then: { text: 'done' },
      server: { a2a: { maxRememberedTasks: 2 } },
    });
    const a2a = await client(server);
    const ids: string[] = [];
    for (const text of ['first', 'second', 'third']) ids.push(asTask(await a2a.sendMessage(send(text))).id);
    await expect(getTask(a2a, ids[0] ?? '')).rejects.toThrow(`Task not found: ${ids[0]}`);
    expect((await getTask(a2a, ids[1] ?? '')).status?.state).toBe(TaskState.completed);
    expect((await getTask(a2a, ids[2] ?? '')).status?.state).toBe(TaskState.completed);
  });

  it('one store for every address: a task sent to 127.0.0.1 is known at localhost; each card names its own', async () => {
    const server = await startServer({ then: { text: 'done' } });
    const a2a = await client(server);
    const task = asTask(await a2a.sendMessage(send('hello')));
    const port = server.address.http;
    const found = await rpcAt(server, `localhost:${port}`, 'GetTask', { id: task.id }) as {
      result?: { id: string; status: { state: string } };
    };
    expect(found.result?.id).toBe(task.id);
    expect(found.result?.status.state).toBe('TASK_STATE_COMPLETED');
    const card = await new Promise<{ supportedInterfaces: Array<{ url: string }> }>((resolve, reject) => {
      httpRequest({ host: '127.0.0.1', port, path: '/.well-known/agent-card.json', headers: { Host: `localhost:${port}` } }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as never));
      }).on('error', reject).end();
    });
    expect(card.supportedInterfaces[0]?.url).toBe(`http://localhost:${port}/a2a`);
  });
});

describe('the A2A task flags (TRUST-6)', () => {
  const serve = (argv: string[]) => {
    const command = parseServerArgs(argv);
    if (command.kind !== 'serve') throw new Error('expected serve');
    return command.options;
  };

  it('--a2a-max-tasks is 8 by default and takes a whole number of at least 1', () => {
    expect(serve([]).a2aMaxTasks).toBe(8);
    expect(serveDefaults.a2aMaxTasks).toBe(8);
    expect(serve(['--a2a-max-tasks', '3']).a2aMaxTasks).toBe(3);
    expect(() => serve(['--a2a-max-tasks', '0'])).toThrow(
      '--a2a-max-tasks needs a whole number of at least 1, got "0"; e.g. --a2a-max-tasks 10',
    );
    expect(() => serve(['--a2a-max-tasks', 'many'])).toThrow(/--a2a-max-tasks needs a whole number/);
  });

  it('--a2a-task-retention is 24h by default and takes a duration with a unit', () => {
    expect(serve([]).a2aTaskRetentionMs).toBe(24 * hour);
    expect(serve(['--a2a-task-retention', '90m']).a2aTaskRetentionMs).toBe(90 * 60_000);
    expect(serve(['--a2a-task-retention', '7d']).a2aTaskRetentionMs).toBe(7 * 24 * hour);
    expect(serve(['--a2a-task-retention', '30s']).a2aTaskRetentionMs).toBe(30_000);
    expect(serve(['--a2a-task-retention', '500ms']).a2aTaskRetentionMs).toBe(500);
    expect(serve(['--a2a-task-retention', '0s']).a2aTaskRetentionMs).toBe(0);
    for (const bad of ['24', '1.5h', '-1h', 'a day', '']) {
      expect(() => serve([`--a2a-task-retention=${bad}`])).toThrow(
        `--a2a-task-retention needs a duration: a whole number and one of the units ms, s, m, h, d, got "${bad}"; ` +
        'e.g. --a2a-task-retention 24h or --a2a-task-retention 90m',
      );
    }
  });
});
