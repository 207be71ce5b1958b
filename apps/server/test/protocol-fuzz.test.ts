import type { ServerEvent } from '@claw/channel';
import type { ScriptedStep } from '@claw/testing';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServerAddress } from '../src/server.js';
import {
  GateTool,
  TcpClient,
  WsClient,
  cleanUp,
  gateCall,
  openSession,
  startServer,
} from './helpers.js';

// CH-1 (and CH-4, CH-8 to CH-11, SEC-6) against hostile or sloppy input: every bad message gets a
// defined `error` with its exact code (or a defined close), the connection that sent it goes on
// where the protocol says it does, and every other connection and session is unaffected.

afterEach(cleanUp);

type Kind = 'tcp' | 'ws';
type Client = TcpClient | WsClient;

const kinds = ['tcp', 'ws'] as const;
const otherKind = (kind: Kind): Kind => (kind === 'tcp' ? 'ws' : 'tcp');

/** What the scripted model answers the bystanders' prompts (after any steps a test scripts). */
const stillHere = 'still here';

function start(options: Parameters<typeof startServer>[0] = {}): ReturnType<typeof startServer> {
  return startServer({ then: { text: stillHere }, ...options });
}

async function connect(kind: Kind, address: ServerAddress): Promise<Client> {
  return kind === 'tcp' ? TcpClient.connect(address.tcp) : WsClient.connect(address.http);
}

async function authed(kind: Kind, address: ServerAddress): Promise<Client> {
  const client = await connect(kind, address);
  await client.hello();
  return client;
}

/** The connection-level answers (errors, pongs) since `from`, as `error(code)` / `pong`. */
function replies(client: Client, from: number): string[] {
  return client.events
    .slice(from)
    .flatMap((event) => (event.type === 'error' ? [`error(${event.code})`] : event.type === 'pong' ? ['pong'] : []));
}

function errorsSince(client: Client, from: number): Array<Extract<ServerEvent, { type: 'error' }>> {
  return client.events.slice(from).filter((event): event is Extract<ServerEvent, { type: 'error' }> => event.type === 'error');
}

/** Sends a ping and waits for its pong: everything the server said about earlier messages came before it. */
async function ping(client: Client): Promise<void> {
  const from = client.events.length;
  client.send({ type: 'ping' });
  await client.next('pong', () => true, from);
}

/** Sends one raw message (a line on TCP, a text frame on WebSocket), then a ping; returns what came back. */
async function probe(client: Client, raw: string): Promise<string[]> {
  const from = client.events.length;
  client.send(raw);
  await ping(client);
  return replies(client, from);
}

/**
 * A client with a session of its own on another connection. `check()` proves it was not disturbed:
 * it never saw an error or a bad line, is still open, gets a pong, and a prompt of its session still
 * completes; and the server still takes a new connection.
 */
async function bystander(kind: Kind, address: ServerAddress): Promise<{ client: Client; check: () => Promise<void> }> {
  const { client, sessionId } = await openSession(kind, address, { session_id: `bystander-${kind}` });
  return {
    client,
    check: async () => {
      await ping(client);
      const from = client.events.length;
      client.send({ type: 'prompt', session_id: sessionId, content: 'are you there?' });
      const done = await client.next('task_completed', () => true, from);
      expect(done.content).toBe(stillHere);
      expect(client.of('error')).toEqual([]);
      expect(client.invalid).toEqual([]);
      expect(client.closed).toBe(false);
      const fresh = await TcpClient.connect(address.tcp);
      expect(await fresh.hello()).toMatchObject({ type: 'welcome', protocol: 1 });
    },
  };
}

/** A JSON line of exactly `bytes` bytes that is a valid ping (unknown fields are dropped). */
function pingOfSize(bytes: number): string {
  const bare = JSON.stringify({ type: 'ping', pad: '' });
  return JSON.stringify({ type: 'ping', pad: 'p'.repeat(bytes - bare.length) });
}

describe('over the size limit (CH-1, SEC-6)', () => {
  it('tcp: a line over the limit with no newline yet gets message_too_large; the rest of it is dropped; the connection goes on', async () => {
    const { address, provider } = await start({ limits: { maxMessageBytes: 1024 } });
    const watcher = await bystander('ws', address);
    const client = (await authed('tcp', address)) as TcpClient;
    client.socket.setNoDelay(true);
    const from = client.events.length;
    client.write(`{"type":"prompt","content":"${'a'.repeat(2000)}`);
    const error = await client.next('error', () => true, from);
    expect(error.code).toBe('message_too_large');
    // Still the same (dropped) line, however much more comes before its newline.
    client.write(`${'b'.repeat(5000)}","x":"`);
    client.write('"}\n');
    await ping(client);
    expect(replies(client, from)).toEqual(['error(message_too_large)', 'pong']);
    expect(client.closed).toBe(false);
    expect(provider.calls).toHaveLength(0);
    await watcher.check();
  });

  it('tcp: a line over the limit with its newline gets message_too_large and runs nothing; the connection goes on', async () => {
    const { address, provider, server } = await start({ limits: { maxMessageBytes: 1024 } });
    const watcher = await bystander('ws', address);
    const client = await authed('tcp', address);
    const loaded = server.loadedSessions;
    expect(await probe(client, JSON.stringify({ type: 'prompt', content: 'a'.repeat(2000) }))).toEqual([
      'error(message_too_large)',
      'pong',
    ]);
    // Again, and the next line is read on its own.
    expect(await probe(client, `${'x'.repeat(1025)}\n{"type":"interrupt"}`)).toEqual([
      'error(message_too_large)',
      'error(no_session)',
      'pong',
    ]);
    expect(provider.calls).toHaveLength(0);
    expect(server.loadedSessions).toBe(loaded);
    await watcher.check();
  });

  it.each(kinds)('%s: a message of exactly the limit is taken; one byte more is not', async (kind) => {
    const { address } = await start({ limits: { maxMessageBytes: 1024 } });
    const watcher = await bystander(otherKind(kind), address);
    const client = await authed(kind, address);
    expect(Buffer.byteLength(pingOfSize(1024))).toBe(1024);
    expect(await probe(client, pingOfSize(1024))).toEqual(['pong', 'pong']);
    if (kind === 'tcp') {
      expect(await probe(client, pingOfSize(1025))).toEqual(['error(message_too_large)', 'pong']);
    } else {
      client.send(pingOfSize(1025));
      await client.whenClosed();
      expect((client as WsClient).closeCode).toBe(1009);
    }
    await watcher.check();
  });

  it('ws: a frame over maxPayload (the message limit) closes with 1009; other connections go on', async () => {
    const { address } = await start({ limits: { maxMessageBytes: 1024 } });
    const watcher = await bystander('tcp', address);
    const client = (await authed('ws', address)) as WsClient;
    client.send(JSON.stringify({ type: 'prompt', content: 'a'.repeat(4000) }));
    await client.whenClosed();
    expect(client.closeCode).toBe(1009);
    expect(client.of('task_started')).toEqual([]);
    await watcher.check();
    const again = await authed('ws', address);
    await ping(again);
  });
});

describe('bad bytes and bad JSON (CH-1)', () => {
  it('tcp: invalid UTF-8 gets invalid_utf8 (each kind of bad sequence); the connection goes on', async () => {
    const { address } = await start();
    const watcher = await bystander('ws', address);
    const client = (await authed('tcp', address)) as TcpClient;
    const bad = [
      [0xff, 0xfe], // never in UTF-8
      [0xc0, 0xaf], // overlong "/"
      [0xed, 0xa0, 0x80], // a UTF-16 surrogate
      [0xe2, 0x82], // truncated at the end of the line
      [0xf8, 0x88, 0x80, 0x80, 0x80], // a five-byte form
    ];
    for (const bytes of bad) {
      const from = client.events.length;
      client.write(Buffer.concat([Buffer.from('{"type":"ping","x":"'), Buffer.from(bytes), Buffer.from('"}\n')]));
      await ping(client);
      expect(replies(client, from), bytes.join(' ')).toEqual(['error(invalid_utf8)', 'pong']);
    }
    await watcher.check();
  });

  it('tcp: a character split across two packets is put back together (no invalid_utf8)', async () => {
    const { address } = await start();
    const client = (await authed('tcp', address)) as TcpClient;
    client.socket.setNoDelay(true);
    const line = Buffer.from('{"type":"ping","x":"é€😀"}\n');
    const from = client.events.length;
    // Every cut inside the string, the multi-byte characters included.
    const cuts = Array.from({ length: line.length - 23 }, (_, index) => 20 + index);
    for (const cut of cuts) {
      client.write(line.subarray(0, cut));
      await new Promise((resolve) => setTimeout(resolve, 2));
      client.write(line.subarray(cut));
    }
    await ping(client);
    expect(replies(client, from)).toEqual([...cuts.map(() => 'pong'), 'pong']);
  });

  it('tcp: blank lines are skipped and CRLF line ends are taken', async () => {
    const { address } = await start();
    const client = (await authed('tcp', address)) as TcpClient;
    const from = client.events.length;
    client.write('\n\r\n\n{"type":"ping"}\r\n\r\n');
    await ping(client);
    expect(replies(client, from)).toEqual(['pong', 'pong']);
  });

  const invalidJson: Array<[string, string]> = [
    ['a truncated object', '{"type":'],
    ['plain text', 'hello'],
    ['single quotes', "{'type':'ping'}"],
    ['a trailing comma', '{"type":"ping",}'],
    ['a NUL byte after the object', '{"type":"ping"}\u0000'],
    ['a NUL byte before the object', '\u0000{"type":"ping"}'],
    ['a raw NUL byte inside a string', '{"type":"pi\u0000ng"}'],
    ['two JSON objects on one line', '{"type":"ping"}{"type":"ping"}'],
    ['two JSON objects with a space between', '{"type":"ping"} {"type":"ping"}'],
    ['whitespace only', '   '],
  ];

  describe.each(kinds)('%s', (kind) => {
    it.each(invalidJson)('%s → invalid_json, nothing runs, the connection goes on', async (_name, raw) => {
      const { address, provider } = await start();
      const watcher = await bystander(otherKind(kind), address);
      const client = await authed(kind, address);
      const calls = provider.calls.length;
      expect(await probe(client, raw)).toEqual(['error(invalid_json)', 'pong']);
      expect(errorsSince(client, 0)[0]?.message).toContain('JSON');
      expect(client.closed).toBe(false);
      expect(provider.calls.length).toBe(calls);
      await watcher.check();
    });
  });

  it.each(kinds)('%s: an escaped NUL inside a string is valid JSON and the message is taken', async (kind) => {
    const { address } = await start();
    const client = await authed(kind, address);
    expect(await probe(client, '{"type":"ping","x":"a\\u0000b"}')).toEqual(['pong', 'pong']);
  });
});

describe('unknown types and missing fields (CH-1)', () => {
  const unknown = [
    '{"type":"shutdown"}',
    '{"type":"pong"}',
    '{"type":"PING"}',
    '{"type":""}',
    '{"type":"__proto__"}',
    '{"type":"constructor"}',
    '{"type":"toString"}',
    '{"type":"hasOwnProperty"}',
    '{"type":null}',
    '{"type":1}',
    '{"type":["ping"]}',
    '{"type":{"0":"ping"}}',
    '{}',
    'null',
    '42',
    '"ping"',
    '[]',
    '[{"type":"ping"}]',
  ];

  it.each(kinds)('%s: every unknown or absent type → unknown_type, the connection goes on', async (kind) => {
    const { address, provider } = await start();
    const watcher = await bystander(otherKind(kind), address);
    const client = await authed(kind, address);
    const calls = provider.calls.length;
    for (const raw of unknown) {
      expect(await probe(client, raw), raw).toEqual(['error(unknown_type)', 'pong']);
    }
    expect(provider.calls.length).toBe(calls);
    expect(client.closed).toBe(false);
    await watcher.check();
  });

  it.each(kinds)('%s: a type nested very deeply (within the size limit) → unknown_type, the server stays up', async (kind) => {
    const { address } = await start();
    const watcher = await bystander(otherKind(kind), address);
    const client = await authed(kind, address);
    const depth = 100_000;
    expect(await probe(client, `{"type":${'['.repeat(depth)}${']'.repeat(depth)}}`)).toEqual(['error(unknown_type)', 'pong']);
    expect(await probe(client, `{"type":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`)).toEqual(['error(unknown_type)', 'pong']);
    await watcher.check();
  });

  const missing: Array<Record<string, unknown>> = [
    { type: 'prompt' },
    { type: 'prompt', content: '' },
    { type: 'prompt', content: '   ' },
    { type: 'prompt', content: 42 },
    { type: 'prompt', content: ['hi'] },
    { type: 'prompt', session_id: '', content: 'hi' },
    { type: 'approval_response', decision: 'deny' },
    { type: 'approval_response', request_id: '', decision: 'deny' },
    { type: 'approval_response', request_id: 'approval-1' },
    { type: 'approval_response', request_id: 'approval-1', decision: 'yes' },
    { type: 'open', after: -1 },
    { type: 'open', after: 1.5 },
    { type: 'open', after: '3' },
    { type: 'open', role: 'admin' },
    { type: 'open', session_id: '' },
    { type: 'open', session_id: 'x'.repeat(129) },
    { type: 'open', workdir: '' },
    { type: 'close', end: 'yes' },
    { type: 'interrupt', session_id: 7 },
    { type: 'hello' },
    { type: 'hello', token: 'x', protocol: '1' },
  ];

  it.each(kinds)('%s: a missing or bad field → invalid_message naming the type; nothing opens or runs', async (kind) => {
    const { address, provider, server } = await start();
    const watcher = await bystander(otherKind(kind), address);
    const client = await authed(kind, address);
    const calls = provider.calls.length;
    const loaded = server.loadedSessions;
    for (const message of missing) {
      const from = client.events.length;
      expect(await probe(client, JSON.stringify(message)), JSON.stringify(message)).toEqual(['error(invalid_message)', 'pong']);
      expect(errorsSince(client, from)[0]?.message).toContain(`invalid ${String(message.type)} message`);
    }
    expect(client.of('session_opened')).toEqual([]);
    expect(client.of('task_started')).toEqual([]);
    expect(provider.calls.length).toBe(calls);
    expect(server.loadedSessions).toBe(loaded);
    await watcher.check();
  });

  it.each(kinds)('%s: a second hello → hello_repeated, the connection goes on', async (kind) => {
    const { address } = await start();
    const client = await authed(kind, address);
    expect(await probe(client, JSON.stringify({ type: 'hello', token: 'whatever', protocol: 1 }))).toEqual([
      'error(hello_repeated)',
      'pong',
    ]);
    expect(client.of('welcome')).toHaveLength(1);
  });
});

describe('prototype pollution (CH-1)', () => {
  it.each(kinds)('%s: __proto__ and constructor keys are plain data: still pong, no prototype changed', async (kind) => {
    const { address } = await start();
    const watcher = await bystander(otherKind(kind), address);
    const client = await authed(kind, address);
    const polluting = [
      '{"type":"ping","__proto__":{"polluted":true}}',
      '{"__proto__":{"polluted":true},"type":"ping"}',
      '{"type":"ping","constructor":{"prototype":{"polluted":true}}}',
      '{"type":"ping","__proto__":{"__proto__":{"polluted":true}}}',
    ];
    for (const raw of polluting) expect(await probe(client, raw), raw).toEqual(['pong', 'pong']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
    expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted');
    await watcher.check();
  });

  it.each(kinds)('%s: fields under __proto__ are not read as the message\'s own (open keeps its defaults)', async (kind) => {
    const { address, workDir } = await start();
    const client = await authed(kind, address);
    const from = client.events.length;
    client.send('{"type":"open","__proto__":{"session_id":"evil","workdir":"/","role":"observer","after":0}}');
    const opened = await client.next('session_opened', () => true, from);
    expect(opened.session_id).toBe(`${kind}-channel-session-1`);
    expect(opened.workdir).toBe(workDir);
    expect(opened.role).toBe('controller');
    // No `after`: the history comes first.
    await client.next('history', () => true, from);
    expect(({} as Record<string, unknown>).session_id).toBeUndefined();
  });
});

describe('approval answers that are not pending (CH-4, CH-10)', () => {
  const steps = (): ScriptedStep[] => [gateCall('needs ok', 'risky'), { text: 'approved and done' }];

  async function asking(kind: Kind, address: ServerAddress, open: Record<string, unknown> = {}) {
    const { client, sessionId } = await openSession(kind, address, open);
    const from = client.events.length;
    client.send({ type: 'prompt', session_id: sessionId, content: 'do the risky thing' });
    const request = await client.next('approval_request', () => true, from);
    return { client, sessionId, request };
  }

  async function approveAndFinish(
    client: Client,
    requestId: string,
    gate: GateTool,
  ): Promise<Extract<ServerEvent, { type: 'approval_resolved' }>> {
    const from = client.events.length;
    client.send({ type: 'approval_response', request_id: requestId, decision: 'allow_once' });
    const resolved = await client.next('approval_resolved', (event) => event.request_id === requestId, from);
    await gate.whenStarted();
    gate.release();
    const done = await client.next('task_completed', () => true, from);
    expect(done.content).toBe('approved and done');
    return resolved;
  }

  it.each(kinds)('%s: an unknown request id → approval_not_pending; the real request is still answerable', async (kind) => {
    const gate = new GateTool('risky', 'dangerous');
    const { address } = await start({ steps: steps(), tools: [gate.tool] });
    const watcher = await bystander(otherKind(kind), address);
    const { client, sessionId, request } = await asking(kind, address);
    for (const requestId of ['no-such-request', `${request.request_id}x`, request.request_id.toUpperCase()]) {
      if (requestId === request.request_id) continue;
      const from = client.events.length;
      client.send({ type: 'approval_response', request_id: requestId, decision: 'allow_once' });
      await ping(client);
      expect(replies(client, from), requestId).toEqual(['error(approval_not_pending)', 'pong']);
      expect(errorsSince(client, from)[0]).toMatchObject({ session_id: sessionId, request_id: requestId });
    }
    expect(gate.started).toEqual([]);
    const resolved = await approveAndFinish(client, request.request_id, gate);
    expect(resolved.decision).toBe('allow_once');
    expect(gate.started).toEqual(['needs ok']);
    await watcher.check();
  });

  it.each(kinds)('%s: an answer to a request already answered → approval_not_pending; the first answer stands', async (kind) => {
    const gate = new GateTool('risky', 'dangerous');
    const { address } = await start({ steps: steps(), tools: [gate.tool] });
    const watcher = await bystander(otherKind(kind), address);
    const { client, request } = await asking(kind, address);
    await approveAndFinish(client, request.request_id, gate);
    for (const decision of ['deny', 'allow_once'] as const) {
      const from = client.events.length;
      client.send({ type: 'approval_response', request_id: request.request_id, decision });
      await ping(client);
      expect(replies(client, from), decision).toEqual(['error(approval_not_pending)', 'pong']);
    }
    expect(client.of('approval_resolved').map((event) => event.decision)).toEqual(['allow_once']);
    expect(gate.started).toEqual(['needs ok']);
    await watcher.check();
  });

  it.each(kinds)('%s: session A\'s request answered on session B (another connection) → approval_not_pending', async (kind) => {
    const gate = new GateTool('risky', 'dangerous');
    const { address } = await start({ steps: steps(), tools: [gate.tool] });
    const watcher = await bystander(otherKind(kind), address);
    const { client, request } = await asking(kind, address, { session_id: 'session-a' });
    const { client: intruder, sessionId: b } = await openSession(otherKind(kind), address, { session_id: 'session-b' });
    const from = intruder.events.length;
    intruder.send({ type: 'approval_response', session_id: b, request_id: request.request_id, decision: 'deny' });
    await ping(intruder);
    expect(replies(intruder, from)).toEqual(['error(approval_not_pending)', 'pong']);
    expect(errorsSince(intruder, from)[0]).toMatchObject({ session_id: b, request_id: request.request_id });
    // Without session_id: B is its only session, the same answer.
    const bare = intruder.events.length;
    intruder.send({ type: 'approval_response', request_id: request.request_id, decision: 'deny' });
    await ping(intruder);
    expect(replies(intruder, bare)).toEqual(['error(approval_not_pending)', 'pong']);
    // And naming A, which this connection has not open.
    const named = intruder.events.length;
    intruder.send({ type: 'approval_response', session_id: 'session-a', request_id: request.request_id, decision: 'deny' });
    await ping(intruder);
    expect(replies(intruder, named)).toEqual(['error(session_not_open)', 'pong']);
    expect(client.of('approval_resolved')).toEqual([]);
    const resolved = await approveAndFinish(client, request.request_id, gate);
    expect(resolved).toMatchObject({ decision: 'allow_once', session_id: 'session-a' });
    expect(resolved.by).toMatch(new RegExp(`^${kind}-\\d+$`));
    await watcher.check();
  });

  it.each(kinds)('%s: session A\'s request answered on session B of the same connection → approval_not_pending', async (kind) => {
    const gate = new GateTool('risky', 'dangerous');
    const { address } = await start({ steps: steps(), tools: [gate.tool] });
    const watcher = await bystander(otherKind(kind), address);
    const { client, request } = await asking(kind, address, { session_id: 'session-a' });
    const opening = client.events.length;
    client.send({ type: 'open', session_id: 'session-b' });
    await client.next('session_opened', (event) => event.session_id === 'session-b', opening);
    const from = client.events.length;
    client.send({ type: 'approval_response', session_id: 'session-b', request_id: request.request_id, decision: 'deny' });
    await ping(client);
    expect(replies(client, from)).toEqual(['error(approval_not_pending)', 'pong']);
    // With two sessions open, an answer must say which.
    const bare = client.events.length;
    client.send({ type: 'approval_response', request_id: request.request_id, decision: 'deny' });
    await ping(client);
    expect(replies(client, bare)).toEqual(['error(session_required)', 'pong']);
    const answer = client.events.length;
    client.send({ type: 'approval_response', session_id: 'session-a', request_id: request.request_id, decision: 'allow_once' });
    await client.next('approval_resolved', (event) => event.request_id === request.request_id, answer);
    await gate.whenStarted();
    gate.release();
    expect((await client.next('task_completed', () => true, answer)).content).toBe('approved and done');
    await watcher.check();
  });

  it.each(kinds)('%s: an observer\'s answer → approval_not_pending; the controller\'s still counts', async (kind) => {
    const gate = new GateTool('risky', 'dangerous');
    const { address } = await start({ steps: steps(), tools: [gate.tool] });
    const { client, sessionId, request } = await asking(kind, address);
    const { client: observer } = await openSession(otherKind(kind), address, { session_id: sessionId, role: 'observer' });
    const opened = observer.of('session_opened')[0];
    expect(opened?.pending_approvals.map((pending) => pending.request_id)).toEqual([request.request_id]);
    const from = observer.events.length;
    observer.send({ type: 'approval_response', request_id: request.request_id, decision: 'deny' });
    await ping(observer);
    expect(replies(observer, from)).toEqual(['error(approval_not_pending)', 'pong']);
    const resolved = await approveAndFinish(client, request.request_id, gate);
    expect(resolved.decision).toBe('allow_once');
    await observer.next('approval_resolved', (event) => event.request_id === request.request_id);
  });
});

describe('interrupt and close (CH-4, CH-11)', () => {
  it.each(kinds)('%s: interrupt with nothing running → not_running; with no session → no_session', async (kind) => {
    const { address, provider } = await start();
    const watcher = await bystander(otherKind(kind), address);
    const lonely = await authed(kind, address);
    expect(await probe(lonely, JSON.stringify({ type: 'interrupt' }))).toEqual(['error(no_session)', 'pong']);
    const { client, sessionId } = await openSession(kind, address);
    const from = client.events.length;
    expect(await probe(client, JSON.stringify({ type: 'interrupt' }))).toEqual(['error(not_running)', 'pong']);
    expect(await probe(client, JSON.stringify({ type: 'interrupt', session_id: sessionId }))).toEqual(['error(not_running)', 'pong']);
    expect(await probe(client, JSON.stringify({ type: 'interrupt', session_id: 'not-mine' }))).toEqual(['error(session_not_open)', 'pong']);
    expect(errorsSince(client, from)[0]).toMatchObject({ session_id: sessionId });
    expect(client.of('task_canceled')).toEqual([]);
    expect(provider.calls).toHaveLength(0);
    await watcher.check();
  });

  it.each(kinds)('%s: close, then prompt on that session → session_not_open; nothing runs', async (kind) => {
    const { address, provider } = await start();
    const watcher = await bystander(otherKind(kind), address);
    const { client, sessionId } = await openSession(kind, address);
    const from = client.events.length;
    client.send({ type: 'close', session_id: sessionId });
    const closed = await client.next('session_closed', () => true, from);
    expect(closed).toEqual({ type: 'session_closed', session_id: sessionId, ended: false });
    const prompted = client.events.length;
    expect(await probe(client, JSON.stringify({ type: 'prompt', session_id: sessionId, content: 'hi' }))).toEqual([
      'error(session_not_open)',
      'pong',
    ]);
    expect(errorsSince(client, prompted)[0]).toMatchObject({ session_id: sessionId });
    expect(await probe(client, JSON.stringify({ type: 'interrupt' }))).toEqual(['error(no_session)', 'pong']);
    expect(await probe(client, JSON.stringify({ type: 'close', session_id: sessionId }))).toEqual(['error(session_not_open)', 'pong']);
    expect(await probe(client, JSON.stringify({ type: 'close' }))).toEqual(['error(no_session)', 'pong']);
    expect(client.of('task_started')).toEqual([]);
    expect(provider.calls).toHaveLength(0);
    await watcher.check();
  });
});

describe('floods (CH-3, CH-4)', () => {
  it.each(kinds)('%s: a burst of 1,000 pings gets 1,000 pongs, in order with the other answers', async (kind) => {
    const { address } = await start();
    const watcher = await bystander(otherKind(kind), address);
    const client = await authed(kind, address);
    const from = client.events.length;
    const messages = Array.from({ length: 1000 }, (_, index) =>
      index === 500 ? '{"type":' : index === 750 ? '{"type":"interrupt"}' : '{"type":"ping"}',
    );
    if (client instanceof TcpClient) client.write(`${messages.join('\n')}\n`);
    else for (const message of messages) client.send(message);
    client.send({ type: 'ping' });
    const expected = messages.map((message, index) =>
      index === 500 ? 'error(invalid_json)' : index === 750 ? 'error(no_session)' : 'pong',
    );
    await client.waitFor(
      () => (replies(client, from).length >= expected.length + 1 ? true : undefined),
      'every answer',
      10_000,
    );
    expect(replies(client, from)).toEqual([...expected, 'pong']);
    expect(client.invalid).toEqual([]);
    expect(client.closed).toBe(false);
    await watcher.check();
  });
});

describe('WebSocket frames (CH-1)', () => {
  it('ws: a binary frame → binary_not_supported, the connection goes on', async () => {
    const { address, provider } = await start();
    const watcher = await bystander('tcp', address);
    const client = (await authed('ws', address)) as WsClient;
    const from = client.events.length;
    client.ws.send(Buffer.from(JSON.stringify({ type: 'prompt', content: 'hi' })));
    client.ws.send(Buffer.from([0xff, 0x00, 0x01]));
    await ping(client);
    expect(replies(client, from)).toEqual(['error(binary_not_supported)', 'error(binary_not_supported)', 'pong']);
    expect(provider.calls).toHaveLength(0);
    expect(client.closed).toBe(false);
    await watcher.check();
  });
});

describe('WebSocket text that is not UTF-8 (CH-1)', () => {
  it('ws: a text frame with invalid UTF-8 closes that socket with 1007; other connections go on', async () => {
    const { address } = await start();
    const watcher = await bystander('tcp', address);
    const client = (await authed('ws', address)) as WsClient;
    client.ws.send(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]), { binary: false });
    await client.whenClosed();
    expect(client.closeCode).toBe(1007);
    await watcher.check();
    const again = await authed('ws', address);
    await ping(again);
  });
});

describe('messages before hello (CH-8)', () => {
  const beforeHello: Array<[string, string]> = [
    ['open', '{"type":"open"}'],
    ['prompt', '{"type":"prompt","content":"hi"}'],
    ['interrupt', '{"type":"interrupt"}'],
    ['approval_response', '{"type":"approval_response","request_id":"approval-1","decision":"allow_once"}'],
    ['close', '{"type":"close"}'],
    ['ping', '{"type":"ping"}'],
    ['an unknown type', '{"type":"shutdown"}'],
    ['a bad field', '{"type":"prompt"}'],
    ['invalid JSON', '{"type":'],
    ['a hello without its token', '{"type":"hello","protocol":1}'],
    // Within the default 1 MiB limit; a server that cannot describe it must still refuse it.
    ['a type nested 100,000 deep', `{"type":${'['.repeat(100_000)}${']'.repeat(100_000)}}`],
  ];

  describe.each(kinds)('%s', (kind) => {
    it.each(beforeHello)('%s → unauthorized, then closed; nothing opens or runs', async (_name, raw) => {
      const { address, provider, server } = await start();
      const watcher = await bystander(otherKind(kind), address);
      const loaded = server.loadedSessions;
      const client = await connect(kind, address);
      client.send(raw);
      // Whatever follows on the same connection is not read.
      client.send('{"type":"hello","token":"test-token-0123456789abcdef","protocol":1}');
      client.send('{"type":"prompt","content":"hi"}');
      await client.whenClosed();
      expect(client.events.map((event) => (event.type === 'error' ? `error(${event.code})` : event.type))).toEqual([
        'error(unauthorized)',
      ]);
      if (client instanceof WsClient) expect(client.closeCode).toBe(4001);
      expect(provider.calls).toHaveLength(0);
      expect(server.loadedSessions).toBe(loaded);
      await watcher.check();
    });
  });

  it('tcp: an over-long line or invalid UTF-8 before hello → unauthorized, then closed', async () => {
    const { address } = await start({ limits: { maxMessageBytes: 1024 } });
    const watcher = await bystander('ws', address);
    for (const bytes of [Buffer.from(`${'x'.repeat(2000)}\n`), Buffer.from([0x7b, 0xff, 0x7d, 0x0a])]) {
      const client = await TcpClient.connect(address.tcp);
      client.write(bytes);
      await client.whenClosed();
      expect(client.events.map((event) => (event.type === 'error' ? event.code : event.type))).toEqual(['unauthorized']);
    }
    await watcher.check();
  });

  it('ws: a binary frame before hello → unauthorized, close 4001', async () => {
    const { address } = await start();
    const watcher = await bystander('tcp', address);
    const client = await WsClient.connect(address.http);
    client.ws.send(Buffer.from('{"type":"hello"}'));
    await client.whenClosed();
    expect(client.events.map((event) => (event.type === 'error' ? event.code : event.type))).toEqual(['unauthorized']);
    expect(client.closeCode).toBe(4001);
    await watcher.check();
  });
});
