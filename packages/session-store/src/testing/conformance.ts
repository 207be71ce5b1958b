import type { Compaction, Message, SessionEvent } from '@claw/core';
import { describe, expect, it } from 'vitest';
import { SessionLockedError, SessionLogError, SessionStoreError } from '../errors.js';
import type { LogRecord, SessionLog } from '../session-log.js';
import { SessionStore } from '../session-store.js';
import { emptySnapshot } from './snapshots.js';

/** How the conformance suite gets at a backend. */
export interface SessionLogBackend {
  /** A log over fresh, empty storage (called once per test). */
  create(): Promise<SessionLog>;
  /**
   * A second log over the same storage as `log`, as another process would open it (for a
   * backend with nothing to share, the same object).
   */
  reopen(log: SessionLog): Promise<SessionLog>;
  /** Removes what `create` made (called after every test). */
  cleanUp?(): Promise<void>;
}

const workDir = '/conformance/workspace';

const at = (second: number) => `2030-01-01T00:00:${String(second).padStart(2, '0')}.000Z`;

function append(seq: number, ...messages: Message[]): LogRecord {
  const change = { type: 'append' as const, messages };
  return { seq, at: at(seq % 60), change, encoded: JSON.stringify(change) };
}

function event(sessionId: string, seq: number, content: string): SessionEvent {
  return { type: 'text_delta', task_id: 'task-1', content, session_id: sessionId, seq, at: at(seq % 60) };
}

function eventRecord(seq: number, value: SessionEvent): LogRecord {
  const change = { type: 'event' as const, event: value };
  return { seq, at: value.at, change, encoded: JSON.stringify(change) };
}

/**
 * Records as a reader gets them back: `encoded` is a writer's shortcut, not part of the data.
 * For the conformance suites.
 */
export function plain(records: readonly LogRecord[]) {
  return records.map(({ seq, at: time, change }) => ({ seq, at: time, change }));
}

/**
 * The conformance suite of the `SessionLog` seam (RT-6): every backend (file, memory,
 * PostgreSQL…) must pass it unchanged. Call it at the top level of a vitest test file:
 *
 * ```ts
 * describeSessionLog('my log', { create: async () => new MyLog(), reopen: async (log) => log });
 * ```
 */
export function describeSessionLog(name: string, backend: SessionLogBackend): void {
  describe(`SessionLog conformance: ${name}`, () => {
    const withLog = (test: (log: SessionLog) => Promise<void>) => async () => {
      const log = await backend.create();
      try {
        await test(log);
      } finally {
        await backend.cleanUp?.();
      }
    };

    it('has no session before its first snapshot, and a usable location for any valid id', withLog(async (log) => {
      expect(await log.load('never')).toBeUndefined();
      expect((await log.list()).sessions).toEqual([]);
      expect(log.location('never')).not.toBe('');
      expect(() => log.location('../escape')).toThrow(SessionStoreError);
      const missing = await rejection(log.append('never', [append(1, { role: 'user', content: 'x' })], { sync: false }));
      expect(missing).toBeInstanceOf(SessionLogError);
      expect(missing).toMatchObject({ code: 'session_missing' });
      expect(await log.load('never')).toBeUndefined();
    }));

    it('stores a snapshot and the records after it exactly, in order', withLog(async (log) => {
      const id = 's-1';
      const big = 'x'.repeat(1024 * 1024);
      await log.compact(id, emptySnapshot(id, { history: [{ role: 'user', content: 'hello' }] }));
      const records = [
        append(1, { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'bash', arguments: '{"command":"ls"}' }] }),
        append(2, { role: 'tool', toolCallId: 'c1', content: `日本語 — naïve ✓ ${big}`, isError: true }),
        eventRecord(3, event(id, 1, 'a delta')),
        { seq: 4, at: at(4), change: { type: 'usage', usage: { promptTokens: 3, completionTokens: 2, totalTokens: 5 }, costUsd: 0.5 } },
        { seq: 5, at: at(5), change: { type: 'tool_started', call: { id: 'c2', name: 'bash', arguments: '{}' } } },
      ] satisfies LogRecord[];
      await log.append(id, records.slice(0, 2), { sync: false });
      await log.append(id, records.slice(2), { sync: true });

      const loaded = await log.load(id);
      expect(loaded?.snapshot).toEqual(emptySnapshot(id, { history: [{ role: 'user', content: 'hello' }] }));
      expect(plain(loaded?.records ?? [])).toEqual(plain(records));
      expect(loaded?.needsCompaction).toBe(false);
      const other = await backend.reopen(log);
      expect(plain((await other.load(id))?.records ?? [])).toEqual(plain(records));
    }));

    it('rejects an append whose seq does not follow the last one, writing nothing', withLog(async (log) => {
      const id = 'conflict';
      await log.compact(id, emptySnapshot(id));
      await log.append(id, [append(1, { role: 'user', content: 'one' })], { sync: false });
      for (const records of [
        [append(1, { role: 'user', content: 'again' })],
        [append(3, { role: 'user', content: 'skips 2' })],
        [append(2, { role: 'user', content: 'fine' }), append(2, { role: 'user', content: 'repeats' })],
      ]) {
        const error = await rejection(log.append(id, records, { sync: false }));
        expect(error).toBeInstanceOf(SessionLogError);
        expect(error).toMatchObject({ code: 'session_seq_conflict' });
        expect((error as SessionLogError).location).toBe(log.location(id));
      }
      expect(plain((await log.load(id))?.records ?? [])).toEqual(plain([append(1, { role: 'user', content: 'one' })]));
      await log.append(id, [append(2, { role: 'user', content: 'two' })], { sync: false });
      expect((await log.load(id))?.records.map((record) => record.seq)).toEqual([1, 2]);
    }));

    it('compacts: the new snapshot replaces everything, and appends go on after its seq', withLog(async (log) => {
      const id = 'compact';
      await log.compact(id, emptySnapshot(id));
      await log.append(id, [append(1, { role: 'user', content: 'one' }), append(2, { role: 'user', content: 'two' })], { sync: false });
      const compacted = emptySnapshot(id, {
        seq: 2,
        eventSeq: 7,
        updatedAt: at(2),
        history: [{ role: 'user', content: 'one' }, { role: 'user', content: 'two' }],
        journal: { active: true, calls: [{ id: 'c9', started: true, finished: false }] },
      });
      await log.compact(id, compacted);
      expect(await log.load(id)).toEqual({
        snapshot: compacted,
        records: [],
        needsCompaction: false,
      });
      expect(await rejection(log.append(id, [append(2, { role: 'user', content: 'old seq' })], { sync: false })))
        .toMatchObject({ code: 'session_seq_conflict' });
      await log.append(id, [append(3, { role: 'user', content: 'three' })], { sync: false });
      expect((await log.load(id))?.records.map((record) => record.seq)).toEqual([3]);
    }));

    it('removes a session; removing one that is not there does nothing', withLog(async (log) => {
      await log.compact('gone', emptySnapshot('gone'));
      await log.remove('gone');
      await log.remove('gone');
      expect(await log.load('gone')).toBeUndefined();
      expect((await log.list()).sessions).toEqual([]);
    }));

    it('lists every session once, paged in id order, with its workDir and totals', withLog(async (log) => {
      const ids = ['e', 'a', 'c', 'b', 'd'];
      for (const id of ids) await log.compact(id, emptySnapshot(id));
      await log.append('c', [append(1, { role: 'user', content: 'hi' }), eventRecord(2, event('c', 1, 'x'))], { sync: false });
      const seen: string[] = [];
      let after: string | undefined;
      let pages = 0;
      do {
        const page = await log.list(after === undefined ? { limit: 2 } : { limit: 2, after });
        expect(page.sessions.length).toBeLessThanOrEqual(2);
        seen.push(...page.sessions.map((summary) => summary.id));
        after = page.next;
        pages += 1;
      } while (after !== undefined && pages < 10);
      expect(seen).toEqual(['a', 'b', 'c', 'd', 'e']);
      const { sessions } = await log.list();
      expect(sessions.find((summary) => summary.id === 'c')).toEqual({
        id: 'c',
        workDir,
        createdAt: at(0),
        // The time of the last record (the event's).
        updatedAt: at(1),
        messageCount: 1,
        usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
        cost: { usd: 0, unpricedCalls: 0 },
        lastEventSeq: 1,
        title: 'hi',
      });
    }));

    it('lists a session\'s title: its first prompt\'s first line, kept as more comes, gone with a clear, back with the next prompt', withLog(async (log) => {
      const titleOf = async () => (await log.list()).sessions.find((summary) => summary.id === 't')?.title;
      await log.compact('t', emptySnapshot('t'));
      expect(await titleOf()).toBeUndefined();
      await log.append('t', [append(1, { role: 'user', content: '\n  fix the login bug  \nit fails on empty passwords' })], { sync: false });
      expect(await titleOf()).toBe('fix the login bug');
      // Appended in batches of their own: the title stays the first prompt's.
      await log.append('t', [append(2, { role: 'assistant', content: 'done' })], { sync: false });
      await log.append('t', [append(3, { role: 'user', content: 'now the signup form' })], { sync: true });
      expect(await titleOf()).toBe('fix the login bug');
      const clear = { type: 'clear' as const };
      await log.append('t', [{ seq: 4, at: at(4), change: clear, encoded: JSON.stringify(clear) }], { sync: false });
      expect(await titleOf()).toBeUndefined();
      await log.append('t', [append(5, { role: 'user', content: `${'long '.repeat(30)}prompt` })], { sync: false });
      const long = await titleOf();
      expect(long?.startsWith('long long')).toBe(true);
      expect([...(long ?? '')]).toHaveLength(80);
      expect(long?.endsWith('…')).toBe(true);
    }));

    it('lets one owner at a time hold a session, naming the holder to the others', withLog(async (log) => {
      const lock = await log.acquire('held');
      expect(lock.holder.pid).toBe(process.pid);
      const other = await backend.reopen(log);
      for (const contender of [log, other]) {
        const error = await rejection(contender.acquire('held'));
        expect(error).toBeInstanceOf(SessionLockedError);
        expect(error).toMatchObject({ code: 'session_locked', sessionId: 'held', holder: { pid: process.pid } });
        expect((error as Error).message).toMatch(/in use/);
      }
      // Other sessions are not affected.
      await (await other.acquire('free')).release();
      await lock.release();
      await lock.release();
      const next = await other.acquire('held');
      await next.release();
    }));

    it('carries a whole SessionStore: history, totals, journal and event numbers survive a reopen', withLog(async (log) => {
      const first = new SessionStore({ log });
      const lease = await first.open('store', { workDir });
      const { session } = lease;
      await session.append(
        { role: 'user', content: 'go' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'bash', arguments: '{}' }], reasoning: 'run it' },
      );
      await session.recordUsage({ promptTokens: 10, completionTokens: 5, totalTokens: 15 }, 0.25);
      await session.recordUsage({
        promptTokens: 20, completionTokens: 1, totalTokens: 21, cachedPromptTokens: 8,
      });
      const compaction: Compaction = {
        reason: 'threshold',
        upTo: 1,
        kept: [0],
        summary: 'asked to go',
        pruned: [],
        tokensBefore: 900,
        tokensAfter: 300,
        prunedResults: 0,
        summarisedMessages: 1,
        usage: { promptTokens: 800, completionTokens: 20, totalTokens: 820 },
      };
      await session.compact(compaction);
      await session.toolStarted({ id: 'c1', name: 'bash', arguments: '{}' });
      const events = [1, 2, 3].map((index) => session.appendEvent({ type: 'text_delta', task_id: 't', content: `d${index}` }));
      await Promise.all(events.map((appended) => appended.written));
      expect(events.map((appended) => appended.event.seq)).toEqual([1, 2, 3]);
      // A second store over the same storage is another owner: refused while the first has it.
      const second = new SessionStore({ log: await backend.reopen(log) });
      expect(await rejection(second.open('store', { workDir }))).toBeInstanceOf(SessionLockedError);
      await lease.release();

      const reopened = (await second.open('store', { workDir })).session;
      // The call that started and never finished is told to the model, never run again.
      expect(reopened.history().at(-1)).toMatchObject({ role: 'tool', toolCallId: 'c1', isError: true });
      // The reasoning of a reply and the cached tokens of the calls are kept (REAL-4, REAL-5).
      expect(reopened.history()[1]).toMatchObject({ role: 'assistant', reasoning: 'run it' });
      expect(reopened.usage()).toEqual({
        promptTokens: 30, completionTokens: 6, totalTokens: 36, cachedPromptTokens: 8,
      });
      expect(reopened.cost()).toEqual({ usd: 0.25, unpricedCalls: 1 });
      expect(reopened.lastEventSeq()).toBe(3);
      // The compaction the model sees the history through is kept too (CMP-4).
      expect(reopened.compaction()).toEqual(compaction);
      expect(reopened.appendEvent({ type: 'text_delta', task_id: 't', content: 'd4' }).event.seq).toBe(4);
      await second.close();
      await first.close();
    }));
  });
}

/** What `promise` rejects with; fails the test when it resolves. For the conformance suites. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}
