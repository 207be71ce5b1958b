import { ClawError, type SessionEvent, type TaskToolProgress } from '@claw/core';
import { MemoryRelay } from '@claw/session-store';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CursorExpiredError,
  type RemoteSession,
  SessionBusyError,
  SubscriberLaggedError,
  relayHandler,
} from '../src/index.js';
import {
  HeldRelay,
  cleanUp,
  eventually,
  followSession,
  isTaskEnd,
  progressSteps,
  scriptedFactory,
  sessionsIn,
  take,
  tempWorkspace,
  until,
} from './helpers.js';

const opened: Array<{ close: () => Promise<void> }> = [];

afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((closable) => closable.close()));
  await cleanUp();
});

const chunks = (count: number) => Array.from({ length: count }, (_, index) => `w${index} `);

/** Follows session `s` through `relay`, as a process that does not own it would. */
async function follow(relay: MemoryRelay, workDir: string): Promise<RemoteSession> {
  const remote = await followSession(relay, workDir);
  opened.push(remote);
  return remote;
}

describe('RemoteSession after a takeover (SCALE-3, SCALE-4)', () => {
  it('its clients get every event of the runtime here, once and in order, when it falls behind', async () => {
    const workDir = await tempWorkspace();
    const relay = new MemoryRelay();
    // Two unread events end a subscriber of the runtime's log: the follower falls behind at once.
    const { factory } = scriptedFactory([{ textChunks: chunks(40) }], {
      sessions: sessionsIn(relay),
      subscriberBound: { maxEvents: 2 },
    });
    const remote = await follow(relay, workDir);
    const local = await factory.createRuntime({ workDir, sessionId: 's' });
    remote.adopt(local);
    const client = remote.events.events({
      after: remote.events.lastSeq,
      bound: { maxEvents: 100_000 },
    });
    const ran = local.events({ after: 0, bound: { maxEvents: 100_000 } });

    await remote.start('count', 'client');
    const expected = await until(ran, isTaskEnd);
    const last = expected.at(-1)?.seq ?? 0;
    await eventually(() => remote.events.lastSeq >= last, 'the follower to have every event');
    const seen: SessionEvent[] = await take(client, expected.length);
    expect(seen.map((event) => event.seq)).toEqual(expected.map((event) => event.seq));
    expect(seen).toEqual(expected);
    expect(seen.at(-1)).toMatchObject({ type: 'task_completed' });
  });

  it('tells its clients when the runtime here no longer keeps what they missed (cursor_expired)', async () => {
    const workDir = await tempWorkspace();
    const relay = new HeldRelay();
    // The runtime here keeps its last two events only.
    const { factory } = scriptedFactory([{ text: 'first' }, { textChunks: chunks(40) }], {
      sessions: sessionsIn(relay),
      eventRetention: { maxEvents: 2 },
    });
    const remote = await follow(relay, workDir);
    const local = await factory.createRuntime({ workDir, sessionId: 's' });
    // A client that reads as a channel connection does: back from its cursor when it lagged.
    const seen: SessionEvent[] = [];
    const reading = (async () => {
      let cursor = remote.events.lastSeq;
      for (;;) {
        try {
          for await (const event of remote.events.events({ after: cursor, bound: { maxEvents: 100_000 } })) {
            seen.push(event);
            cursor = event.seq;
          }
          return undefined;
        } catch (error) {
          if (error instanceof SubscriberLaggedError) {
            cursor = error.lastSeq;
            continue;
          }
          return error;
        }
      }
    })();
    // The first task reaches the client through the shared log, every event of it.
    const first = await local.start('first').wait();
    expect(first.status).toBe('completed');
    const firstEnd = local.snapshot().seq;
    await eventually(() => seen.length === firstEnd, 'the client to have the first task');
    // Then the follower reads nothing more (the store is slow, say) while the runtime here runs a
    // second task, and keeps only its last two events; only then does the follower take it over.
    relay.held = true;
    await local.start('count').wait();
    const expected = local.cursorError(firstEnd);
    expect(expected).toBeInstanceOf(CursorExpiredError);
    remote.adopt(local);
    const told = await reading;
    // The client got the first task exactly once, in order, then was told where it can go on
    // from: never a silent jump over what the runtime here no longer keeps.
    expect(seen.map((event) => event.seq)).toEqual(Array.from({ length: firstEnd }, (_, index) => index + 1));
    expect(seen.at(-1)).toMatchObject({ type: 'state', state: 'idle' });
    expect(told).toBeInstanceOf(CursorExpiredError);
    expect(told).toMatchObject({ code: 'cursor_expired', cursor: firstEnd, oldestSeq: expected?.oldestSeq });
    expect((told as CursorExpiredError).oldestSeq).toBeGreaterThan(firstEnd + 1);
    // Where it is told to go on from can be served.
    const oldest = (told as CursorExpiredError).oldestSeq;
    const [resumed] = await take(remote.events.events({ after: oldest - 1 }), 1);
    expect(resumed?.seq).toBe(oldest);
  });

  it('answers a cancel on an idle session as the owner does: not_running', async () => {
    const workDir = await tempWorkspace();
    const relay = new MemoryRelay();
    const { factory } = scriptedFactory([], { sessions: sessionsIn(relay) });
    const owner = await factory.createRuntime({ workDir, sessionId: 's' });
    const stopServing = relay.serve('s', relayHandler(owner));
    opened.push({ close: () => Promise.resolve(stopServing()) });
    const remote = await follow(relay, workDir);

    const throughOwner = await remote.cancel('stop', 'client').then(() => 'canceled', (e: unknown) => e);
    remote.adopt(owner);
    const here = await remote.cancel('stop', 'client').then(() => 'canceled', (e: unknown) => e);

    expect(throughOwner).toBeInstanceOf(ClawError);
    expect(throughOwner).toMatchObject({ code: 'not_running' });
    expect(here).toBeInstanceOf(ClawError);
    expect(here).toMatchObject({
      code: 'not_running',
      message: (throughOwner as Error).message,
    });
  });

  it('refuses a prompt while a task runs with session_busy naming that task, after the takeover', async () => {
    const workDir = await tempWorkspace();
    const relay = new MemoryRelay();
    const { factory } = scriptedFactory([{ textChunks: chunks(200), chunkDelayMs: 10 }], {
      sessions: sessionsIn(relay),
    });
    const remote = await follow(relay, workDir);
    const local = await factory.createRuntime({ workDir, sessionId: 's' });
    remote.adopt(local);
    const running = await remote.start('long', 'client');

    const refused = await remote.start('another', 'client').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SessionBusyError);
    expect(refused).toMatchObject({ code: 'session_busy', taskId: running.id });
    await remote.cancel('enough', 'client');
    await local.idle();
  });

  it('tells its clients the progress the owner relays; after the takeover the runtime here\'s, and no longer the relay\'s', async () => {
    const workDir = await tempWorkspace();
    const relay = new MemoryRelay();
    const { factory } = scriptedFactory(
      [{ toolCalls: [{ id: 'c1', name: 'steps', arguments: {} }] }, { text: 'done' }],
      { tools: [progressSteps(2)], sessions: sessionsIn(relay) },
    );
    const remote = await follow(relay, workDir);
    const heard: TaskToolProgress[] = [];
    const stop = remote.onToolProgress((progress) => heard.push(progress));
    const relayed = { taskId: 'task-1', toolCallId: 'c0', toolName: 'bash', progress: 5000, message: 'running for 5s' };
    relay.publishProgress('s', relayed);
    expect(heard).toEqual([relayed]);

    const local = await factory.createRuntime({ workDir, sessionId: 's' });
    remote.adopt(local);
    // Whatever the relay still brings (this process's own reports come back to it) is not told twice.
    relay.publishProgress('s', { ...relayed, progress: 10_000 });
    const task = await remote.start('step through', 'client');
    await local.idle();
    expect(heard).toEqual([
      relayed,
      ...[1, 2].map((step) => ({ taskId: task.id, toolCallId: 'c1', toolName: 'steps', progress: step, total: 2, message: `step ${step}` })),
    ]);

    stop();
    relay.publishProgress('s', relayed);
    expect(heard).toHaveLength(3);
  });
});
