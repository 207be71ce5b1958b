import { ClawError } from '@claw/core';
import { afterEach, describe, expect, it } from 'vitest';
import { isSessionEndCode, sessionEndCodes } from '../src/index.js';
import { TestClient, cleanUp, factoryWith, workspace } from './helpers.js';

afterEach(cleanUp);

describe('a session the server lets go while a connection follows it (LIFE-2)', () => {
  it.each([
    ['lease_lost', new ClawError('Session "s" was taken over by another claw instance. Reopen the session to continue it.', { code: 'lease_lost' })],
    ['store_unavailable', new ClawError('connection refused', { code: 'store_unavailable' })],
    ['session_dropped', new Error('dropped by the operator')],
  ] as const)('%s: the client is told with that code, its next prompt gets it too, and open reads the session afresh', async (code, reason) => {
    const workDir = await workspace();
    const runtimes = factoryWith([{ text: 'never', delayMs: 60_000 }, { text: 'back again' }]);
    const client = new TestClient({ runtimes, workspaces: [workDir] });
    const watcher = new TestClient({ runtimes, workspaces: [workDir] });
    await client.send({ type: 'open', session_id: 's' });
    await watcher.send({ type: 'open', session_id: 's', role: 'observer' });
    await client.send({ type: 'prompt', content: 'long' });
    await client.next('thinking');

    await runtimes.closeSession('s', reason);
    // Every follower is told why its events ended, once, after the task's end.
    for (const follower of [client, watcher]) {
      const ended = await follower.next('error');
      expect(ended).toMatchObject({ code, session_id: 's' });
      expect(ended.message).toMatch(/reopen/i);
      expect(follower.of('task_canceled')).toHaveLength(1);
      expect(follower.events.indexOf(follower.of('task_canceled')[0] as never)).toBeLessThan(follower.events.indexOf(ended));
    }
    // Its next requests get the same code, not internal_error (with or without session_id).
    await client.send({ type: 'prompt', content: 'again?' });
    await client.send({ type: 'prompt', session_id: 's', content: 'again?' });
    await client.send({ type: 'interrupt' });
    expect(client.of('error').map((error) => error.code)).toEqual([code, code, code, code]);
    expect(client.of('task_started')).toHaveLength(1);

    // Opened again: the session as the store has it, and it runs.
    const from = client.events.length;
    await client.send({ type: 'open', session_id: 's' });
    const reopened = await client.next('session_opened', () => true, from);
    expect(reopened).toMatchObject({ session_id: 's', state: 'idle' });
    const history = await client.next('history', () => true, from);
    expect(history.messages.map((message) => message.content)).toContain('long');
    await client.send({ type: 'prompt', content: 'go on' });
    expect(await client.next('task_completed', () => true, from)).toMatchObject({ content: 'back again' });
    expect(client.of('error')).toHaveLength(4);
  });

  it('names the codes that end a session on the connection, and only those', () => {
    expect([...sessionEndCodes]).toEqual(['lease_lost', 'store_unavailable', 'session_dropped']);
    expect(isSessionEndCode('lease_lost')).toBe(true);
    expect(isSessionEndCode('cursor_expired')).toBe(false);
    expect(isSessionEndCode('internal_error')).toBe(false);
  });
});
