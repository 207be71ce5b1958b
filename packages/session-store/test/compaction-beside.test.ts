import { readdir } from 'node:fs/promises';
import nodePath from 'node:path';
import { settlesWithin } from '@claw/core';
import { afterEach, describe, expect, it } from 'vitest';
import { FileSessionLog, type LogRecord, type SessionFileHandle } from '../src/index.js';
import { emptySnapshot } from '../src/testing/index.js';
import {
  RecordingFileSystem,
  call,
  errno,
  fileLines,
  newProcess,
  removeTempDirs,
  sessionFile,
  tempDir,
  user,
} from './fixtures.js';

afterEach(removeTempDirs);

const delta = (content: string) => ({ type: 'text_delta' as const, task_id: 'task-1', content });

/**
 * A file system on which, once `hold` is set, the flush of a snapshot's temporary file waits until
 * `release`: a disk that is slow to flush (a busy machine, a network disk).
 */
class SlowFlushes extends RecordingFileSystem {
  hold = false;
  /** Resolves once a temporary file's flush is waiting. */
  readonly flushWaiting: Promise<void>;
  private reached: () => void = () => undefined;
  private opened: () => void = () => undefined;
  private readonly gate = new Promise<void>((resolve) => {
    this.opened = resolve;
  });

  constructor() {
    super();
    this.flushWaiting = new Promise((resolve) => {
      this.reached = resolve;
    });
  }

  release(): void {
    this.opened();
  }

  override async open(path: string, flags: string | number, mode?: number): Promise<SessionFileHandle> {
    const handle = await super.open(path, flags, mode);
    if (!this.hold || !path.endsWith('.tmp')) return handle;
    return {
      ...handle,
      sync: async () => {
        this.reached();
        await this.gate;
        await handle.sync();
      },
    };
  }
}

/** A session whose next event write compacts, on a file system whose flushes of it wait. */
async function compactionUnderWay() {
  const workDir = await tempDir();
  const fileSystem = new SlowFlushes();
  const manager = await newProcess({ workDir, fileSystem, compactMinBytes: 0 });
  const session = await manager.getOrCreate('s1', { workDir });
  await session.append(user('first'));
  // The records now outweigh the snapshot: the next write that is not flushed compacts.
  await session.append(user('x'.repeat(2000)));
  fileSystem.hold = true;
  const from = fileSystem.log.length;
  const compacting = session.appendEvent(delta('a'));
  await compacting.written;
  await fileSystem.flushWaiting;
  return { workDir, fileSystem, session, from };
}

function appendRecord(seq: number, content: string): LogRecord {
  const change = { type: 'append' as const, messages: [user(content)] };
  return { seq, at: '2030-01-01T00:00:00.000Z', change };
}

const seqOf = (line: string | undefined): number => (JSON.parse(line ?? '{}') as { seq: number }).seq;

describe('a compaction goes on beside the writes after it (CH-5: events wait for no flush)', () => {
  it('events written while the snapshot is flushed are not held back, and follow it once it is in place', async () => {
    const { workDir, fileSystem, session } = await compactionUnderWay();
    const file = sessionFile(workDir, 's1');
    const before = await fileLines(file);

    // The snapshot's flush waits, and the writes after it do not.
    const later = ['b', 'c', 'd'].map((content) => session.appendEvent(delta(content)));
    expect(await settlesWithin(Promise.all(later.map((entry) => entry.written)), 5000)).toBe(true);
    // Into the session file as it is, for now.
    expect(await fileLines(file)).toHaveLength(before.length + 3);

    fileSystem.release();
    await session.flush();
    const lines = await fileLines(file);
    // The snapshot is of everything up to the write that compacted; the events written while it
    // was flushed follow it as records.
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ type: 'snapshot' });
    const eventSeqs = lines.slice(1).map((line) => (JSON.parse(line) as { event: { seq: number } }).event.seq);
    expect(eventSeqs).toEqual(later.map((entry) => entry.event.seq));
    expect(seqOf(lines[1])).toBe(seqOf(lines[0]) + 1);

    const reloaded = await (await newProcess({ workDir })).getOrCreate('s1', { workDir });
    expect(reloaded.history()).toEqual([user('first'), user('x'.repeat(2000))]);
    expect(reloaded.lastEventSeq()).toBe(later.at(-1)?.event.seq);
  });

  it('a flushed change made meanwhile: the new file is flushed again before it takes the old one\'s place', async () => {
    const { workDir, fileSystem, session, from } = await compactionUnderWay();
    // An intent is flushed in the session file as it is, and does not wait for the compaction.
    expect(await settlesWithin(session.toolStarted(call('c1')), 5000)).toBe(true);

    fileSystem.release();
    await session.flush();
    // The temporary file: the snapshot, flushed; the intent carried over, flushed; then renamed.
    const steps = fileSystem.log
      .slice(from)
      .filter((entry) => entry.path.endsWith('.tmp') || entry.operation === 'rename')
      .map((entry) => entry.operation);
    expect(steps).toEqual(['open', 'write', 'sync', 'close', 'open', 'write', 'sync', 'close', 'rename']);
    // The intent is a record after the snapshot in the new file.
    const lines = await fileLines(sessionFile(workDir, 's1'));
    expect(lines.slice(1).map((line) => (JSON.parse(line) as { type: string }).type)).toEqual(['tool_started']);
  });

  it('an append that fails meanwhile: the compaction gives up, and the next write stores the whole session', async () => {
    const { workDir, fileSystem, session } = await compactionUnderWay();
    const file = sessionFile(workDir, 's1');
    let failures = 0;
    fileSystem.failWhen = (entry) => {
      if (entry.operation !== 'write' || entry.path !== file || failures > 0) return undefined;
      failures += 1;
      return errno('EIO', 'disk error');
    };
    const failed = session.appendEvent(delta('b'));
    await expect(failed.written).rejects.toThrow();

    fileSystem.release();
    // The failed write is put right by a whole snapshot, once the compaction has given up.
    await session.flush();
    const lines = await fileLines(file);
    expect(lines).toHaveLength(1);
    expect((await readdir(nodePath.dirname(file))).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    const reloaded = await (await newProcess({ workDir })).getOrCreate('s1', { workDir });
    expect(reloaded.history()).toEqual([user('first'), user('x'.repeat(2000))]);
    expect(reloaded.lastEventSeq()).toBe(failed.event.seq);
  });

  it('an append made as soon as the compaction is asked for is carried over too (the log, directly)', async () => {
    const directory = nodePath.join(await tempDir(), 'sessions');
    const log = new FileSessionLog({ directory });
    await log.compact('s', emptySnapshot('s'));
    await log.append('s', [appendRecord(1, 'one')], { sync: false });
    const compacted = log.compactBeside('s', emptySnapshot('s', { seq: 1, history: [user('one')] }));
    // Not waited for: the writer's next batch can come before the compaction's first step.
    const appended = log.append('s', [appendRecord(2, 'two')], { sync: false });
    await Promise.all([compacted, appended]);
    const lines = await fileLines(nodePath.join(directory, 's.jsonl'));
    expect(lines.map(seqOf)).toEqual([1, 2]);
    expect((await new FileSessionLog({ directory }).load('s'))?.records.map((record) => record.seq)).toEqual([2]);
  });
});
