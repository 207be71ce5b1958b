import { afterEach, describe, expect, it } from 'vitest';
import {
  FileSessionLog,
  MemorySessionLog,
  SessionStore,
  newSessionSnapshot,
  type AppendResult,
  type LogRecord,
} from '../src/index.js';
import { RecordingFileSystem, call, removeTempDirs, tempDir } from './fixtures.js';

afterEach(removeTempDirs);

const workDir = '/work/space';

/** A memory log whose flushes wait until the test lets them go. */
class SlowFlushLog extends MemorySessionLog {
  flushes: Array<() => void> = [];

  override async append(
    id: string,
    records: readonly LogRecord[],
    options: { sync: boolean; onWritten?: () => void },
  ): Promise<AppendResult> {
    const result = await super.append(id, records, options);
    options.onWritten?.();
    if (options.sync) await new Promise<void>((resolve) => this.flushes.push(resolve));
    return result;
  }
}

function settled(promise: Promise<unknown>): () => boolean {
  let done = false;
  void promise.then(() => {
    done = true;
  });
  return () => done;
}

describe('a batch with an intent: what needs no flush is stored once written (PERF-1)', () => {
  it('an event in the same batch as an intent is stored before the intent is flushed', async () => {
    const log = new SlowFlushLog();
    const store = new SessionStore({ log });
    const { session } = await store.open('s', { workDir });
    await session.append({ role: 'user', content: 'go' });
    // The same tick: one batch, one append, one flush.
    const { written } = session.appendEvent({ type: 'thinking', task_id: 't', turn: 1 });
    const started = session.toolStarted(call('c1'));
    const eventStored = settled(written);
    const intentStored = settled(started);
    while (log.flushes.length === 0) await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(eventStored()).toBe(true);
    expect(intentStored()).toBe(false);
    log.flushes.shift()?.();
    await started;
    expect(intentStored()).toBe(true);
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
