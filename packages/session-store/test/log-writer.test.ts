import { afterEach, describe, expect, it } from 'vitest';
import { FileSessionLog, SessionStore, newSessionSnapshot } from '../src/index.js';
import { FlushControlledLog } from '../src/testing/index.js';
import { RecordingFileSystem, call, removeTempDirs, tempDir } from './fixtures.js';

afterEach(removeTempDirs);

const workDir = '/work/space';

function settled(promise: Promise<unknown>): () => boolean {
  let done = false;
  void promise.then(() => {
    done = true;
  });
  return () => done;
}

describe('a batch with an intent: what needs no flush is stored once written (PERF-1)', () => {
  it('an event in the same batch as an intent is stored before the intent is flushed', async () => {
    const log = new FlushControlledLog();
    const store = new SessionStore({ log });
    const { session } = await store.open('s', { workDir });
    await session.append({ role: 'user', content: 'go' });
    // The same tick: one batch, one append, one flush.
    const { written } = session.appendEvent({ type: 'thinking', task_id: 't', turn: 1 });
    const started = session.toolStarted(call('c1'));
    const eventStored = settled(written);
    const intentStored = settled(started);
    while (log.heldFlushes.length === 0) await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(eventStored()).toBe(true);
    expect(intentStored()).toBe(false);
    log.heldFlushes.shift()?.();
    await started;
    expect(intentStored()).toBe(true);
    await store.close();
  });

  it("a read-only tool's intent is waited for until written; what follows waits for its flush", async () => {
    const log = new FlushControlledLog();
    const store = new SessionStore({ log });
    const { session } = await store.open('s', { workDir });
    await session.append({ role: 'assistant', content: '', toolCalls: [call('c1', 'read_file')] });
    // Resolves with the flush still under way: the test has not let it go.
    await session.toolStarted(call('c1', 'read_file'), { readOnly: true });
    expect(log.heldFlushes).toHaveLength(1);
    const finished = settled(session.toolFinished('c1'));
    for (let tick = 0; tick < 5; tick += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(finished()).toBe(false);
    const types = async (): Promise<string[] | undefined> =>
      (await log.load('s'))?.records.map((record) => record.change.type);
    expect((await types())?.at(-1)).toBe('tool_started');
    log.heldFlushes.shift()?.();
    await session.flush();
    expect(finished()).toBe(true);
    expect((await types())?.at(-1)).toBe('tool_finished');
    await store.close();
  });

  it("an intent's batch is written when this tick's work is done, before the event loop turns", async () => {
    const log = new FlushControlledLog();
    const store = new SessionStore({ log });
    const { session } = await store.open('s', { workDir });
    await session.append({ role: 'assistant', content: '', toolCalls: [call('c1'), call('c2')] });
    const order: string[] = [];
    setImmediate(() => order.push('event loop turned'));
    // Two intents a few promise steps apart, as a wave's calls record theirs: one batch.
    const first = session.toolStarted(call('c1', 'read_file'), { readOnly: true });
    const second = Promise.resolve()
      .then(() => undefined)
      .then(() => session.toolStarted(call('c2', 'read_file'), { readOnly: true }));
    await Promise.all([first, second]);
    order.push('intents written');
    expect(log.heldFlushes).toHaveLength(1);
    const stored = await log.load('s');
    expect(stored?.records.slice(-2).map((record) => record.change.type)).toEqual([
      'tool_started', 'tool_started',
    ]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['intents written', 'event loop turned']);
    log.heldFlushes.shift()?.();
    await store.close();
  });

  it("a read-only tool's intent whose flush fails: the next write stores the whole session", async () => {
    const log = new FlushControlledLog();
    log.holdFlushes = false;
    const store = new SessionStore({ log });
    const { session } = await store.open('s', { workDir });
    await session.append({ role: 'assistant', content: '', toolCalls: [call('c1', 'read_file')] });
    log.failNextFlush = true;
    await session.toolStarted(call('c1', 'read_file'), { readOnly: true });
    const compactionsBefore = log.compactions;
    await session.toolFinished('c1');
    expect(log.compactions).toBe(compactionsBefore + 1);
    const stored = await log.load('s');
    expect(stored?.records).toEqual([]);
    expect(stored?.snapshot.seq).toBe(3);
    expect(stored?.snapshot.journal.calls).toEqual([{ id: 'c1', started: true, finished: true }]);
    await store.close();
  });

  it('the file log says written after its write and before its flush', async () => {
    const directory = await tempDir();
    const fileSystem = new RecordingFileSystem();
    const log = new FileSessionLog({ directory, fileSystem });
    const lock = await log.acquire('s');
    await log.compact('s', newSessionSnapshot({ id: 's', workDir, now: new Date(0).toISOString() }));
    const before = fileSystem.log.length;
    let seen: string[] = [];
    await log.append(
      's',
      [{ seq: 1, at: 'b', change: { type: 'append', messages: [{ role: 'user', content: 'x' }] } }],
      { sync: true, onWritten: () => {
        seen = fileSystem.log.slice(before).map((entry) => entry.operation);
      } },
    );
    expect(seen).toContain('write');
    expect(seen).not.toContain('sync');
    expect(fileSystem.log.slice(before).map((entry) => entry.operation)).toContain('sync');
    await lock.release();
  });
});
