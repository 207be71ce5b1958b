import { ClawError, type SessionEvent, type TaskToolProgress } from '@claw/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CursorExpiredError,
  RemoteSession,
  SessionBusyError,
  SubscriberLaggedError,
  relayHandler,
  type SessionSource,
} from '../src/index.js';
import {
  cleanUp,
  eventually,
  isTaskEnd,
  progressSteps,
  scriptedFactory,
  take,
  tempWorkspace,
  until,
} from './helpers.js';
import { MemoryRelay } from './memory-relay.js';

const opened: Array<{ close: () => Promise<void> }> = [];

afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((closable) => closable.close()));
  await cleanUp();
});

const chunks = (count: number) => Array.from({ length: count }, (_, index) => `w${index} `);

function sessionsOf(relay: MemoryRelay): SessionSource {
  const sessions = relay.sessionSource();
  opened.push(sessions);
  return sessions;
}

async function follow(relay: MemoryRelay, workDir: string): Promise<RemoteSession> {
  const remote = await RemoteSession.open({
    relay,
    sessionId: 's',
    workDir,
    pollMs: 10,
    onOwnerGone: () => Promise.resolve(),
  });
  opened.push(remote);
  return remote;
}

describe('RemoteSession after a takeover (SCALE-3, SCALE-4)', () => {
  it('its clients get every event of the runtime here, once and in order, when it falls behind', async () => {
    const workDir = await tempWorkspace();
    const relay = new MemoryRelay();
    // Two unread events end a subscriber of the runtime's log: the follower falls behind at once.
    const { factory } = scriptedFactory([{ textChunks: chunks(40) }], {
      sessions: sessionsOf(relay),
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
    const relay = new MemoryRelay();
    // The runtime keeps two events, and ends a subscriber two events behind.
    const { factory } = scriptedFactory([{ textChunks: chunks(40) }], {
      sessions: sessionsOf(relay),
      eventRetention: { maxEvents: 2 },
      subscriberBound: { maxEvents: 1 },
    });
    const remote = await follow(relay, workDir);
    const local = await factory.createRuntime({ workDir, sessionId: 's' });
    remote.adopt(local);
    // A client that reads as a channel connection does: back from its cursor when it lagged.
    const reading = (async () => {
      const seen: SessionEvent[] = [];
      let cursor = remote.events.lastSeq;
      for (;;) {
        try {
          for await (const event of remote.events.events({ after: cursor, bound: { maxEvents: 100_000 } })) {
            seen.push(event);
            cursor = event.seq;
            if (isTaskEnd(event)) return { seen, told: undefined };
          }
          return { seen, told: undefined };
        } catch (error) {
          if (error instanceof SubscriberLaggedError) {
            cursor = error.lastSeq;
            continue;
          }
          if (error instanceof CursorExpiredError) return { seen, told: error };
          throw error;
        }
      }
    })();
    await remote.start('count', 'client');
    await local.idle();
    const { seen, told } = await reading;
    // Exactly once, in order, up to the task's end or to where it was told what it missed.
    expect(seen.map((event) => event.seq)).toEqual(seen.map((_, index) => index + 1));
    if (told === undefined) {
      expect(seen.at(-1)).toMatchObject({ type: 'task_completed' });
    } else {
      expect(told.oldestSeq).toBeGreaterThan(seen.length + 1);
    }
  });

  it('answers a cancel on an idle session as the owner does: not_running', async () => {
    const workDir = await tempWorkspace();
    const relay = new MemoryRelay();
    const { factory } = scriptedFactory([], { sessions: sessionsOf(relay) });
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
      sessions: sessionsOf(relay),
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
      { tools: [progressSteps(2)], sessions: sessionsOf(relay) },
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
