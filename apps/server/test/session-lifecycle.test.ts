import { ClawError } from '@claw/core';
import { MemorySessionManager, type PersistentSession, type SessionLease } from '@claw/session-store';
import { ManualClock } from '@claw/testing';
import { watchUnhandledRejections } from '@claw/testing/node';
import { afterEach, describe, expect, it } from 'vitest';
import { TcpClient, WsClient, cleanUp, openSession, startServer } from './helpers.js';

afterEach(cleanUp);

/** Waits (at most 5 s) until `check` holds: for what the server does in the background. */
async function waitUntil(check: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 5000; !check();) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Sessions in memory whose store fails on request: `failing` set, a session's `flush` or its
 * lease's `release` rejects (a database that went away).
 */
function faultyStore(fault: 'flush' | 'release') {
  const store = new MemorySessionManager();
  const failure = new ClawError('the store cannot be reached (connection refused)', { code: 'store_unavailable' });
  const state = { failing: false };
  const faulty = (session: PersistentSession): PersistentSession => new Proxy(session, {
    get(target, property) {
      if (property === 'flush' && fault === 'flush' && state.failing) return () => Promise.reject(failure);
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return {
    state,
    failure,
    sessions: {
      open: async (id: string, options: { workDir: string }): Promise<SessionLease> => {
        const lease = await store.open(id, options);
        return {
          session: faulty(lease.session),
          release: () => (fault === 'release' && state.failing ? Promise.reject(failure) : lease.release()),
        };
      },
      list: () => store.list(),
    },
  };
}

describe('background work of the server never ends it (LIFE-2)', () => {
  it.each(['flush', 'release'] as const)('a store whose %s fails when an idle session is unloaded: said in the error log, and the server serves on', async (fault) => {
    const clock = new ManualClock();
    const store = faultyStore(fault);
    const lines: string[] = [];
    const { address, server } = await startServer({
      steps: [{ text: 'first' }, { text: 'second' }, { text: 'third' }],
      factory: { sessions: store.sessions },
      server: { idleTimeoutMs: 1000, setTimer: clock.setTimer, onError: (line) => lines.push(line) },
    });
    const unhandled = watchUnhandledRejections();
    try {
      const { client } = await openSession('tcp', address, { session_id: 'idle-1' });
      client.send({ type: 'prompt', content: 'go' });
      await client.next('task_completed');
      store.state.failing = true;
      (client as TcpClient).socket.destroy();
      await client.whenClosed();
      await waitUntil(() => clock.pending.length === 1, 'the idle timer to start');

      clock.advance(1000);
      await waitUntil(() => lines.length > 0, 'the failure to be said');
      expect(lines).toEqual([
        expect.stringMatching(
          /^claw-server: session "idle-1" \(.+\) could not be stored and let go after the idle timeout: the store cannot be reached \(connection refused\)$/,
        ),
      ]);
      await waitUntil(() => server.loadedSessions === 0, 'the session to be unloaded');
      expect(unhandled.reasons).toEqual([]);

      // The server goes on: new sessions run, and the one that failed opens again.
      store.state.failing = false;
      const { client: next } = await openSession('ws', address, { session_id: 'other' });
      next.send({ type: 'prompt', content: 'still there?' });
      expect(await next.next('task_completed')).toMatchObject({ content: 'second' });
      const from = next.events.length;
      next.send({ type: 'open', session_id: 'idle-1' });
      const history = await next.next('history', (event) => event.session_id === 'idle-1', from);
      expect(history.messages.map((message) => message.content)).toEqual(['go', 'first']);
      expect(unhandled.reasons).toEqual([]);
    } finally {
      await unhandled.stop();
    }
  });
});

describe('a session the server lets go while clients follow it (LIFE-2, SCALE-2)', () => {
  it.each(['tcp', 'ws'] as const)('%s: its clients are told lease_lost, their next prompt too, and open it again', async (kind) => {
    const { address, server } = await startServer({ steps: [{ text: 'never', delayMs: 60_000 }, { text: 'back again' }] });
    const { client } = await openSession(kind, address, { session_id: 'lost-1' });
    const observer = kind === 'tcp' ? await TcpClient.connect(address.tcp) : await WsClient.connect(address.http);
    await observer.hello();
    observer.send({ type: 'open', session_id: 'lost-1', role: 'observer' });
    await observer.next('session_opened');
    client.send({ type: 'prompt', content: 'long' });
    await client.next('thinking');

    const lost = new ClawError(
      'Session "lost-1" was taken over by another claw instance: this instance stopped its task and ' +
      'writes nothing more to it. Reopen the session to continue it.',
      { code: 'lease_lost' },
    );
    await server.dropSession('lost-1', lost);
    for (const follower of [client, observer]) {
      const told = await follower.next('error');
      expect(told).toMatchObject({ code: 'lease_lost', session_id: 'lost-1', message: lost.message });
    }
    const from = client.events.length;
    client.send({ type: 'prompt', content: 'again?' });
    expect(await client.next('error', () => true, from)).toMatchObject({ code: 'lease_lost', session_id: 'lost-1' });
    expect(client.of('error').map((error) => error.code)).not.toContain('internal_error');

    // Open again: read from the store (this server has it again), and it runs.
    client.send({ type: 'open', session_id: 'lost-1' });
    expect(await client.next('session_opened', () => true, from)).toMatchObject({ session_id: 'lost-1', state: 'idle' });
    client.send({ type: 'prompt', content: 'go on' });
    expect(await client.next('task_completed', () => true, from)).toMatchObject({ content: 'back again' });
  });
});
