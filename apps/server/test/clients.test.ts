import { afterEach, describe, expect, it } from 'vitest';
import {
  GateTool,
  TcpClient,
  WsClient,
  cleanUp,
  gateCall,
  openSession,
  startServer,
} from './helpers.js';

afterEach(cleanUp);

describe('many clients on one session (CH-10)', () => {
  it('two controllers and an observer: all see the request, the first answer wins, the rest are refused', async () => {
    const gate = new GateTool('risky', 'dangerous');
    const server = await startServer({ steps: [gateCall('one', 'risky'), { text: 'done' }], tools: [gate.tool] });
    const { client: first, sessionId } = await openSession('ws', server.address, { session_id: 'team' });
    const { client: second } = await openSession('tcp', server.address, { session_id: sessionId });
    const { client: observer } = await openSession('ws', server.address, { session_id: sessionId, role: 'observer' });
    first.send({ type: 'prompt', content: 'go' });
    const requests = await Promise.all([first, second, observer].map((client) => client.next('approval_request')));
    const requestId = requests[0]?.request_id ?? '';
    expect(new Set(requests.map((request) => request.request_id))).toEqual(new Set([requestId]));

    // The observer may watch but not answer.
    observer.send({ type: 'approval_response', request_id: requestId, decision: 'allow_once' });
    const refused = await observer.next('error');
    expect(refused).toMatchObject({ code: 'approval_not_pending', request_id: requestId });
    expect(refused.message).toContain('observer');

    second.send({ type: 'approval_response', request_id: requestId, decision: 'allow_once' });
    const resolved = await Promise.all([first, second, observer].map((client) => client.next('approval_resolved')));
    for (const event of resolved) expect(event).toMatchObject({ request_id: requestId, decision: 'allow_once', by: 'tcp-1' });
    first.send({ type: 'approval_response', request_id: requestId, decision: 'deny' });
    expect(await first.next('error')).toMatchObject({ code: 'approval_not_pending', request_id: requestId });
    await gate.whenStarted();
    gate.release();
    await Promise.all([first, second, observer].map((client) => client.next('task_completed')));
    expect(gate.started).toEqual(['one']);
    // An observer cannot prompt or interrupt either.
    observer.send({ type: 'prompt', content: 'mine' });
    expect(await observer.next('error', (event) => event.code === 'not_controller')).toBeDefined();
  });

  it('one connection holds many sessions; each event says its session (CH-4)', async () => {
    const server = await startServer({ then: { text: 'reply' } });
    const client = await WsClient.connect(server.address.http);
    await client.hello();
    for (const id of ['a', 'b', 'c']) {
      client.send({ type: 'open', session_id: id });
      await client.next('session_opened', (event) => event.session_id === id);
    }
    // With several open, a message must say which.
    client.send({ type: 'prompt', content: 'which?' });
    expect(await client.next('error')).toMatchObject({ code: 'session_required' });
    for (const id of ['a', 'b', 'c']) client.send({ type: 'prompt', session_id: id, content: `for ${id}` });
    const done = await Promise.all(
      ['a', 'b', 'c'].map((id) => client.next('task_completed', (event) => event.session_id === id)),
    );
    expect(done.map((event) => event.session_id)).toEqual(['a', 'b', 'c']);
    client.send({ type: 'close', session_id: 'b' });
    expect(await client.next('session_closed')).toMatchObject({ session_id: 'b', ended: false });
  });
});

describe('backpressure that isolates (CH-5)', () => {
  it.each(['tcp', 'ws'] as const)('%s: a client that stops reading is closed as too slow; the task and another client go on', async (kind) => {
    // More than the kernel's socket buffers hold (several MiB on loopback), in few big pieces.
    const pieces = Array.from({ length: 1500 }, (_, index) => `piece ${index} `.padEnd(4096, '.'));
    const server = await startServer({
      then: (request) =>
        request.messages.some((message) => message.role === 'user' && message.content === 'long')
          ? { textChunks: pieces }
          : { text: 'short and sweet' },
      limits: { outbound: { maxEvents: 64, maxBytes: 16 * 1024, maxStallMs: 300 } },
      // The log keeps the whole answer, so that the slow client can catch up from it.
      factory: { eventRetention: { maxEvents: 100_000, maxBytes: 256 * 1024 * 1024 } },
    });
    const { client: slow, sessionId } = await openSession(kind, server.address, { session_id: 'slow' });
    const { client: watcher } = await openSession('ws', server.address, { session_id: sessionId, role: 'observer' });
    const { client: other } = await openSession(kind === 'tcp' ? 'ws' : 'tcp', server.address, { session_id: 'other' });
    // Stop reading: the kernel buffers fill, the server's writes stop completing, its queue fills.
    if (slow instanceof TcpClient) slow.socket.pause();
    else slow.ws.pause();
    slow.send({ type: 'prompt', content: 'long' });
    other.send({ type: 'prompt', content: 'quick' });
    expect((await other.next('task_completed')).content).toBe('short and sweet');
    // The slow client's session runs to its end, and a client that reads gets all of it.
    // Six MB through a stalled client's backpressure: slow on a busy machine, hence the long waits.
    const completed = await watcher.next('task_completed', () => true, 0, 45_000);
    expect(completed.content).toBe(pieces.join(''));
    // The server lets the stuck client go (its queue stayed full for maxStallMs); the others stay.
    const deadline = Date.now() + 10_000;
    while (server.server.connections > 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(server.server.connections).toBe(2);
    if (slow instanceof TcpClient) slow.socket.resume();
    else slow.ws.resume();
    await slow.whenClosed(10_000);
    if (slow instanceof WsClient) {
      expect(slow.closeCode).toBe(4008);
      expect(slow.closeReason).toContain('client too slow');
    } else {
      const last = slow.events.at(-1);
      expect(last).toMatchObject({ type: 'error', code: 'client_too_slow' });
    }
    // It reconnects with its cursor and catches up from the log.
    const seqs = slow.events.flatMap((event) => ('seq' in event && 'at' in event ? [event.seq] : []));
    const back = kind === 'tcp' ? await TcpClient.connect(server.address.tcp) : await WsClient.connect(server.address.http);
    await back.hello();
    back.send({ type: 'open', session_id: sessionId, after: Math.max(0, ...seqs) });
    await back.next('session_opened');
    const caughtUp = await back.next('task_completed', () => true, 0, 45_000);
    expect(caughtUp.task_id).toBe(completed.task_id);
  }, 120_000);
});
