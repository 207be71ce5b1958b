import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RuntimeFactory, WorkspaceSessions } from '@claw/runtime';
import { plainCommandSpawner } from '@claw/sandbox';
import { ManualClock, ScriptedProvider } from '@claw/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ServerSessions } from '../src/sessions.js';
import {
  GateTool,
  TcpClient,
  WsClient,
  cleanUp,
  gateCall,
  openSession,
  settings,
  startServer,
  token,
  workspace,
} from './helpers.js';

afterEach(cleanUp);

/** Waits (at most 5 s) until `check` holds: for what the server does in the background. */
async function waitUntil(check: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 5000; !check();) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('claw-server sessions (CH-6, CH-8 to CH-11)', () => {
  it.each(['tcp', 'ws'] as const)('%s: the seed flow: a bare prompt opens a session and runs', async (kind) => {
    const { address } = await startServer({ steps: [{ text: 'hello there' }] });
    const client = kind === 'tcp' ? await TcpClient.connect(address.tcp) : await WsClient.connect(address.http);
    const welcome = await client.hello();
    expect(welcome).toMatchObject({ type: 'welcome', protocol: 1, server: { name: 'claw-server' }, sessions: [] });
    client.send({ type: 'prompt', content: 'hi' });
    const opened = await client.next('session_opened');
    expect(opened.session_id).toBe(`${kind}-channel-session-1`);
    const done = await client.next('task_completed');
    expect(done.content).toBe('hello there');
    expect(client.invalid).toEqual([]);
    // Every session event is numbered in order, without gaps.
    const seqs = client.events.flatMap((event) => ('seq' in event && 'at' in event ? [event.seq] : []));
    expect(seqs).toEqual(seqs.map((_, index) => index + 1));
  });

  it('a stored session it cannot read keeps its id from new sessions, and the operator is told once', async () => {
    const workDir = await workspace();
    const folder = join(workDir, '.claw', 'sessions');
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'tcp-channel-session-1.jsonl'), 'scribbled over\n');
    const told: Array<[string, string, string]> = [];
    const { address } = await startServer({
      steps: [{ text: 'a fresh session' }],
      factory: { sessions: new WorkspaceSessions() },
      server: {
        workspaces: [workDir],
        onUnreadableSession: (session, dir) => told.push([session.id, dir, session.reason]),
      },
    });
    const { client, sessionId } = await openSession('tcp', address);
    expect(sessionId).toBe('tcp-channel-session-2');
    client.send({ type: 'prompt', content: 'hi' });
    expect((await client.next('task_completed')).content).toBe('a fresh session');
    // The welcome of a later client lists the stored sessions again, and names the damaged one
    // apart, with why; the operator is not told again.
    const later = await WsClient.connect(address.http);
    const welcome = await later.hello();
    expect(welcome.type === 'welcome' ? welcome.sessions.map((session) => session.session_id) : []).toEqual([sessionId]);
    const reason = expect.stringContaining('tcp-channel-session-1.jsonl is corrupt at line 1') as unknown;
    expect(welcome).toMatchObject({ unreadable_sessions: [{ session_id: 'tcp-channel-session-1', reason }] });
    expect(told).toEqual([['tcp-channel-session-1', workDir, reason]]);
    // So does the listing the console reads between welcomes.
    const listed = await fetch(`http://127.0.0.1:${address.http}/api/sessions`, { headers: { Authorization: `Bearer ${token}` } });
    expect(await listed.json()).toMatchObject({
      sessions: [{ session_id: sessionId }],
      unreadable_sessions: [{ session_id: 'tcp-channel-session-1', reason }],
    });
  });

  it('start-up reads the sessions once; a listing every few seconds tells the operator of a damaged session once, and again once it broke again', async () => {
    const workDir = await workspace();
    const damaged = join(workDir, '.claw', 'sessions', 'broken.jsonl');
    await mkdir(join(workDir, '.claw', 'sessions'), { recursive: true });
    await writeFile(damaged, 'scribbled over\n');
    const factory = new RuntimeFactory({
      settings: settings(),
      provider: new ScriptedProvider([]),
      spawner: plainCommandSpawner(),
      sessions: new WorkspaceSessions(),
    });
    const told: string[] = [];
    const sessions = new ServerSessions({
      factory,
      workspaces: [workDir],
      idleTimeoutMs: 60_000,
      onUnreadable: (session) => told.push(session.id),
    });
    const listings = vi.spyOn(factory, 'listSessions');
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      await sessions.init();
      expect((await sessions.unreadableSessions()).map((session) => session.session_id)).toEqual(['broken']);
      // Start-up's listing serves the first welcomes: the folder was read once.
      expect(listings).toHaveBeenCalledTimes(1);
      // Past the listing's lifetime: each call reads the folder again.
      vi.setSystemTime(Date.now() + 5_000);
      expect((await sessions.unreadableSessions()).map((session) => session.session_id)).toEqual(['broken']);
      expect(told).toEqual(['broken']);
      await rm(damaged);
      vi.setSystemTime(Date.now() + 5_000);
      expect(await sessions.unreadableSessions()).toEqual([]);
      // Damaged again later: that is news again.
      await writeFile(damaged, 'scribbled over again\n');
      vi.setSystemTime(Date.now() + 5_000);
      expect((await sessions.unreadableSessions()).map((session) => session.session_id)).toEqual(['broken']);
      expect(told).toEqual(['broken', 'broken']);
    } finally {
      vi.useRealTimers();
      await factory.close();
    }
  });

  it('TCP and WebSocket clients share one set of sessions: welcome lists them, one opens the other\'s', async () => {
    const { address } = await startServer({ steps: [{ text: 'one' }] });
    const { client: tcp, sessionId } = await openSession('tcp', address, { session_id: 'shared' });
    tcp.send({ type: 'prompt', content: 'go\nand more' });
    await tcp.next('task_completed');
    const ws = await WsClient.connect(address.http);
    const welcome = await ws.hello();
    expect(welcome.type === 'welcome' ? welcome.sessions.map((session) => session.session_id) : []).toContain(sessionId);
    // Listed with its title: the first line of its first prompt.
    const listed = welcome.type === 'welcome' ? welcome.sessions.find((session) => session.session_id === sessionId) : undefined;
    expect(listed?.title).toBe('go');
    ws.send({ type: 'open', session_id: sessionId });
    const history = await ws.next('history');
    expect(history.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
  });

  it('a task keeps running when its only client disconnects; reopening shows how it ended', async () => {
    const gate = new GateTool();
    const { address } = await startServer({ steps: [gateCall('slow'), { text: 'finished' }], tools: [gate.tool] });
    const { client, sessionId } = await openSession('ws', address);
    client.send({ type: 'prompt', content: 'go' });
    await gate.whenStarted();
    const seen = client.events.length;
    (client as WsClient).ws.terminate();
    await client.whenClosed();
    gate.release();
    const again = await WsClient.connect(address.http);
    await again.hello();
    const lastSeq = Math.max(...client.events.slice(0, seen).flatMap((event) => ('seq' in event && 'at' in event ? [event.seq] : [0])));
    again.send({ type: 'open', session_id: sessionId, after: lastSeq });
    const completed = await again.next('task_completed');
    expect(completed.content).toBe('finished');
    expect(gate.canceled).toEqual([]);
  });

  it('idle sessions are unloaded after --idle-timeout-ms and their pending approvals denied (CH-10)', async () => {
    const gate = new GateTool('risky', 'dangerous');
    // The idle time is the test's to move: nothing here depends on how fast the machine is.
    const clock = new ManualClock();
    const idleTimeoutMs = 60_000;
    const { address, server } = await startServer({
      steps: [gateCall('needs ok', 'risky'), { text: 'after the answer' }],
      tools: [gate.tool],
      server: { idleTimeoutMs, setTimer: clock.setTimer },
    });
    const { client, sessionId } = await openSession('tcp', address);
    client.send({ type: 'prompt', content: 'go' });
    const request = await client.next('approval_request');
    expect(clock.pending).toEqual([]);
    (client as TcpClient).socket.destroy();
    await client.whenClosed();
    // Its last client left: the idle time starts (and a connection that did not open the
    // session does not count as watching it).
    await waitUntil(() => clock.pending.length === 1, 'the idle timer to start');
    expect(clock.pending).toEqual([{ at: clock.time + idleTimeoutMs, ms: idleTimeoutMs }]);
    // All but the last moment of the idle time: still loaded, the question still pending.
    clock.advance(idleTimeoutMs - 1);
    expect(server.loadedSessions).toBe(1);
    const observer = await TcpClient.connect(address.tcp);
    const welcome = await observer.hello();
    const listed = welcome.type === 'welcome' ? welcome.sessions.find((session) => session.session_id === sessionId) : undefined;
    expect(listed?.state).toBe('awaiting_approval');
    expect(clock.pending).toHaveLength(1);
    observer.socket.destroy();
    await observer.whenClosed();
    // The idle time runs out: the question is denied, the task ends, and the session is unloaded.
    clock.advance(1);
    await waitUntil(() => server.loadedSessions === 0, 'the session to be unloaded');
    expect(gate.started).toEqual([]);
    const back = await TcpClient.connect(address.tcp);
    await back.hello();
    back.send({ type: 'open', session_id: sessionId, after: request.seq });
    const resolved = await back.next('approval_resolved', (event) => event.request_id === request.request_id);
    expect(resolved).toMatchObject({ decision: 'deny', by: 'claw-server (idle timeout)' });
    const result = await back.next('tool_result');
    expect(result.is_error).toBe(true);
    expect(result.result).toContain('nobody was connected to answer it: no client watched this session for 1 min');
    await back.next('task_completed');
  });
});
