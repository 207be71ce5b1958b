import { ClawError } from '@claw/core';
import type { RunResult } from '@claw/engine';
import { MemorySessionManager, SessionStore, leaseLostCode } from '@claw/session-store';
import { watchUnhandledRejections } from '@claw/testing/node';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionEndedError, SessionEventLog, SessionHost } from '../src/index.js';
import {
  FlakyLog,
  cleanUp,
  delta,
  drain,
  heldEventSource,
  isTaskEnd,
  scriptedFactory,
  tempWorkspace,
  until,
} from './helpers.js';

afterEach(cleanUp);

describe('a session log closed with a reason (LIFE-2)', () => {
  it('ends its subscribers with the reason after the events numbered before it, and so any later subscriber', async () => {
    const session = heldEventSource();
    const log = new SessionEventLog({ session });
    const reading = drain(log.events({ after: 0 }));
    log.append(delta('one'));
    log.append(delta('two'));
    log.close(new ClawError('the database cannot be reached', { code: 'store_unavailable' }));
    // Still settling: the subscriber waits for them rather than end before them.
    session.settle();
    const { seen, ended } = await reading;
    expect(seen.map((event) => event.seq)).toEqual([1, 2]);
    expect(ended).toBeInstanceOf(SessionEndedError);
    expect(ended).toMatchObject({ code: 'store_unavailable', sessionId: 's' });
    expect((ended as Error).message).toMatch(/store cannot be used \(the database cannot be reached\)\. Reopen it/);
    expect(log.ended).toBe(ended);
    // A subscriber that comes later is told the same, after what is kept.
    const later = await drain(log.events({ after: 1 }));
    expect(later.seen.map((event) => event.seq)).toEqual([2]);
    expect(later.ended).toBe(ended);
    // Closed again (a follower's own close): the first reason stays.
    log.close();
    expect((await drain(log.events({ after: 2 }))).ended).toBe(ended);
  });

  it('a log nobody needs any more still just ends (no reason)', async () => {
    const session = heldEventSource();
    const log = new SessionEventLog({ session });
    const reading = drain(log.events({ after: 0 }));
    log.append(delta('one'));
    session.settle();
    log.close();
    expect(await reading).toEqual({ seen: [expect.objectContaining({ seq: 1 })], ended: undefined });
    expect(log.ended).toBeUndefined();
  });
});

describe('a session host let go while clients follow it (LIFE-2)', () => {
  it.each([
    ['lease_lost', new ClawError('taken over by instance b', { code: leaseLostCode })],
    ['store_unavailable', new ClawError('connection refused', { code: 'store_unavailable' })],
    ['session_dropped', new Error('an operator dropped it')],
  ] as const)('ends its followers with %s after the task\'s end; the runtimes still attached get it too; the session opens again', async (code, reason) => {
    const workDir = await tempWorkspace();
    const { factory } = scriptedFactory([{ text: 'never', delayMs: 60_000 }, { text: 'again' }]);
    const a = await factory.createRuntime({ workDir, sessionId: 's' });
    const events = a.events({ after: 0 });
    a.start('long');
    await until(events, (event) => event.type === 'thinking');

    await factory.closeSession('s', reason);
    const { seen, ended } = await drain(events);
    // Its clients see how the task ended, then why the session ended: never a silent stop.
    expect(seen.filter(isTaskEnd)).toEqual([expect.objectContaining({ type: 'task_canceled' })]);
    expect(ended).toBeInstanceOf(SessionEndedError);
    expect(ended).toMatchObject({ code, sessionId: 's' });
    expect((ended as Error).message).toMatch(/reopen/i);
    // A subscription taken now, and a start on the old host, say the same.
    expect((await drain(a.events({ after: 0 }))).ended).toMatchObject({ code });
    expect(() => a.start('on the old host')).toThrow(expect.objectContaining({ code }) as Error);
    // Opened again: read afresh from the store, and it runs.
    const b = await factory.createRuntime({ workDir, sessionId: 's' });
    expect(b.session).not.toBe(a.session);
    expect(b.session.history().map((message) => message.content)).toContain('long');
    const again = await b.start('go on').wait();
    expect(again).toMatchObject({ status: 'completed', finalText: 'again' });
    await b.close();
    await a.close().catch(() => undefined);
  });

  it('a host whose session cannot be released after its task is told through onError, never an unhandled rejection, and is idle', async () => {
    const workDir = await tempWorkspace();
    const store = new MemorySessionManager();
    const lease = await store.open('s', { workDir });
    const refused = new ClawError('the store is away', { code: 'store_unavailable' });
    const told: Array<{ error: unknown; what: string }> = [];
    let reported: () => void = () => undefined;
    const whenReported = new Promise<void>((resolve) => {
      reported = resolve;
    });
    const unhandled = watchUnhandledRejections();
    let finish: (result: RunResult) => void = () => undefined;
    const host: SessionHost = new SessionHost({
      lease: { session: lease.session, release: () => Promise.reject(refused) },
      workDir,
      runTask: () => new Promise<RunResult>((resolve) => {
        finish = resolve;
      }),
      // The task is the host's last user (its client left while it ran): giving its use back
      // lets the session go, as the factory does, which fails.
      hold: () => () => host.release(),
      onError: (error, what) => {
        told.push({ error, what });
        reported();
      },
    });
    try {
      const task = host.start('go');
      expect(host.released).toBe(false);
      finish({ status: 'completed', finalText: 'done' } as RunResult);
      await task.wait();
      await whenReported;
      expect(told).toEqual([{ error: refused, what: 'ending task task-1 of session "s"' }]);
      expect(host.state).toBe('idle');
      expect(host.activeTask).toBeUndefined();
      expect(unhandled.reasons).toEqual([]);
    } finally {
      await unhandled.stop();
      await lease.release();
    }
  });

  it('a retry of an event write that fails again is told through the host\'s onError, never thrown (LIFE-2)', async () => {
    const workDir = await tempWorkspace();
    const log = new FlakyLog();
    const store = new SessionStore({ log });
    const lease = await store.open('s', { workDir });
    const told: string[] = [];
    let reported: () => void = () => undefined;
    const whenReported = new Promise<void>((resolve) => {
      reported = resolve;
    });
    const host = new SessionHost({
      lease,
      workDir,
      runTask: () => Promise.reject(new Error('not in this test')),
      onError: (error, what) => {
        told.push(`${what}: ${(error as Error).message}`);
        reported();
      },
    });
    log.down = true;
    host.events.append({ type: 'state', state: 'idle' });
    // The write fails; its retry (after 100 ms) fails too, and says so.
    await whenReported;
    expect(told[0]).toContain('storing the events of session "s" again');
    expect(told[0]).toContain('connection refused');
    host.events.close();
    log.down = false;
    await lease.release().catch(() => undefined);
    await store.close();
  });
});
