import { ClawError, defineTool, type SessionEvent } from '@claw/core';
import {
  MemoryRelay,
  MemorySessionLog,
  MemorySessionManager,
  SessionLockedError,
  SessionStore,
  type RelayReply,
  type RelayRequest,
} from '@claw/session-store';
import { ManualClock, type ScriptedStep } from '@claw/testing';
import { watchUnhandledRejections } from '@claw/testing/node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  RemoteRuntime,
  Runtime,
  SessionLifecycle,
  type RuntimeFactoryOptions,
  type SessionLifecycleOptions,
  type SessionSource,
} from '../src/index.js';
import {
  cleanUp,
  deferred,
  eventually,
  isTaskEnd,
  nextTurn,
  scriptedFactory,
  sessionsIn,
  settings,
  tempWorkspace,
  until,
} from './helpers.js';

const lifecycles: SessionLifecycle[] = [];
const stores: SessionStore[] = [];

afterEach(async () => {
  await Promise.allSettled(lifecycles.splice(0).map((lifecycle) => lifecycle.close()));
  await cleanUp();
  await Promise.allSettled(stores.splice(0).map((store) => store.close()));
});

/** A lifecycle on a factory of scripted runtimes; closed after the test. */
function lifecycleOf(
  steps: ScriptedStep[],
  options: Omit<SessionLifecycleOptions, 'factory'> & { factory?: Partial<RuntimeFactoryOptions> } = {},
) {
  const { factory: factoryOptions, ...rest } = options;
  const { factory } = scriptedFactory(steps, factoryOptions);
  const lifecycle = new SessionLifecycle({ factory, ...rest });
  lifecycles.push(lifecycle);
  return { factory, lifecycle };
}

/** One claw instance on a shared log: its factory's sessions are stored there, and it relays. */
function instanceOn(
  log: MemoryRelay,
  steps: ScriptedStep[],
  options: Omit<SessionLifecycleOptions, 'factory' | 'relay'> = {},
) {
  return lifecycleOf(steps, {
    ...options,
    relay: { log, pollMs: 5 },
    factory: { sessions: sessionsIn(log) },
  });
}

/** Sessions in memory whose leases fail to be released while `failing` is set (a store away). */
function releaseFailing() {
  const store = new MemorySessionManager();
  const failure = new ClawError('the store cannot be reached (connection refused)', { code: 'store_unavailable' });
  const state = { failing: false };
  const sessions: SessionSource = {
    open: async (id, options) => {
      const lease = await store.open(id, options);
      return {
        session: lease.session,
        release: () => (state.failing ? Promise.reject(failure) : lease.release()),
      };
    },
    list: () => store.list(),
  };
  return { state, failure, sessions };
}

const contents = (view: { history: ReadonlyArray<{ content: string }> }) =>
  view.history.map((message) => message.content);

describe('SessionLifecycle: sessions of this process (LIFE-1)', () => {
  it('loads a session for its first client, shares it with the next, and lets it go, stored, when the last leaves', async () => {
    const workDir = await tempWorkspace();
    const log = new MemorySessionLog();
    const { lifecycle, factory } = lifecycleOf([{ text: 'hello' }], { factory: { sessions: sessionsIn(log) } });
    const first = await lifecycle.open({ workDir, sessionId: 's', id: 'one' });
    const second = await lifecycle.openLocal({ workDir, sessionId: 's', id: 'two' });
    expect(first).toBeInstanceOf(Runtime);
    expect(lifecycle.loaded).toBe(1);
    expect(factory.openSessions).toBe(1);
    expect(await second.start('hi').wait()).toMatchObject({ status: 'completed', finalText: 'hello' });
    expect(contents(first.snapshot())).toEqual(['hi', 'hello']);
    expect(await lifecycle.loadedSessions()).toEqual([
      { sessionId: 's', workDir, view: expect.objectContaining({ state: 'idle', seq: second.snapshot().seq }) as unknown },
    ]);
    // Another process cannot have it while it is open here.
    const other = new SessionStore({ log });
    stores.push(other);
    await expect(other.open('s', { workDir })).rejects.toBeInstanceOf(SessionLockedError);

    await first.close();
    expect(lifecycle.loaded).toBe(1);
    // No idle timeout: the last client's close lets the session go before it resolves.
    await second.close();
    expect(lifecycle.loaded).toBe(0);
    expect(factory.openSessions).toBe(0);
    const reopened = await other.open('s', { workDir });
    expect(contents({ history: reopened.session.history() })).toEqual(['hi', 'hello']);
    await reopened.release();
  });

  it('refuses a session another process holds when it has no relay, and keeps nothing of it', async () => {
    const workDir = await tempWorkspace();
    const log = new MemorySessionLog();
    const holder = new SessionStore({ log });
    stores.push(holder);
    const held = await holder.open('s', { workDir });
    const { lifecycle, factory } = lifecycleOf([], { factory: { sessions: sessionsIn(log) } });
    for (const opening of [lifecycle.open({ workDir, sessionId: 's' }), lifecycle.openLocal({ workDir, sessionId: 's' })]) {
      await expect(opening).rejects.toBeInstanceOf(SessionLockedError);
    }
    expect(lifecycle.loaded).toBe(0);
    expect(factory.openSessions).toBe(0);
    await held.release();
    const runtime = await lifecycle.openLocal({ workDir, sessionId: 's' });
    expect(runtime.sessionId).toBe('s');
  });
});

describe('SessionLifecycle: sessions several processes share (SCALE-3, SCALE-4)', () => {
  it('follows a session another process owns, and has that owner serve its clients\' requests', async () => {
    const workDir = await tempWorkspace();
    const shared = new MemoryRelay({ instanceId: 'a' });
    const a = instanceOn(shared, [{ text: 'from a' }]);
    const onB = shared.instance('b');
    const b = instanceOn(onB, []);
    const owner = await a.lifecycle.open({ workDir, sessionId: 's', id: 'client-a' });
    const follower = await b.lifecycle.open({ workDir, sessionId: 's', id: 'client-b' });
    expect(owner).toBeInstanceOf(Runtime);
    expect(follower).toBeInstanceOf(RemoteRuntime);
    expect(await onB.ownerOf('s')).toEqual({ instance: 'a', live: true });

    const events = follower.events({ after: follower.snapshot().seq });
    // A prompt of B's client runs on A, the owner; B's client follows it from the store.
    const started = await follower.start('hi from b');
    const seen = await until(events, isTaskEnd);
    expect(seen[0]).toMatchObject({ type: 'task_started', task_id: started.id, content: 'hi from b' });
    expect(seen.at(-1)).toMatchObject({ type: 'task_completed', task_id: started.id, content: 'from a' });
    expect(contents(owner.snapshot())).toEqual(['hi from b', 'from a']);
    expect(b.factory.openSessions).toBe(0);
    // The owner answers an interrupt with nothing running as it would its own client.
    await expect(follower.cancel('stop')).rejects.toMatchObject({ code: 'not_running' });
    // A task of B's own on the session would run where the session is not owned: refused.
    await expect(b.lifecycle.openLocal({ workDir, sessionId: 's' })).rejects.toBeInstanceOf(SessionLockedError);

    await follower.close();
    expect(b.lifecycle.loaded).toBe(0);
    expect(a.lifecycle.loaded).toBe(1);
  });

  it('takes a session over once its owner\'s lease lapses: its clients go on here, with what the owner wrote', async () => {
    const workDir = await tempWorkspace();
    const clock = new ManualClock();
    const shared = new MemoryRelay({ instanceId: 'a', now: clock.now, leaseMs: 10_000 });
    const a = instanceOn(shared, [{ text: 'from a' }]);
    const onB = shared.instance('b');
    const b = instanceOn(onB, [{ text: 'from b' }]);
    const owner = await a.lifecycle.openLocal({ workDir, sessionId: 's' });
    await owner.start('first').wait();
    const follower = await b.lifecycle.open({ workDir, sessionId: 's' });
    expect(follower).toBeInstanceOf(RemoteRuntime);
    expect(contents(follower.snapshot())).toEqual(['first', 'from a']);

    // A stops (kill -9): it no longer renews its lease, which lapses 10 s later.
    shared.freeze();
    clock.advance(9_999);
    // Polled many times meanwhile: the lease still runs, and the session stays A's.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await onB.ownerOf('s')).toEqual({ instance: 'a', live: true });
    expect(b.factory.openSessions).toBe(0);
    clock.advance(1);
    await vi.waitFor(
      async () => expect(await onB.ownerOf('s')).toEqual({ instance: 'b', live: true }),
      { timeout: 5_000, interval: 10 },
    );
    expect(b.factory.openSessions).toBe(1);

    // The same client goes on, now here: its prompt runs on B, after what A wrote.
    const events = follower.events({ after: follower.snapshot().seq });
    const started = await follower.start('second');
    const seen = await until(events, isTaskEnd);
    expect(seen.at(-1)).toMatchObject({ type: 'task_completed', task_id: started.id, content: 'from b' });
    expect(contents(follower.snapshot())).toEqual(['first', 'from a', 'second', 'from b']);
    // A task of B's own may run on it now.
    const local = await b.lifecycle.openLocal({ workDir, sessionId: 's' });
    expect(local.snapshot().seq).toBe(follower.snapshot().seq);
  });

  it('does not count a session as unwatched while another process\'s clients follow it: their heartbeats restart its idle time', async () => {
    const workDir = await tempWorkspace();
    const clock = new ManualClock();
    const shared = new MemoryRelay({ instanceId: 'a' });
    const timed = { idleTimeoutMs: 3_000, setTimer: clock.setTimer };
    const a = instanceOn(shared, [], timed);
    const b = instanceOn(shared.instance('b'), [], timed);
    const owner = await a.lifecycle.open({ workDir, sessionId: 's' });
    const follower = await b.lifecycle.open({ workDir, sessionId: 's' });
    // A's last client leaves: its idle time starts. B's clients still watch, and say so every
    // second (a third of the idle time).
    await owner.close();
    for (let second = 0; second < 6; second += 1) {
      clock.advance(1_000);
      // Each heard before the next second (they are served in turn, in memory).
      await nextTurn();
    }
    expect(a.lifecycle.loaded).toBe(1);

    // B's client leaves too: nobody watches, and A lets the session go after the idle time.
    await follower.close();
    clock.advance(2_999);
    await nextTurn();
    expect(a.lifecycle.loaded).toBe(1);
    clock.advance(1);
    await eventually(() => a.lifecycle.loaded === 0 && b.lifecycle.loaded === 0, 'both to let the session go');
    expect(await shared.ownerOf('s')).toBeUndefined();
  });

  it('stops serving other processes\' requests when the session is dropped, before its task winds down', async () => {
    const workDir = await tempWorkspace();
    const started = deferred();
    const canceled = deferred();
    const wound = deferred();
    // A tool that takes its time to stop (a process that ignores SIGTERM for a while).
    const slowToStop = defineTool({
      name: 'slow_to_stop',
      description: 'Runs until canceled, then takes a while to stop.',
      risk: 'safe',
      schema: z.object({}),
      execute: (_args, context) => new Promise<string>((_resolve, reject) => {
        context.signal.addEventListener('abort', () => {
          canceled.resolve();
          void wound.promise.then(() => reject(new Error('stopped')));
        }, { once: true });
        started.resolve();
      }),
    });
    const log = new ServingRelay({ instanceId: 'a' });
    const { lifecycle } = lifecycleOf([{ toolCalls: [{ name: 'slow_to_stop', arguments: {} }] }], {
      relay: { log },
      factory: { sessions: sessionsIn(log), tools: [slowToStop] },
    });
    try {
      const runtime = await lifecycle.openLocal({ id: 'client', sessionId: 's', workDir });
      expect(log.serving).toEqual(new Set(['s']));
      runtime.start('run it');
      await started.promise;

      // The lease was lost: another process owns the session now, and may serve it already.
      const dropping = lifecycle.dropSession('s', new ClawError('taken over', { code: 'lease_lost' }));
      await canceled.promise;
      // Its task still winds down, and this process no longer answers for the session.
      expect(log.serving).toEqual(new Set());
      expect(runtime.activeTask).toBeDefined();
      wound.resolve();
      await dropping;
      expect(runtime.activeTask).toBeUndefined();
      expect(lifecycle.loaded).toBe(0);
    } finally {
      wound.resolve();
    }
  });
});

/** A shared log in memory that says which sessions this instance serves. */
class ServingRelay extends MemoryRelay {
  readonly serving = new Set<string>();

  override serve(id: string, handle: (request: RelayRequest) => Promise<RelayReply>): () => void {
    this.serving.add(id);
    const stop = super.serve(id, handle);
    return () => {
      this.serving.delete(id);
      stop();
    };
  }
}

describe('SessionLifecycle: the idle timeout (CH-10, LIFE-2)', () => {
  const asks: ScriptedStep[] = [
    { toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: 'a.txt', content: 'x' } }] },
    { text: 'after the answer' },
  ];

  it('denies the questions of a session nobody watched for the idle time, ends its task, then lets it go', async () => {
    const workDir = await tempWorkspace();
    const clock = new ManualClock();
    const { lifecycle, factory } = lifecycleOf(asks, {
      name: 'claw-test',
      idleTimeoutMs: 60_000,
      setTimer: clock.setTimer,
      factory: { settings: settings({ approval: 'ask' }) },
    });
    const client = await lifecycle.openLocal({ workDir, sessionId: 's' });
    const events = client.events();
    const task = client.start('write');
    const asked = (await until(events, (event) => event.type === 'approval_request')).at(-1);
    expect(clock.pending).toEqual([]);
    await client.close({ cancel: false });
    // Its last client left: the idle time starts.
    expect(clock.pending).toEqual([{ at: clock.time + 60_000, ms: 60_000 }]);
    clock.advance(59_999);
    expect(lifecycle.loaded).toBe(1);

    // A client that comes back finds it as it was; when it leaves, the idle time starts afresh.
    const back = await lifecycle.open({ workDir, sessionId: 's' });
    expect(clock.pending).toEqual([]);
    expect(back.snapshot().pendingApprovals).toEqual([asked]);
    const rest = back.events({ after: back.snapshot().seq });
    await back.close();
    clock.advance(59_999);
    expect(lifecycle.loaded).toBe(1);
    clock.advance(1);
    const ended: SessionEvent[] = await until(rest, isTaskEnd);
    expect(ended[0]).toMatchObject({ type: 'approval_resolved', decision: 'deny', by: 'claw-test (idle timeout)' });
    const result = ended.find((event) => event.type === 'tool_result');
    expect(result).toMatchObject({ is_error: true });
    expect(result?.type === 'tool_result' ? result.result : '').toContain(
      'nobody was connected to answer it: no client watched this session for 1 min (claw-test\'s idle timeout)',
    );
    expect((await task.wait()).status).toBe('completed');
    await eventually(() => lifecycle.loaded === 0, 'the session to be let go');
    expect(factory.openSessions).toBe(0);
  });

  it('a session that cannot be stored when its idle time ends is let go all the same and said to onError, never thrown', async () => {
    const workDir = await tempWorkspace();
    const clock = new ManualClock();
    const store = releaseFailing();
    const told: Array<{ error: unknown; what: string }> = [];
    const { lifecycle } = lifecycleOf([{ text: 'one' }, { text: 'two' }], {
      idleTimeoutMs: 1_000,
      setTimer: clock.setTimer,
      onError: (error, what) => told.push({ error, what }),
      factory: { sessions: store.sessions },
    });
    const unhandled = watchUnhandledRejections();
    try {
      const client = await lifecycle.openLocal({ workDir, sessionId: 's' });
      await client.start('go').wait();
      store.state.failing = true;
      await client.close();
      clock.advance(1_000);
      await eventually(() => told.length > 0 && lifecycle.loaded === 0, 'the failure to be said');
      expect(told).toEqual([{
        error: store.failure,
        what: `session "s" (${workDir}) could not be stored and let go after the idle timeout`,
      }]);
      expect(unhandled.reasons).toEqual([]);

      // The lifecycle goes on: the session opens again, as the store has it.
      store.state.failing = false;
      const again = await lifecycle.openLocal({ workDir, sessionId: 's' });
      expect(contents(again.snapshot())).toEqual(['go', 'one']);
      expect(unhandled.reasons).toEqual([]);
    } finally {
      await unhandled.stop();
    }
  });
});

describe('SessionLifecycle: shutdown', () => {
  it('cancels what runs, lets every session go, stored, stops its timers, and refuses new clients', async () => {
    const workDir = await tempWorkspace();
    const clock = new ManualClock();
    const log = new MemorySessionLog();
    const { lifecycle, factory } = lifecycleOf([{ text: 'never', delayMs: 60_000 }], {
      idleTimeoutMs: 60_000,
      setTimer: clock.setTimer,
      factory: { sessions: sessionsIn(log) },
    });
    const runtime = await lifecycle.openLocal({ workDir, sessionId: 's' });
    const task = runtime.start('long');
    expect(await lifecycle.running()).toBe(1);
    // The grace for running tasks ends before they do.
    const grace = new AbortController();
    const waiting = lifecycle.tasksDone(grace.signal);
    grace.abort();
    await waiting;
    await lifecycle.cancelAll(new Error('stopping'));
    expect((await task.wait()).status).toBe('canceled');
    expect(await lifecycle.running()).toBe(0);
    // Its clients leave (a server closes its connections first): the idle time runs.
    await runtime.close();
    expect(clock.pending).toHaveLength(1);

    await lifecycle.close();
    expect(lifecycle.loaded).toBe(0);
    expect(factory.openSessions).toBe(0);
    expect(clock.pending).toEqual([]);
    await expect(lifecycle.open({ workDir, sessionId: 's' })).rejects.toThrow('claw is stopping');
    // Stored and released: another process has the session, with the canceled task's prompt.
    const other = new SessionStore({ log });
    stores.push(other);
    const reopened = await other.open('s', { workDir });
    expect(reopened.session.history()[0]).toMatchObject({ role: 'user', content: 'long' });
    await reopened.release();
  });

  it('says what cannot be stored at shutdown to onError, and closes all the same', async () => {
    const workDir = await tempWorkspace();
    const store = releaseFailing();
    const told: string[] = [];
    const { lifecycle } = lifecycleOf([], {
      idleTimeoutMs: 60_000,
      onError: (_error, what) => told.push(what),
      factory: { sessions: store.sessions },
    });
    const client = await lifecycle.open({ workDir, sessionId: 's' });
    await client.close();
    store.state.failing = true;
    await lifecycle.close();
    expect(told).toEqual([`session "s" (${workDir}) could not be stored and let go at shutdown`]);
    expect(lifecycle.loaded).toBe(0);
  });
});
