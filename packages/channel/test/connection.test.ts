import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Tool } from '@claw/core';
import { afterEach, describe, expect, it } from 'vitest';
import { parseClientMessage } from '../src/index.js';
import { TestClient, cleanUp, factoryWith, workspace, writeCall } from './helpers.js';

afterEach(cleanUp);

describe('a task driven over the channel (CH-1, CH-4)', () => {
  it('opens a session with its history, runs a prompt, and streams the session events', async () => {
    const workDir = await workspace();
    const runtimes = factoryWith([{ textChunks: ['Hi ', 'there'] }]);
    const client = new TestClient({ runtimes, workspaces: [workDir] });
    await client.send({ type: 'open', session_id: 's1' });
    await client.send({ type: 'prompt', content: 'hello' });
    const end = await client.next('task_completed');

    expect(client.events[0]).toMatchObject({ type: 'session_opened', session_id: 's1', state: 'idle', last_seq: 0, role: 'controller', workdir: workDir });
    expect(client.events[1]).toEqual({ type: 'history', session_id: 's1', seq: 0, messages: [] });
    expect(end).toMatchObject({ content: 'Hi there', session_id: 's1' });
    const session = client.events.slice(2);
    expect(session.map((event) => ('seq' in event ? event.seq : undefined))).toEqual(session.map((_, index) => index + 1));
    expect(session.map((event) => event.type)).toContain('text_delta');
  });

  it('lists the instruction files the model is given in session_opened (REAL-2), and the reasoning of a reply in the history', async () => {
    const workDir = await workspace();
    await writeFile(join(workDir, 'AGENTS.md'), 'Use pnpm.\n');
    const runtimes = factoryWith([{ reasoning: ['hm'], text: 'ok' }]);
    const first = new TestClient({ runtimes, workspaces: [workDir] });
    await first.send({ type: 'open', session_id: 's1' });
    await first.send({ type: 'prompt', content: 'hello' });
    await first.next('task_completed');
    expect(first.events[0]).toMatchObject({ type: 'session_opened', instructions: [{ path: 'AGENTS.md', bytes: 10 }] });
    expect(first.of('thinking_delta')).toMatchObject([{ content: 'hm' }]);
    const second = new TestClient({ runtimes, workspaces: [workDir] });
    await second.send({ type: 'open', session_id: 's1' });
    const history = await second.next('history');
    expect(history.messages).toEqual([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'ok', reasoning: 'hm' },
    ]);
  });

  it('compact: a controller compacts an idle session as a task; an observer and a busy session are refused (CMP-5)', async () => {
    const workDir = await workspace();
    const runtimes = factoryWith([
      { text: 'one '.padEnd(4_000, '.') },
      { text: 'two '.padEnd(4_000, '.') },
      { text: 'the summary', usage: { promptTokens: 10, completionTokens: 2 } },
      { text: 'slow', delayMs: 60_000 },
    ]);
    const client = new TestClient({ runtimes, workspaces: [workDir] });
    await client.send({ type: 'open', session_id: 's1' });
    await client.send({ type: 'prompt', content: 'first' });
    await client.next('task_completed');
    await client.send({ type: 'prompt', content: 'second' });
    await client.next('task_completed', (event) => event.content.startsWith('two'));
    await client.send({ type: 'compact', focus: 'the names' });
    const end = await client.next('task_completed', (event) => event.content.startsWith('context'));
    expect(end.content).toMatch(/^context compacted: /);
    expect(client.of('task_started').at(-1)).toMatchObject({ content: '/compact the names' });
    expect(client.of('context_compacted')).toMatchObject([{ reason: 'manual', summary: 'the summary' }]);
    // A client that opens it now is told where the conversation was compacted.
    const later = new TestClient({ runtimes, workspaces: [workDir] });
    await later.send({ type: 'open', session_id: 's1' });
    expect((await later.next('history')).compaction).toMatchObject({ up_to: 3, summary: 'the summary' });
    const watcher = new TestClient({ runtimes, workspaces: [workDir] });
    await watcher.send({ type: 'open', session_id: 's1', role: 'observer' });
    await watcher.send({ type: 'compact' });
    expect((await watcher.next('error')).code).toBe('not_controller');
    await client.send({ type: 'prompt', content: 'long' });
    await client.send({ type: 'compact' });
    expect((await client.next('error')).code).toBe('session_busy');
    await client.send({ type: 'interrupt' });
  });

  it('handles ping, interrupt and approval answers while a task runs', async () => {
    const workDir = await workspace();
    const runtimes = factoryWith([writeCall('w1'), writeCall('w2')]);
    const client = new TestClient({ runtimes, workspaces: [workDir] });
    await client.send({ type: 'prompt', content: 'write twice' });
    const opened = await client.next('session_opened');
    expect(opened.session_id).toBe('client-session-1');
    const first = await client.next('approval_request');
    await client.send({ type: 'ping' });
    expect(await client.next('pong')).toEqual({ type: 'pong' });
    await client.send({ type: 'approval_response', request_id: first.request_id, decision: 'allow_once' });
    expect(await client.next('approval_resolved')).toMatchObject({ request_id: first.request_id, decision: 'allow_once', by: 'client' });
    expect(await client.next('tool_result')).toMatchObject({ tool_call_id: 'w1', is_error: false });
    expect(await readFile(join(workDir, 'w1.txt'), 'utf8')).toBe('w1');
    await client.next('approval_request', (event) => event.request_id !== first.request_id);
    await client.send({ type: 'interrupt' });
    expect(await client.next('task_canceled')).toMatchObject({ reason: 'interrupted by client' });
    await client.send({ type: 'interrupt' });
    expect(await client.next('error')).toMatchObject({ code: 'not_running', session_id: 'client-session-1' });
  });

  it('refuses a second prompt while a task runs, and a workdir outside the workspace', async () => {
    const workDir = await workspace();
    const runtimes = factoryWith([{ text: 'slow', delayMs: 200 }]);
    const client = new TestClient({ runtimes, workspaces: [workDir] });
    await client.send({ type: 'open', workdir: '/' });
    expect(await client.next('error')).toMatchObject({ code: 'workdir_not_allowed' });
    await client.send({ type: 'open', workdir: `${workDir}-evil` });
    expect(client.of('error')[1]).toMatchObject({ code: 'workdir_not_allowed' });
    await client.send({ type: 'prompt', content: 'one' });
    await client.send({ type: 'prompt', content: 'two' });
    expect(client.of('error')[2]).toMatchObject({ code: 'session_busy' });
    await client.next('task_completed');
  });
});

describe('several clients on one session (CH-9, CH-10)', () => {
  it('fans approvals out to every controller; the first answer wins; an observer cannot answer', async () => {
    const workDir = await workspace();
    const runtimes = factoryWith([writeCall('w1'), { text: 'done' }]);
    const alice = new TestClient({ runtimes, workspaces: [workDir], name: 'alice' });
    const bob = new TestClient({ runtimes, workspaces: [workDir], name: 'bob' });
    const eve = new TestClient({ runtimes, workspaces: [workDir], name: 'eve' });
    await alice.send({ type: 'open', session_id: 'shared' });
    await bob.send({ type: 'open', session_id: 'shared' });
    await eve.send({ type: 'open', session_id: 'shared', role: 'observer' });
    await alice.send({ type: 'prompt', content: 'write' });
    const request = await bob.next('approval_request');
    expect(await alice.next('approval_request')).toEqual(request);
    expect(await eve.next('approval_request')).toEqual(request);

    await eve.send({ type: 'approval_response', request_id: request.request_id, decision: 'allow_once' });
    expect(await eve.next('error')).toMatchObject({ code: 'approval_not_pending', request_id: request.request_id });
    await bob.send({ type: 'approval_response', request_id: request.request_id, decision: 'allow_once' });
    await alice.send({ type: 'approval_response', request_id: request.request_id, decision: 'deny' });

    for (const client of [alice, bob, eve]) {
      expect(await client.next('approval_resolved')).toMatchObject({ decision: 'allow_once', by: 'bob' });
    }
    expect(await alice.next('error')).toMatchObject({ code: 'approval_not_pending', session_id: 'shared' });
    await alice.next('task_completed');
    await eve.send({ type: 'prompt', content: 'may I?' });
    expect(eve.of('error').at(-1)).toMatchObject({ code: 'not_controller' });
  });

  it('keeps a task running when its client goes; a reconnecting client gets exactly what it missed', async () => {
    const workDir = await workspace();
    const runtimes = factoryWith([{ textChunks: Array.from({ length: 40 }, (_, index) => `${index} `), chunkDelayMs: 3 }]);
    const first = new TestClient({ runtimes, workspaces: [workDir] });
    await first.send({ type: 'open', session_id: 'long' });
    await first.send({ type: 'prompt', content: 'count' });
    await first.next('text_delta');
    const seen = first.events.filter((event) => 'seq' in event);
    const cursor = (seen.at(-1) as { seq: number }).seq;
    await first.connection.close();

    const watcher = new TestClient({ runtimes, workspaces: [workDir] });
    await watcher.send({ type: 'open', session_id: 'long', role: 'observer' });
    const end = await watcher.next('task_completed');
    const again = new TestClient({ runtimes, workspaces: [workDir] });
    await again.send({ type: 'open', session_id: 'long', after: cursor });
    await again.next('task_completed');

    const replayed = again.events.filter((event) => 'seq' in event).map((event) => (event as { seq: number }).seq);
    expect(again.events[0]).toMatchObject({ type: 'session_opened', session_id: 'long' });
    expect(again.of('history')).toEqual([]);
    expect(replayed[0]).toBe(cursor + 1);
    expect(replayed).toEqual(replayed.map((_, index) => cursor + 1 + index));
    expect(replayed).toContain(end.seq);
  });

  it('refuses a cursor it cannot serve with cursor_expired and the oldest seq', async () => {
    const workDir = await workspace();
    const runtimes = factoryWith([{ text: 'short' }], { eventRetention: { maxEvents: 3 } });
    const client = new TestClient({ runtimes, workspaces: [workDir] });
    await client.send({ type: 'open', session_id: 'kept' });
    await client.send({ type: 'prompt', content: 'go' });
    await client.next('state', (event) => event.state === 'idle');
    const other = new TestClient({ runtimes, workspaces: [workDir] });
    await other.send({ type: 'open', session_id: 'kept', after: 1 });
    const expired = await other.next('error');
    expect(expired).toMatchObject({ code: 'cursor_expired', session_id: 'kept' });
    expect(expired.oldest_seq).toBeGreaterThan(2);
    expect(other.of('session_opened')).toEqual([]);
    await other.send({ type: 'open', session_id: 'kept', after: 999 });
    expect(other.of('error')[1]).toMatchObject({ code: 'cursor_expired' });
    // The connection is still usable: open without a cursor gives the history.
    await other.send({ type: 'open', session_id: 'kept' });
    expect((await other.next('history')).messages.map((message) => message.content)).toEqual(['go', 'short']);
  });

  it('close detaches; close with end also cancels the task', async () => {
    const workDir = await workspace();
    const runtimes = factoryWith([{ text: 'never', delayMs: 60_000 }]);
    const client = new TestClient({ runtimes, workspaces: [workDir] });
    const watcher = new TestClient({ runtimes, workspaces: [workDir] });
    await client.send({ type: 'prompt', content: 'wait', session_id: undefined });
    const opened = await client.next('session_opened');
    await watcher.send({ type: 'open', session_id: opened.session_id, role: 'observer' });
    await client.send({ type: 'close', end: true });
    expect(await client.next('session_closed')).toEqual({ type: 'session_closed', session_id: opened.session_id, ended: true });
    expect(await watcher.next('task_canceled')).toMatchObject({ reason: 'ended by client' });
    await client.send({ type: 'interrupt' });
    expect(client.of('error').at(-1)).toMatchObject({ code: 'no_session' });
  });
});

describe('malformed input (CH-1): an error with a code, and the connection stays usable', () => {
  it.each([
    ['a line over the size limit', `{"type":"prompt","content":"${'x'.repeat(2000)}"}`, 'message_too_large'],
    ['invalid JSON', '{"type":', 'invalid_json'],
    ['not an object', '42', 'unknown_type'],
    ['an unknown type', '{"type":"dance"}', 'unknown_type'],
    ['no type', '{"content":"x"}', 'unknown_type'],
    ['a prompt without content', '{"type":"prompt"}', 'invalid_message'],
    ['a blank prompt', '{"type":"prompt","content":"   "}', 'invalid_message'],
    ['an approval without request_id', '{"type":"approval_response","decision":"deny"}', 'invalid_message'],
    ['an unknown decision', '{"type":"approval_response","request_id":"r","decision":"maybe"}', 'invalid_message'],
    ['a negative cursor', '{"type":"open","after":-1}', 'invalid_message'],
    ['a bad role', '{"type":"open","role":"admin"}', 'invalid_message'],
    ['a hello without token', '{"type":"hello","protocol":1}', 'invalid_message'],
    ['an unknown session', '{"type":"interrupt","session_id":"nope"}', 'session_not_open'],
    ['a bad session id', '{"type":"open","session_id":"../x"}', 'invalid_session_id'],
    ['an approval with no session open', '{"type":"approval_response","request_id":"r","decision":"deny"}', 'no_session'],
  ])('%s', async (_name, line, code) => {
    const workDir = await workspace();
    const client = new TestClient({ runtimes: factoryWith([]), workspaces: [workDir], maxMessageBytes: 1024 });
    await client.send(line);
    expect(await client.next('error')).toMatchObject({ code });
    expect(client.closedWith).toBeUndefined();
    await client.send({ type: 'ping' });
    expect(await client.next('pong')).toEqual({ type: 'pong' });
  });

  it('explains each problem in words', () => {
    const problem = (line: string) => {
      const parsed = parseClientMessage(line, { maxBytes: 64 });
      return parsed.ok ? '' : parsed.message;
    };
    expect(problem(`{"type":"prompt","content":"${'é'.repeat(40)}"}`)).toMatch(/too large: \d+ bytes, the limit is 64/);
    expect(problem('{"type":"dance"}')).toMatch(/unknown message type "dance": expected one of hello, open, prompt/);
    expect(problem('{"type":"prompt"}')).toMatch(/invalid prompt message.*content/s);
  });

  it('names a bad type by its kind, never by its value (a value nested 100,000 deep)', () => {
    const problem = (line: string) => {
      const parsed = parseClientMessage(line);
      return parsed.ok ? 'ok' : `${parsed.code}: ${parsed.message}`;
    };
    const deep = 100_000;
    expect(problem(`{"type":${'['.repeat(deep)}${']'.repeat(deep)}}`)).toMatch(/^unknown_type: unknown message type \(an array\)/);
    expect(problem(`{"type":${'{"a":'.repeat(deep)}1${'}'.repeat(deep)}}`)).toMatch(/^unknown_type: unknown message type \(an object\)/);
    expect(problem('{"type":7}')).toMatch(/^unknown_type: unknown message type \(a number\)/);
    expect(problem('{}')).toMatch(/^unknown_type: unknown message type missing/);
    expect(problem(`{"type":"${'x'.repeat(500)}"}`)).toMatch(new RegExp(`^unknown_type: unknown message type "${'x'.repeat(64)}…"`));
  });
});

describe('hello and the token (CH-8)', () => {
  it('needs hello with the right token first, then welcomes with the sessions', async () => {
    const workDir = await workspace();
    const runtimes = factoryWith([]);
    const sessions = async () => [{ session_id: 'old', state: 'idle' as const, last_seq: 7, updated_at: '2030-01-01T00:00:00.000Z' }];
    const client = new TestClient({ runtimes, workspaces: [workDir], token: 'secret', sessions, server: { name: 'claw-server', version: '0.1.0' } });
    await client.send({ type: 'hello', token: 'secret', protocol: 1 });
    expect(await client.next('welcome')).toEqual({
      type: 'welcome',
      protocol: 1,
      server: { name: 'claw-server', version: '0.1.0' },
      sessions: await sessions(),
    });
    await client.send({ type: 'hello', token: 'secret', protocol: 1 });
    expect(await client.next('error')).toMatchObject({ code: 'hello_repeated' });
  });

  it('names the stored sessions that cannot be read in welcome, apart from the sessions', async () => {
    const workDir = await workspace();
    const unreadableSessions = async () => [{ session_id: 'broken', reason: 'the session file is corrupt at line 1' }];
    const client = new TestClient({ runtimes: factoryWith([]), workspaces: [workDir], token: 'secret', unreadableSessions });
    await client.send({ type: 'hello', token: 'secret', protocol: 1 });
    const welcome = await client.next('welcome');
    // The schema the events are parsed with here knows the field.
    expect(welcome).toMatchObject({ sessions: [], unreadable_sessions: await unreadableSessions() });
  });

  it.each([
    ['a wrong token', { type: 'hello', token: 'guess', protocol: 1 }],
    ['anything before hello', { type: 'open' }],
    ['a malformed first line', 'GET / HTTP/1.1'],
  ])('closes the connection on %s', async (_name, message) => {
    const workDir = await workspace();
    const client = new TestClient({ runtimes: factoryWith([]), workspaces: [workDir], token: 'secret' });
    await client.send(message);
    expect(await client.next('error')).toMatchObject({ code: 'unauthorized' });
    expect(client.closedWith).toMatchObject({ code: 'unauthorized' });
    await client.send({ type: 'hello', token: 'secret', protocol: 1 });
    expect(client.of('welcome')).toEqual([]);
  });

  it('closes a connection that sends no hello in time, and refuses another protocol', async () => {
    const workDir = await workspace();
    const silent = new TestClient({ runtimes: factoryWith([]), workspaces: [workDir], token: 'secret', helloTimeoutMs: 20 });
    await silent.connection.closed;
    expect(silent.closedWith).toMatchObject({ code: 'unauthorized' });
    expect(silent.of('error')[0]?.message).toMatch(/no hello within 20 ms/);
    const old = new TestClient({ runtimes: factoryWith([]), workspaces: [workDir], token: 'secret' });
    await old.send({ type: 'hello', token: 'secret', protocol: 2 });
    expect(await old.next('error')).toMatchObject({ code: 'unsupported_protocol' });
    expect(old.closedWith).toMatchObject({ code: 'unsupported_protocol' });
  });
});

describe('the bounded outbound queue (CH-5)', () => {
  it('closes a client that stopped reading with client_too_slow, while the run completes', async () => {
    const workDir = await workspace();
    const runtimes = factoryWith([{ textChunks: Array.from({ length: 300 }, (_, index) => `${index} `) }, { text: 'second' }]);
    // Deltas are merged first; then the queue of 4 stays full, and after 100 ms the client goes.
    const stuck = new TestClient({ runtimes, workspaces: [workDir], outbound: { maxEvents: 4, maxStallMs: 100 } });
    const healthy = new TestClient({ runtimes, workspaces: [workDir] });
    await stuck.send({ type: 'open', session_id: 'busy' });
    await healthy.send({ type: 'open', session_id: 'busy' });
    stuck.stall = new Promise(() => undefined);
    await stuck.send({ type: 'prompt', content: 'talk' });
    const end = await healthy.next('task_completed');
    expect(end.content).toContain('299 ');
    await stuck.connection.closed;
    expect(stuck.closedWith).toMatchObject({ code: 'client_too_slow' });
    expect(stuck.closedWith?.message).toMatch(/client too slow/);
    // The session goes on for the others.
    await healthy.send({ type: 'prompt', content: 'again' });
    expect((await healthy.next('task_completed', (event) => event.seq > end.seq)).content).toBe('second');
  });

  it('a backlog far larger than the queue is replayed whole to a client that reads slowly', async () => {
    const workDir = await workspace();
    const runtimes = factoryWith([{ textChunks: Array.from({ length: 500 }, (_, index) => `${index} `) }]);
    const writer = new TestClient({ runtimes, workspaces: [workDir] });
    await writer.send({ type: 'open', session_id: 'backlog' });
    await writer.send({ type: 'prompt', content: 'talk' });
    await writer.next('task_completed');
    const end = await writer.next('state', (event) => event.state === 'idle');
    // Each write takes a turn of the event loop: the queue of 8 is full most of the time.
    const reader = new TestClient({ runtimes, workspaces: [workDir], outbound: { maxEvents: 8, maxStallMs: 2000 } });
    reader.slowly = () => new Promise((resolve) => setImmediate(resolve));
    await reader.send({ type: 'open', session_id: 'backlog', after: 0 });
    await reader.next('state', (event) => event.seq === end.seq);
    expect(reader.closedWith).toBeUndefined();
    // Everything, in order: deltas may arrive merged (the queue was full), their text whole; every
    // other event once, with its seq.
    const all = writer.events.filter((event) => 'seq' in event && 'at' in event);
    const replayed = reader.events.filter((event) => 'seq' in event && 'at' in event);
    const seqs = replayed.map((event) => (event as { seq: number }).seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs.at(-1)).toBe(end.seq);
    const text = (events: typeof all) => events.map((event) => (event.type === 'text_delta' ? event.content : '')).join('');
    expect(text(replayed)).toBe(text(all));
    const others = (events: typeof all) => events.filter((event) => event.type !== 'text_delta');
    expect(others(replayed)).toEqual(others(all));
  });
});

describe('tool progress over the channel', () => {
  it('goes to every connection on the session as tool_progress, at most one a call every 250 ms, with no seq', async () => {
    const workDir = await workspace();
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow: Tool = {
      definition: { name: 'slow_job', description: 'Reports progress.', parameters: { type: 'object', properties: {} } },
      risk: 'safe',
      execute: async (_args, context) => {
        context.onProgress?.({ progress: 1, total: 3, message: 'one' });
        // Too soon after the first: not sent.
        context.onProgress?.({ progress: 2, total: 3, message: 'two' });
        await new Promise((resolve) => setTimeout(resolve, 300));
        context.onProgress?.({ progress: 3, total: 3, message: 'three' });
        await released;
        await new Promise((resolve) => setTimeout(resolve, 300));
        context.onProgress?.({ progress: 4, total: 4, message: 'four' });
        return { content: 'done' };
      },
    };
    const runtimes = factoryWith(
      [{ toolCalls: [{ id: 'j1', name: 'slow_job', arguments: {} }] }, { text: 'finished' }],
      { tools: [slow] },
    );
    const controller = new TestClient({ runtimes, workspaces: [workDir] });
    const observer = new TestClient({ runtimes, workspaces: [workDir], name: 'observer' });
    await controller.send({ type: 'open', session_id: 's1' });
    await observer.send({ type: 'open', session_id: 's1', role: 'observer' });
    await controller.send({ type: 'prompt', content: 'run the job' });
    await controller.next('tool_progress', (event) => event.progress === 3);
    await observer.next('tool_progress', (event) => event.progress === 3);
    const started = controller.of('task_started')[0];
    for (const client of [controller, observer]) {
      expect(client.of('tool_progress')).toEqual([1, 3].map((progress) => ({
        type: 'tool_progress',
        session_id: 's1',
        task_id: started?.task_id,
        tool_call_id: 'j1',
        tool_name: 'slow_job',
        progress,
        total: 3,
        message: ['one', 'two', 'three'][progress - 1],
      })));
    }
    // A connection that left the session hears no more of it.
    await observer.send({ type: 'close', session_id: 's1' });
    release();
    await controller.next('tool_progress', (event) => event.progress === 4);
    await controller.next('task_completed');
    expect(observer.of('tool_progress')).toHaveLength(2);
  });
});
