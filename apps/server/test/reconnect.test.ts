import type { ServerEvent } from '@claw/channel';
import { afterEach, describe, expect, it } from 'vitest';
import {
  GateTool,
  TcpClient,
  WsClient,
  cleanUp,
  gateCall,
  openSession,
  startServer,
  type TestServer,
} from './helpers.js';

afterEach(cleanUp);

type Kind = 'tcp' | 'ws';

function sessionEvents(events: readonly ServerEvent[]): Array<ServerEvent & { seq: number }> {
  return events.filter((event): event is ServerEvent & { seq: number } => 'seq' in event && 'at' in event);
}

async function connect(kind: Kind, server: TestServer): Promise<TcpClient | WsClient> {
  const client = kind === 'tcp' ? await TcpClient.connect(server.address.tcp) : await WsClient.connect(server.address.http);
  await client.hello();
  return client;
}

function drop(client: TcpClient | WsClient): Promise<true> {
  if (client instanceof TcpClient) client.socket.destroy();
  else client.ws.terminate();
  return client.whenClosed();
}

/** Every session event the server has for a session, read by a fresh observer from the start. */
async function allEvents(
  kind: Kind,
  server: TestServer,
  sessionId: string,
): Promise<Array<ServerEvent & { seq: number }>> {
  const reader = await connect(kind, server);
  reader.send({ type: 'open', session_id: sessionId, after: 0, role: 'observer' });
  await reader.next('task_completed');
  await reader.next('state', (event) => event.state === 'idle');
  return sessionEvents(reader.events);
}

describe('reconnecting with a cursor (CH-9, RT-4)', () => {
  it.each(['tcp', 'ws'] as const)('%s: dropped while a tool runs, reopened after its last seq: exactly the missed events, then live', async (kind) => {
    const gate = new GateTool();
    const server = await startServer({
      steps: [gateCall('first'), gateCall('second'), { textChunks: ['all ', 'done'] }],
      tools: [gate.tool],
    });
    const { client, sessionId } = await openSession(kind, server.address, { session_id: 'work' });
    client.send({ type: 'prompt', content: 'go' });
    await gate.whenStarted(1);
    await client.next('tool_call');
    const seen = sessionEvents(client.events);
    const lastSeq = seen.at(-1)?.seq ?? 0;
    await drop(client);
    // Missed while away: the first tool ends, the second starts.
    gate.release();
    await gate.whenStarted(2);
    const back = await connect(kind, server);
    const from = back.events.length;
    back.send({ type: 'open', session_id: sessionId, after: lastSeq });
    const opened = await back.next('session_opened', () => true, from);
    expect(opened.last_seq).toBeGreaterThan(lastSeq);
    gate.release();
    await back.next('task_completed');
    await back.next('state', (event) => event.state === 'idle');
    // session_opened came first, no history (a cursor was given), then the events after lastSeq.
    expect(back.events.slice(from)[0]?.type).toBe('session_opened');
    expect(back.of('history')).toEqual([]);
    const replayed = sessionEvents(back.events.slice(from));
    const everything = await allEvents(kind, server, sessionId);
    expect(replayed).toEqual(everything.filter((event) => event.seq > lastSeq));
    // Together, what the client saw before and after is the whole log, each event once.
    expect([...seen, ...replayed].map((event) => event.seq)).toEqual(everything.map((event) => event.seq));
  });

  it.each(['tcp', 'ws'] as const)('%s: dropped while an approval waits: it reappears once and can be answered', async (kind) => {
    const gate = new GateTool('risky', 'dangerous');
    const server = await startServer({ steps: [gateCall('ask me', 'risky'), { text: 'thanks' }], tools: [gate.tool] });
    const { client, sessionId } = await openSession(kind, server.address);
    client.send({ type: 'prompt', content: 'go' });
    const request = await client.next('approval_request');
    await client.next('state', (event) => event.state === 'awaiting_approval');
    const lastSeq = sessionEvents(client.events).at(-1)?.seq ?? 0;
    await drop(client);
    const back = await connect(kind, server);
    back.send({ type: 'open', session_id: sessionId, after: lastSeq });
    const opened = await back.next('session_opened');
    expect(opened.state).toBe('awaiting_approval');
    expect(opened.pending_approvals.map((pending) => pending.request_id)).toEqual([request.request_id]);
    back.send({ type: 'approval_response', request_id: request.request_id, decision: 'allow_once' });
    const resolved = await back.next('approval_resolved');
    expect(resolved).toMatchObject({ request_id: request.request_id, decision: 'allow_once', by: `${kind}-2` });
    await gate.whenStarted();
    gate.release();
    await back.next('task_completed');
    // Not replayed as an event too: the client was told once, in session_opened.
    expect(back.of('approval_request')).toEqual([]);
  });

  it.each(['tcp', 'ws'] as const)('%s: a forged or expired cursor gets cursor_expired, never a silent live stream', async (kind) => {
    const server = await startServer({
      then: { text: 'ok' },
      factory: { eventRetention: { maxEvents: 8 } },
    });
    const { client, sessionId } = await openSession(kind, server.address, { session_id: 'old' });
    for (let task = 0; task < 3; task += 1) {
      const from = client.events.length;
      client.send({ type: 'prompt', content: `task ${task}` });
      await client.next('task_completed', () => true, from);
      await client.next('state', (event) => event.state === 'idle', from);
    }
    const last = sessionEvents(client.events).at(-1)?.seq ?? 0;
    expect(last).toBeGreaterThan(8);
    for (const after of [last + 50, 1]) {
      const other = await connect(kind, server);
      other.send({ type: 'open', session_id: sessionId, after });
      const error = await other.next('error');
      expect(error).toMatchObject({ code: 'cursor_expired', session_id: sessionId });
      expect(error.oldest_seq).toBeGreaterThan(1);
      // Refused before anything else: no session_opened, no events; the session is not open there.
      expect(other.of('session_opened')).toEqual([]);
      other.send({ type: 'ping' });
      await other.next('pong');
      expect(sessionEvents(other.events)).toEqual([]);
      // The fallback works: opening without a cursor gives the history.
      other.send({ type: 'open', session_id: sessionId });
      const history = await other.next('history');
      expect(history.messages.filter((message) => message.role === 'user')).toHaveLength(3);
    }
  });
});
