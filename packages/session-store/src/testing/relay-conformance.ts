import type { Message, TaskToolProgress } from '@claw/core';
import { describe, expect, it, vi, type TestContext } from 'vitest';
import { SessionLogError } from '../errors.js';
import type { LogRecord, SessionLog } from '../session-log.js';
import {
  leaseLostCode,
  type OwnerInbox,
  type RelayReply,
  type RelayRequest,
  type SessionRelay,
} from '../session-relay.js';
import { SessionStore } from '../session-store.js';
import { plain, rejection, type SessionLogBackend } from './conformance.js';
import { emptySnapshot } from './snapshots.js';

const workDir = '/conformance/workspace';

/** How long the suite waits for what a relay does in the background (wake-ups, replies). */
const waitMs = 10_000;

const at = (seq: number) => new Date(Date.UTC(2030, 0, 1) + seq * 1000).toISOString();

function message(seq: number, content: string): LogRecord {
  const change = { type: 'append' as const, messages: [{ role: 'user', content } satisfies Message] };
  return { seq, at: at(seq), change, encoded: JSON.stringify(change) };
}

function prompt(content: string): RelayRequest {
  return { kind: 'prompt', content, by: 'a client elsewhere' };
}

/** Resolves once `check` passes (retried, within the suite's wait). */
function soon(check: () => unknown): Promise<unknown> {
  return vi.waitFor(check, { timeout: waitMs, interval: 10 });
}

/** The relay parts of `log`, which a backend under this suite must have. */
function partsOf(log: SessionLog): SessionRelay {
  const parts = log.relayParts?.();
  if (parts === undefined) throw new Error('the log has no relay parts (SessionLog.relayParts)');
  return parts;
}

/** Options of {@link recordingHandler}. */
export interface RecordingHandlerOptions {
  /** The first request waits for it before it is answered. */
  gate?: Promise<void>;
  /** The request (prompt content or kind) whose handling throws `<fail> failed`. */
  fail?: string;
  /**
   * How long each request is handled, in ms: long enough for an overlapping second call to show
   * in `maxActive` with a relay that hands requests over in the background. Default: one turn of
   * the event loop.
   */
  holdMs?: number;
}

/**
 * A request handler for an owner's inbox (`OwnerInbox.serve`) that records the requests it
 * handled (`seen`: a prompt's content, else the request's kind) and how many ran at once
 * (`state.maxActive`); it answers `{ ok: true, taskId: 'task-<content>' }`.
 */
export function recordingHandler(options: RecordingHandlerOptions = {}) {
  const seen: string[] = [];
  const state = { active: 0, maxActive: 0 };
  const handle = async (request: RelayRequest): Promise<RelayReply> => {
    state.active += 1;
    state.maxActive = Math.max(state.maxActive, state.active);
    try {
      const content = request.kind === 'prompt' ? request.content : request.kind;
      seen.push(content);
      if (seen.length === 1 && options.gate !== undefined) await options.gate;
      // An overlapping second call would show in maxActive.
      await new Promise((resolve) => {
        if (options.holdMs === undefined) setImmediate(resolve);
        else setTimeout(resolve, options.holdMs);
      });
      if (content === options.fail) throw new Error(`${content} failed`);
      return { ok: true, taskId: `task-${content}` };
    } finally {
      state.active -= 1;
    }
  };
  return { seen, state, handle };
}

/**
 * The conformance suite of a shared log's relay parts (SCALE-4, LIFE-1): the replication of
 * records to other instances, the owner's inbox and the progress channel, each between two
 * instances over the same storage (`create`, then `reopen` as the other process). A backend
 * without an inbox or a progress channel skips those tests. Call it at the top level of a vitest
 * test file, next to `describeSessionLog`.
 */
export function describeSessionRelay(name: string, backend: SessionLogBackend): void {
  describe(`SessionRelay conformance: ${name}`, () => {
    const withInstances = (
      test: (owner: SessionLog, other: SessionLog, context: TestContext) => Promise<void>,
    ) => async (context: TestContext) => {
      const owner = await backend.create();
      try {
        await test(owner, await backend.reopen(owner), context);
      } finally {
        await backend.cleanUp?.();
      }
    };

    /**
     * Runs `test` with the given part of both instances' relays; a backend without it skips the
     * test (the part is optional: see `SessionRelay`).
     */
    const withBoth = <Part extends 'inbox' | 'progress'>(
      part: Part,
      test: (
        mine: NonNullable<SessionRelay[Part]>,
        theirs: NonNullable<SessionRelay[Part]>,
        instances: { owner: SessionLog; other: SessionLog },
      ) => Promise<void>,
    ) => withInstances(async (owner, other, context) => {
      const mine = partsOf(owner)[part];
      const theirs = partsOf(other)[part];
      if (mine === undefined || theirs === undefined) {
        return context.skip(`${name} has no ${part === 'inbox' ? 'owner inbox' : 'progress channel'}`);
      }
      await test(mine, theirs, { owner, other });
    });

    /** As `withBoth` for the inboxes, with the first instance owning session `s` throughout. */
    const withInboxes = (
      test: (
        mine: OwnerInbox,
        theirs: OwnerInbox,
        instances: { owner: SessionLog; other: SessionLog },
      ) => Promise<void>,
    ) => withBoth('inbox', async (mine, theirs, instances) => {
      const lock = await instances.owner.acquire('s');
      try {
        await test(mine, theirs, instances);
      } finally {
        await lock.release();
      }
    });

    describe('replication', () => {
      it('names the owner of a session to every instance: live while it holds the lease, none once released', withInstances(async (owner, other) => {
        const mine = partsOf(owner).replication;
        const theirs = partsOf(other).replication;
        expect(mine.instanceId).not.toBe(theirs.instanceId);
        expect(await theirs.ownerOf('s')).toBeUndefined();
        await owner.compact('s', emptySnapshot('s', { workDir }));
        expect(await theirs.ownerOf('s')).toBeUndefined();
        const lock = await owner.acquire('s');
        for (const asking of [mine, theirs]) {
          expect(await asking.ownerOf('s')).toEqual({ instance: mine.instanceId, live: true });
        }
        await lock.release();
        expect(await theirs.ownerOf('s')).toBeUndefined();
      }));

      it('refuses a write made under an earlier lock of this instance once it took the session again, writing nothing', withInstances(async (owner) => {
        // A writer left over from an earlier hold (a retry after its lease was lost) must never
        // write under the hold that followed it in the same process.
        const first = await owner.acquire('s');
        await owner.compact('s', emptySnapshot('s', { workDir }), { lock: first });
        await first.release();
        const second = await owner.acquire('s');
        try {
          const late = await rejection(owner.append('s', [message(1, 'late')], { sync: true, lock: first }));
          expect(late).toMatchObject({ code: leaseLostCode });
          const lateSnapshot = owner.compact('s', { ...emptySnapshot('s', { workDir }), seq: 7 }, { lock: first });
          expect(await rejection(lateSnapshot)).toMatchObject({ code: leaseLostCode });
          const untouched = await owner.load('s');
          expect(untouched?.records).toEqual([]);
          expect(untouched?.snapshot.seq).toBe(0);
          await owner.append('s', [message(1, 'mine')], { sync: true, lock: second });
          expect(plain((await owner.load('s'))?.records ?? [])).toEqual(plain([message(1, 'mine')]));
        } finally {
          await second.release();
        }
      }));

      it('reads the records after a seq, in order, at most limit of them; nothing new is empty', withInstances(async (owner, other) => {
        const { replication } = partsOf(other);
        const lock = await owner.acquire('s');
        await owner.compact('s', emptySnapshot('s', { workDir }));
        const records = [1, 2, 3, 4, 5].map((seq) => message(seq, `m${seq}`));
        await owner.append('s', records.slice(0, 2), { sync: false });
        await owner.append('s', records.slice(2), { sync: true });

        const all = await replication.readSince('s', 0);
        expect(plain(all.records)).toEqual(plain(records));
        expect(all.oldestSeq).toBe(1);
        const firstTwo = await replication.readSince('s', 0, { limit: 2 });
        expect(plain(firstTwo.records)).toEqual(plain(records.slice(0, 2)));
        const rest = await replication.readSince('s', 2);
        expect(plain(rest.records)).toEqual(plain(records.slice(2)));
        expect(rest.oldestSeq).toBe(3);
        expect(await replication.readSince('s', 5)).toEqual({ records: [], oldestSeq: 6 });
        expect(await replication.readSince('unknown', 0)).toEqual({ records: [], oldestSeq: 1 });
        await lock.release();
      }));

      it('tells a reader behind a compaction to start again from load, or gives it what is kept exactly', withInstances(async (owner, other) => {
        const { replication } = partsOf(other);
        const lock = await owner.acquire('s');
        await owner.compact('s', emptySnapshot('s', { workDir }));
        const records = [1, 2, 3, 4].map((seq) => message(seq, `m${seq}`));
        await owner.append('s', records, { sync: false });
        const history = records.map((record) => ({ role: 'user' as const, content: `m${record.seq}` }));
        await owner.compact('s', emptySnapshot('s', { workDir, seq: 4, history }));
        await owner.append('s', [message(5, 'm5')], { sync: false });

        // Caught up with the snapshot: exactly what came after it.
        const after = await replication.readSince('s', 4);
        expect(plain(after.records)).toEqual(plain([message(5, 'm5')]));
        expect(after.oldestSeq).toBe(5);
        // Behind it: the records a backend still keeps, from the one asked for on; or where the
        // kept ones begin, beyond it, so the reader loads the snapshot instead.
        const behind = await replication.readSince('s', 1);
        if (behind.oldestSeq === 2) {
          expect(plain(behind.records)).toEqual(plain([...records.slice(1), message(5, 'm5')]));
        } else {
          expect(behind.oldestSeq).toBeGreaterThan(2);
          expect(behind.records.every((record) => record.seq >= behind.oldestSeq)).toBe(true);
          expect((await other.load('s'))?.snapshot.seq).toBe(4);
        }
        await lock.release();
      }));

      it('wakes the readers of another instance when the session changes, until they stop watching', withInstances(async (owner, other) => {
        const { replication } = partsOf(other);
        const lock = await owner.acquire('s');
        await owner.compact('s', emptySnapshot('s', { workDir }));
        const woken = { s: 0, t: 0 };
        const unwatch = replication.watch('s', () => void (woken.s += 1));
        const unwatchOther = replication.watch('t', () => void (woken.t += 1));
        let seq = 0;
        // A wake-up may be lost while the reader starts listening (it only delays a reader):
        // write until one comes, then each write wakes it.
        await vi.waitFor(async () => {
          seq += 1;
          await owner.append('s', [message(seq, `m${seq}`)], { sync: false });
          expect(woken.s).toBeGreaterThan(0);
        }, { timeout: waitMs, interval: 50 });
        woken.s = 0;
        seq += 1;
        await owner.append('s', [message(seq, `m${seq}`)], { sync: false });
        await soon(() => expect(woken.s).toBeGreaterThan(0));
        expect((await replication.readSince('s', seq - 1)).records.map((record) => record.seq))
          .toEqual([seq]);

        unwatch();
        woken.s = 0;
        woken.t = 0;
        await owner.append('s', [message(seq + 1, 'unheard')], { sync: false });
        // A change of another session, watched still: once it is heard, the first would have been.
        await owner.compact('t', emptySnapshot('t', { workDir }));
        await soon(() => expect(woken.t).toBeGreaterThan(0));
        expect(woken.s).toBe(0);
        unwatchOther();
        await lock.release();
      }));

      it('gets a new session\'s first changes to the readers as records, through a SessionStore', withInstances(async (owner, other) => {
        const store = new SessionStore({ log: owner });
        const { session } = await store.open('fresh', { workDir });
        session.appendEvent({ type: 'task_started', task_id: 't1', content: 'hi' });
        await session.append({ role: 'user', content: 'hi' });
        await session.flush();
        const { records } = await partsOf(other).replication.readSince('fresh', 0);
        expect(records.map((record) => record.change.type)).toEqual(['event', 'append']);
        await store.close();
      }));
    });

    describe('owner inbox', () => {
      it('hands another instance\'s requests to the owner, one at a time, each reply to its sender', withInboxes(async (mine, theirs) => {
        let openGate: () => void = () => undefined;
        const gate = new Promise<void>((resolve) => {
          openGate = resolve;
        });
        const handler = recordingHandler({ gate });
        const stop = mine.serve('s', handler.handle);

        const first = theirs.send('s', prompt('r1'), { timeoutMs: waitMs });
        await soon(() => expect(handler.seen).toEqual(['r1']));
        const others = ['r2', 'r3'].map((content) => theirs.send('s', prompt(content), { timeoutMs: waitMs }));
        openGate();
        expect(await Promise.all([first, ...others])).toEqual([
          { ok: true, taskId: 'task-r1' },
          { ok: true, taskId: 'task-r2' },
          { ok: true, taskId: 'task-r3' },
        ]);
        expect(handler.seen[0]).toBe('r1');
        expect([...handler.seen].sort()).toEqual(['r1', 'r2', 'r3']);
        expect(handler.state.maxActive).toBe(1);
        stop();
      }));

      it('replies internal_error for a handler that throws, serves on, and takes nothing once stopped', withInboxes(async (mine, theirs) => {
        const handler = recordingHandler({ fail: 'boom' });
        const stop = mine.serve('s', handler.handle);

        expect(await theirs.send('s', prompt('boom'), { timeoutMs: waitMs }))
          .toEqual({ ok: false, code: 'internal_error', message: 'boom failed' });
        expect(await theirs.send('s', prompt('fine'), { timeoutMs: waitMs }))
          .toEqual({ ok: true, taskId: 'task-fine' });
        stop();
        const late = await rejection(theirs.send('s', prompt('late'), { timeoutMs: 200 }));
        expect(late).toBeInstanceOf(SessionLogError);
        expect(late).toMatchObject({ code: 'session_owner_unreachable' });
        expect(handler.seen).toEqual(['boom', 'fine']);
      }));

      it('withdraws a request nobody took in time: session_owner_unreachable, and an owner serving later never gets it', withInboxes(async (mine, theirs, { other }) => {
        const error = await rejection(theirs.send('s', prompt('too late'), { timeoutMs: 200 }));
        expect(error).toBeInstanceOf(SessionLogError);
        expect(error).toMatchObject({ code: 'session_owner_unreachable', location: other.location('s') });
        expect((error as Error).message).toMatch(/within 200 ms; it was withdrawn/);

        const handler = recordingHandler();
        const stop = mine.serve('s', handler.handle);
        // Served oldest first: had the withdrawn one been left, it would have come first.
        expect(await theirs.send('s', prompt('in time'), { timeoutMs: waitMs }))
          .toEqual({ ok: true, taskId: 'task-in time' });
        expect(handler.seen).toEqual(['in time']);
        stop();
      }));

      it('serves a request sent before the owner started serving, once it starts', withInboxes(async (mine, theirs) => {
        const early = theirs.send('s', { kind: 'interrupt', reason: 'stop it', by: 'b' }, { timeoutMs: waitMs });
        const received: RelayRequest[] = [];
        const stop = mine.serve('s', async (request) => {
          received.push(request);
          return { ok: true };
        });
        expect(await early).toEqual({ ok: true });
        expect(received).toEqual([{ kind: 'interrupt', reason: 'stop it', by: 'b' }]);
        stop();
      }));

      it('lets only the lease holder take requests: another instance serving the session gets none', withInboxes(async (mine, theirs, { owner }) => {
        const sender = partsOf(await backend.reopen(owner)).inbox;
        if (sender === undefined) throw new Error('a reopened log has no owner inbox');
        const onOwner = recordingHandler();
        const onOther = recordingHandler();
        const stopOther = theirs.serve('s', onOther.handle);
        const stopOwner = mine.serve('s', onOwner.handle);
        const contents = ['r1', 'r2', 'r3', 'r4'];
        const replies = await Promise.all(contents.map((content) => sender.send('s', prompt(content), { timeoutMs: waitMs })));
        expect(replies).toEqual(contents.map((content) => ({ ok: true, taskId: `task-${content}` })));
        expect([...onOwner.seen].sort()).toEqual(contents);
        expect(onOther.seen).toEqual([]);
        stopOwner();
        stopOther();
      }));
    });

    describe('progress channel', () => {
      it('tells the listeners of a session the progress its owner publishes, not another session\'s, until they stop', withBoth('progress', async (mine, theirs) => {
        const heard: TaskToolProgress[] = [];
        const ofOther: TaskToolProgress[] = [];
        const stop = theirs.onProgress('s', (progress) => heard.push(progress));
        const stopOther = theirs.onProgress('t', (progress) => ofOther.push(progress));
        const report = (call: number): TaskToolProgress => ({
          taskId: 'task-1', toolCallId: `c${call}`, toolName: 'bash', progress: call, total: 100, message: `step ${call}`,
        });
        // Best effort: a report may be lost while the listener starts. Each try is another tool
        // call (a channel may drop a call's reports that come too close together).
        let call = 0;
        await vi.waitFor(() => {
          call += 1;
          mine.publishProgress('s', report(call));
          expect(heard.length).toBeGreaterThan(0);
        }, { timeout: waitMs, interval: 50 });
        for (const progress of heard) expect(progress).toEqual(report(progress.progress));
        expect(ofOther).toEqual([]);

        stop();
        const before = heard.length;
        mine.publishProgress('s', report(call + 1));
        mine.publishProgress('t', report(call + 2));
        await soon(() => expect(ofOther).toHaveLength(1));
        expect(ofOther[0]).toEqual(report(call + 2));
        expect(heard).toHaveLength(before);
        stopOther();
      }));
    });
  });
}
