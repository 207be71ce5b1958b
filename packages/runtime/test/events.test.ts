import { HttpError, RetryingProvider } from '@claw/provider';
import { ScriptedProvider } from '@claw/testing';
import { plainCommandSpawner } from '@claw/sandbox';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CursorExpiredError,
  RuntimeFactory,
  SubscriberLaggedError,
  type TaskToolProgress,
} from '../src/index.js';
import { cleanUp, isTaskEnd, nextTurn, progressSteps, scriptedFactory, settings, take, tempWorkspace, until } from './helpers.js';

afterEach(cleanUp);

const chunks = (count: number) => Array.from({ length: count }, (_, index) => `w${index} `);

describe('sequenced run events (RT-3)', () => {
  it('gives every event session_id, task_id, seq and at, seq 1, 2, 3… without gaps, in task order', async () => {
    const workDir = await tempWorkspace();
    const { factory } = scriptedFactory([
      { toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'missing.txt' } }] },
      { textChunks: ['Hel', 'lo'], usage: { promptTokens: 5, completionTokens: 2 } },
    ], { settings: settings({ maxSessionTokens: 200_000 }) });
    const runtime = await factory.createRuntime({ workDir, sessionId: 's1' });
    const events = runtime.events({ after: 0 });
    const task = runtime.start('say hello');
    const seen = await until(events, isTaskEnd);
    await task.wait();

    expect(seen.map((event) => event.seq)).toEqual(seen.map((_, index) => index + 1));
    for (const event of seen) {
      expect(event.session_id).toBe('s1');
      expect(Number.isNaN(Date.parse(event.at))).toBe(false);
      if (event.type !== 'state') expect(event).toMatchObject({ task_id: task.id });
    }
    expect(seen.map((event) => event.type)).toEqual([
      'task_started', 'state', 'thinking', 'usage', 'tool_call', 'tool_result', 'thinking',
      'text_delta', 'text_delta', 'usage', 'text_completed', 'task_completed',
    ]);
    expect(seen[0]).toMatchObject({ type: 'task_started', content: 'say hello' });
    expect(seen[1]).toMatchObject({ type: 'state', state: 'running', task_id: task.id });
    expect(seen[5]).toMatchObject({ type: 'tool_result', tool_call_id: 'c1', tool_name: 'read_file', is_error: true });
    expect(seen[9]).toMatchObject({
      type: 'usage',
      call: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
      cost: { call_usd: null },
      budgets_left: { session_tokens: 200_000 - (seen[9]?.type === 'usage' ? seen[9].session.total_tokens : 0) },
    });
    expect(seen.at(-1)).toMatchObject({ type: 'task_completed', content: 'Hello' });
    // After the end, the session is idle again.
    expect(await take(events, 1)).toMatchObject([{ type: 'state', state: 'idle', seq: seen.length + 1 }]);
  });

  it('records a retried model call as a model_retry event of the task, in order, and the library user\'s reporter hears it', async () => {
    const workDir = await tempWorkspace();
    const scripted = new ScriptedProvider([{ error: new HttpError('model API returned HTTP 503', { status: 503 }) }, { text: 'back' }]);
    const provider = new RetryingProvider(scripted, { backoffMs: 1 });
    const { factory } = scriptedFactory([], { provider });
    const heard: number[] = [];
    const runtime = await factory.createRuntime({
      workDir,
      reporter: { onModelRetry: (report) => void heard.push(report.attempt) },
    });
    const events = runtime.events({ after: 0 });
    const task = runtime.start('hi');
    const seen = await until(events, isTaskEnd);
    await task.wait();
    expect(seen.map((event) => event.type)).toEqual([
      'task_started', 'state', 'thinking', 'model_retry', 'text_delta', 'usage', 'text_completed', 'task_completed',
    ]);
    expect(seen[3]).toMatchObject({
      type: 'model_retry', task_id: task.id, attempt: 1, attempts: 3, delay_ms: 1, error: 'model API returned HTTP 503',
    });
    expect(heard).toEqual([1]);
  });

  it('replays exactly the events after a cursor taken mid-task, then the live ones', async () => {
    const workDir = await tempWorkspace();
    const { factory } = scriptedFactory([{ textChunks: chunks(30), chunkDelayMs: 2 }]);
    const runtime = await factory.createRuntime({ workDir });
    const all = runtime.events({ after: 0 });
    const task = runtime.start('count');
    const first = await take(all, 12);
    const cursor = first.at(-1)?.seq ?? 0;
    const resumed = runtime.events({ after: cursor });
    const rest = await until(all, isTaskEnd);
    const replayed = await until(resumed, isTaskEnd);
    await task.wait();

    expect(replayed.map((event) => event.seq)).toEqual(rest.map((event) => event.seq));
    expect(replayed).toEqual(rest);
    expect(replayed[0]?.seq).toBe(cursor + 1);
  });

  it('refuses a cursor beyond the last event (another session\'s) and one older than what is kept', async () => {
    const workDir = await tempWorkspace();
    const { factory } = scriptedFactory([{ textChunks: chunks(20) }], {
      eventRetention: { maxEvents: 5 },
    });
    const runtime = await factory.createRuntime({ workDir });
    await runtime.start('go').wait();
    await nextTurn();
    const last = runtime.snapshot().seq;
    // Wait until the last event is stored (delivered), so what is kept is final.
    await take(runtime.events({ after: last - 1 }), 1);

    const beyond = (() => {
      try {
        runtime.events({ after: last + 50 });
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(beyond).toBeInstanceOf(CursorExpiredError);
    expect(beyond).toMatchObject({ code: 'cursor_expired', oldestSeq: last - 4, lastSeq: last });

    expect(() => runtime.events({ after: 3 })).toThrow(CursorExpiredError);
    expect(() => runtime.events({ after: -1 })).toThrow(CursorExpiredError);
    // The oldest kept can be replayed from, and is exactly the last five.
    const kept = await take(runtime.events({ after: last - 5 }), 5);
    expect(kept.map((event) => event.seq)).toEqual([last - 4, last - 3, last - 2, last - 1, last]);
  });

  it('continues seq after a restart, and replays what the session file still holds', async () => {
    const workDir = await tempWorkspace();
    const before = scriptedFactory([{ text: 'one' }, { text: 'one more' }]).factory;
    const runtime = await before.createRuntime({ workDir, sessionId: 'kept' });
    // The file holds the first writes as its snapshot, and what follows as records: the second
    // task's events are records, which a restart reads back.
    await runtime.start('first').wait();
    await runtime.start('again').wait();
    const last = runtime.snapshot().seq;
    const tail = await take(runtime.events({ after: last - 3 }), 3);
    await before.close();

    const after = scriptedFactory([{ text: 'two' }]).factory;
    const resumed = await after.createRuntime({ workDir, sessionId: 'kept' });
    expect(resumed.snapshot().seq).toBe(last);
    expect(await take(resumed.events({ after: last - 3 }), 3)).toEqual(tail);
    const live = resumed.events();
    resumed.start('second');
    const next = await take(live, 1);
    expect(next[0]).toMatchObject({ type: 'task_started', seq: last + 1, content: 'second' });
    await resumed.idle();
  });

  it('never waits for a subscriber that does not read: the run completes and the subscriber ends lagged', async () => {
    const workDir = await tempWorkspace();
    // The reply waits a little, so that the task's first events are stored and read before
    // the 200 deltas come (the run does not wait for its writes: they come as one burst).
    const { factory } = scriptedFactory([{ textChunks: chunks(200), delayMs: 50 }], {
      subscriberBound: { maxEvents: 20 },
    });
    const runtime = await factory.createRuntime({ workDir });
    const stuck = runtime.events({ after: 0 });
    // A second one reads the first events, then stops reading.
    const slowed = runtime.events({ after: 0 });
    const task = runtime.start('talk a lot');
    const first = await slowed.next();
    const result = await task.wait();
    // The bounds are checked once the turn's writes settled.
    await nextTurn();

    expect(result.status).toBe('completed');
    expect(result.finalText).toBe(chunks(200).join(''));
    const error = await stuck.next().then(() => undefined, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(SubscriberLaggedError);
    // It got nothing: its cursor is where it subscribed.
    expect(error).toMatchObject({ code: 'lagged', lastSeq: 0 });
    const gotSome = first.done === true ? 0 : first.value.seq;
    const slowedError = await slowed.next().then(() => undefined, (caught: unknown) => caught);
    expect(slowedError).toMatchObject({ code: 'lagged', lastSeq: gotSome });
    // It resubscribes from its cursor and catches up from the log.
    const again = await until(runtime.events({ after: gotSome }), isTaskEnd);
    expect(again[0]?.seq).toBe(gotSome + 1);
    expect(again.at(-1)?.type).toBe('task_completed');
  });

  it('a slow subscriber never makes a model call time out: the timer does not include consumer time', async () => {
    const workDir = await tempWorkspace();
    // The stream takes ~40 ms and the call may take 2 s; the subscriber holds each event longer
    // than that (2.5 s) for as long as the run goes on. Counted in the call's time, its reading
    // would time the call out; not counted, the run completes while it holds its first event.
    // Nothing here races the clock: a loaded machine only makes the run take longer.
    const scripted = new ScriptedProvider([{ textChunks: chunks(20), chunkDelayMs: 2 }]);
    const provider = new RetryingProvider(scripted, { attempts: 1, callTimeoutMs: 2_000, firstTokenTimeoutMs: 2_000 });
    const factory = new RuntimeFactory({ settings: settings(), provider, spawner: plainCommandSpawner() });
    try {
      const runtime = await factory.createRuntime({ workDir });
      const slow = runtime.events({ after: 0 });
      const running = runtime.start('stream');
      const finished = running.wait();
      /** Holds an event for 2.5 s, or until the run finished. */
      const hold = async (): Promise<void> => {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([finished, new Promise((resolve) => {
          timer = setTimeout(resolve, 2_500);
        })]);
        clearTimeout(timer);
      };
      let consumed = 0;
      const consumer = (async () => {
        for await (const event of slow) {
          consumed += 1;
          await hold();
          if (isTaskEnd(event)) return;
        }
      })();
      const result = await finished;
      expect(result.status).toBe('completed');
      expect(consumed).toBeLessThan(20);
      await consumer;
      expect(consumed).toBeGreaterThan(20);
    } finally {
      await factory.close();
    }
  });
});

describe('snapshots (RT-4)', () => {
  it('shows history, state, pending approvals and the seq to go on from', async () => {
    const workDir = await tempWorkspace();
    const { factory } = scriptedFactory(
      [
        { toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: 'a.txt', content: 'x' } }] },
        { text: 'done' },
      ],
      { settings: settings({ approval: 'ask' }) },
    );
    const runtime = await factory.createRuntime({ workDir });
    expect(runtime.snapshot()).toMatchObject({ state: 'idle', seq: 0, history: [], pendingApprovals: [] });
    const events = runtime.events();
    const task = runtime.start('write a');
    const asked = await until(events, (event) => event.type === 'approval_request');
    const request = asked.at(-1);
    const view = runtime.snapshot();
    expect(view.state).toBe('awaiting_approval');
    expect(view.pendingApprovals).toEqual([request]);
    expect(view.task).toEqual({ id: task.id, prompt: 'write a' });
    expect(view.history.map((message) => message.role)).toEqual(['user', 'assistant']);
    // Everything up to the snapshot's seq is in it; subscribing after it misses nothing.
    const after = runtime.events({ after: view.seq });
    runtime.respond(request?.type === 'approval_request' ? request.request_id : '', 'allow_once', 'tester');
    const rest = await until(after, isTaskEnd);
    expect(rest[0]).toMatchObject({ type: 'approval_resolved', decision: 'allow_once', by: 'tester', seq: view.seq + 1 });
    expect(rest.at(-1)).toMatchObject({ type: 'task_completed' });
    await task.wait();
    expect(runtime.snapshot()).toMatchObject({ state: 'idle', pendingApprovals: [] });
  });
});

describe('tool progress (not an event)', () => {
  it('reaches every runtime of the session that listens, with the task id (a listener that throws misses it alone), never the event log', async () => {
    const workDir = await tempWorkspace();
    const { factory } = scriptedFactory(
      [{ toolCalls: [{ id: 'c1', name: 'steps', arguments: {} }] }, { text: 'done' }],
      { tools: [progressSteps(3)] },
    );
    const runner = await factory.createRuntime({ workDir, sessionId: 's1' });
    const watcher = await factory.createRuntime({ workDir, sessionId: 's1' });
    const heard: { runner: TaskToolProgress[]; watcher: TaskToolProgress[] } = { runner: [], watcher: [] };
    // A listener that throws misses what it is told, and nobody else does.
    runner.onToolProgress(() => {
      throw new Error('a broken listener');
    });
    runner.onToolProgress((progress) => heard.runner.push(progress));
    const stopWatching = watcher.onToolProgress((progress) => {
      heard.watcher.push(progress);
      // Unsubscribed after the first: it hears no more.
      stopWatching();
    });
    const events = runner.events({ after: 0 });
    const task = runner.start('step through');
    const seen = await until(events, isTaskEnd);
    expect(heard.runner).toEqual([1, 2, 3].map((step) => ({
      taskId: task.id,
      toolCallId: 'c1',
      toolName: 'steps',
      progress: step,
      total: 3,
      message: `step ${step}`,
    })));
    expect(heard.watcher).toEqual(heard.runner.slice(0, 1));
    expect(seen.map((event) => event.type)).not.toContain('tool_progress');
  });
});
