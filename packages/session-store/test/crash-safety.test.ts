import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import nodePath from 'node:path';
import type { Message } from '@claw/core';
import { hasErrorCode } from '@claw/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  SessionLogError,
  toolCallIncompleteText,
  toolCallStartedText,
  toolCallUnrecordedText,
  type PersistentSession,
} from '../src/index.js';
import {
  assistant,
  call,
  errno,
  fileLines,
  ManualClock,
  observation,
  RecordingFileSystem,
  rejection,
  removeTempDirs,
  sessionFile,
  tempDir,
  user,
  newProcess,
} from './fixtures.js';

afterEach(removeTempDirs);

interface Seen {
  history: Message[];
  usage: ReturnType<PersistentSession['usage']>;
  cost: ReturnType<PersistentSession['cost']>;
  updatedAt: string;
}

const seen = (session: PersistentSession): Seen => ({
  history: structuredClone([...session.history()]),
  usage: session.usage(),
  cost: session.cost(),
  updatedAt: session.updatedAt,
});

async function load(workDir: string, id = 's1'): Promise<PersistentSession> {
  return (await newProcess({ workDir })).getOrCreate(id, { workDir });
}

/** A session file with a snapshot and one record per change; `states[n]` is the state after line n+1. */
async function writeSessionWithHistory(workDir: string): Promise<{ bytes: Buffer; ends: number[]; states: Seen[] }> {
  const session = await (await newProcess({ workDir, now: new ManualClock().now })).getOrCreate('s1', { workDir });
  const states: Seen[] = [];
  const changes: (() => Promise<void>)[] = [
    () => session.append(user('first')),
    () => session.append(assistant('', [call('c1', 'bash', { command: 'echo "ü"' })])),
    () => session.toolStarted(call('c1')),
    () => session.toolFinished('c1'),
    () => session.append(observation('c1', 'ü\n')),
    () => session.recordUsage({ promptTokens: 12, completionTokens: 3, totalTokens: 15 }, 0.125),
    // The last record has multi-byte characters, so some cuts fall inside a character.
    () => session.append(assistant('日本語 — naïve café ✓'), user('next')),
  ];
  for (const change of changes) {
    await change();
    states.push(seen(session));
  }
  const bytes = await readFile(sessionFile(workDir, 's1'));
  const ends: number[] = [];
  bytes.forEach((byte, index) => {
    if (byte === 0x0a) ends.push(index + 1);
  });
  expect(ends).toHaveLength(changes.length);
  return { bytes, ends, states };
}

describe('crash safety: torn writes (SES-2)', () => {
  it('loads the last whole state from the file cut at every byte of its last record', async () => {
    const source = await tempDir();
    const { bytes, ends, states } = await writeSessionWithHistory(source);
    const lastStart = ends.at(-2) ?? 0;
    const before = states.at(-2);
    const after = states.at(-1);
    const workDir = await tempDir();
    const file = sessionFile(workDir, 's1');
    await mkdir(nodePath.dirname(file), { recursive: true });

    let cuts = 0;
    for (let cut = lastStart; cut <= bytes.length; cut += 1) {
      await writeFile(file, bytes.subarray(0, cut));
      const session = await load(workDir);
      expect(seen(session), `cut at byte ${cut}`).toEqual(cut === bytes.length ? after : before);
      cuts += 1;
    }
    expect(cuts).toBe(bytes.length - lastStart + 1);
  });

  it('loads, from the file cut at any byte after its snapshot, the state after the last whole record', async () => {
    const source = await tempDir();
    const { bytes, ends, states } = await writeSessionWithHistory(source);
    const workDir = await tempDir();
    const file = sessionFile(workDir, 's1');
    await mkdir(nodePath.dirname(file), { recursive: true });

    for (let cut = ends[0] ?? 0; cut <= bytes.length; cut += 1) {
      await writeFile(file, bytes.subarray(0, cut));
      const whole = ends.filter((end) => end <= cut).length;
      const expected = states[whole - 1];
      const loaded = seen(await load(workDir));
      // Cut after the tool call and before its Observation, the load repairs the call with
      // what the journal knew at that byte.
      const repairText = [undefined, toolCallIncompleteText, toolCallStartedText, toolCallUnrecordedText][whole - 1];
      if (repairText === undefined) {
        expect(loaded, `cut at byte ${cut}`).toEqual(expected);
      } else {
        const repaired = { role: 'tool', toolCallId: 'c1', content: repairText, isError: true };
        expect(loaded.history, `cut at byte ${cut}`).toEqual([...(expected?.history ?? []), repaired]);
        expect([loaded.usage, loaded.cost], `cut at byte ${cut}`).toEqual([expected?.usage, expected?.cost]);
      }
    }
  });

  it('drops the torn tail before writing again, so the file stays readable', async () => {
    const source = await tempDir();
    const { bytes, ends, states } = await writeSessionWithHistory(source);
    const workDir = await tempDir();
    const file = sessionFile(workDir, 's1');
    await mkdir(nodePath.dirname(file), { recursive: true });
    const lastStart = ends.at(-2) ?? 0;

    for (const cut of [lastStart + 1, lastStart + 20, bytes.length - 1]) {
      await writeFile(file, bytes.subarray(0, cut));
      const session = await load(workDir);
      await session.append(user(`after cut ${cut}`));

      const reloaded = await load(workDir);
      expect(reloaded.history()).toEqual([...(states.at(-2)?.history ?? []), user(`after cut ${cut}`)]);
      expect((await readFile(file, 'utf8')).endsWith('\n')).toBe(true);
    }
  });

  it('drops a whole last line whose checksum fails (scribbled over by a crash)', async () => {
    const source = await tempDir();
    const { bytes, ends, states } = await writeSessionWithHistory(source);
    const workDir = await tempDir();
    const file = sessionFile(workDir, 's1');
    await mkdir(nodePath.dirname(file), { recursive: true });
    const damaged = Buffer.from(bytes);
    damaged.fill(0, (ends.at(-2) ?? 0) + 5, (ends.at(-2) ?? 0) + 30);
    await writeFile(file, damaged);

    expect(seen(await load(workDir))).toEqual(states.at(-2));
  });

  it('reports damage in the middle of the log as corrupt, naming file and line, and leaves the file alone', async () => {
    const source = await tempDir();
    const { bytes, ends } = await writeSessionWithHistory(source);
    const workDir = await tempDir();
    const file = sessionFile(workDir, 's1');
    await mkdir(nodePath.dirname(file), { recursive: true });
    const damaged = Buffer.from(bytes);
    // One changed character inside line 3: still JSON, but the checksum no longer matches.
    const at = damaged.indexOf('bash', ends[1]);
    damaged.write('BASH', at);
    await writeFile(file, damaged);

    const error = await rejection(load(workDir));

    expect(error).toBeInstanceOf(SessionLogError);
    expect(error).toMatchObject({ code: 'session_corrupt', location: file, record: 3 });
    expect((error as Error).message).toContain(`${file} is corrupt at line 3`);
    expect(Buffer.compare(await readFile(file), damaged)).toBe(0);
  });

  it('reports a missing or repeated record in the middle as corrupt', async () => {
    const source = await tempDir();
    const { bytes, ends } = await writeSessionWithHistory(source);
    const workDir = await tempDir();
    const file = sessionFile(workDir, 's1');
    await mkdir(nodePath.dirname(file), { recursive: true });
    const line3 = bytes.subarray(ends[1], ends[2]);
    const withoutLine3 = Buffer.concat([bytes.subarray(0, ends[1]), bytes.subarray(ends[2])]);
    const line3Twice = Buffer.concat([bytes.subarray(0, ends[2]), line3, bytes.subarray(ends[2])]);

    for (const content of [withoutLine3, line3Twice]) {
      await writeFile(file, content);
      const error = await rejection(load(workDir));
      expect(error).toMatchObject({ code: 'session_corrupt', record: 3 + (content === line3Twice ? 1 : 0) });
    }
  });

  it('reports a cut snapshot as corrupt (a snapshot only ever appears whole, by rename)', async () => {
    const source = await tempDir();
    const { bytes, ends } = await writeSessionWithHistory(source);
    const workDir = await tempDir();
    const file = sessionFile(workDir, 's1');
    await mkdir(nodePath.dirname(file), { recursive: true });
    await writeFile(file, bytes.subarray(0, (ends[0] ?? 0) - 1));

    expect(hasErrorCode(await rejection(load(workDir)), 'session_corrupt')).toBe(true);
  });
});

describe('crash safety: failed writes (SES-4)', () => {
  it('reports a failed append, keeps it in memory, and writes it with the next change', async () => {
    const workDir = await tempDir();
    const fileSystem = new RecordingFileSystem();
    const session = await (await newProcess({ workDir, fileSystem })).getOrCreate('s1', { workDir });
    await session.append(user('one'));
    fileSystem.writeHalf = true;
    fileSystem.failWhen = (entry) => (entry.operation === 'write' ? errno('ENOSPC', 'no space left on device') : undefined);

    const error = await rejection(session.append(user('two')));

    expect(error).toBeInstanceOf(SessionLogError);
    expect(error).toMatchObject({ code: 'session_write_failed', location: sessionFile(workDir, 's1') });
    expect((error as Error).message).toContain('no space left on device');
    expect(session.history()).toEqual([user('one'), user('two')]);
    // Half a line is on disk now; a crash here would drop it.
    expect(seen(await load(workDir)).history).toEqual([user('one')]);

    fileSystem.failWhen = () => undefined;
    await session.append(user('three'));

    expect((await load(workDir)).history()).toEqual([user('one'), user('two'), user('three')]);
    expect((await fileLines(sessionFile(workDir, 's1'))).length).toBe(1);
  });

  it('flush writes what a failed write left behind, and reports when it cannot', async () => {
    const workDir = await tempDir();
    const fileSystem = new RecordingFileSystem();
    const session = await (await newProcess({ workDir, fileSystem })).getOrCreate('s1', { workDir });
    fileSystem.failWhen = (entry) => (entry.operation === 'rename' ? errno('EACCES') : undefined);

    expect(hasErrorCode(await rejection(session.append(user('one'))), 'session_write_failed')).toBe(true);
    expect(hasErrorCode(await rejection(session.flush()), 'session_write_failed')).toBe(true);
    // No session file (and no temporary one): only the lock of the process that has it open.
    expect(await readdir(nodePath.join(workDir, '.claw', 'sessions'))).toEqual(['s1.lock']);

    fileSystem.failWhen = () => undefined;
    await session.flush();

    expect((await load(workDir)).history()).toEqual([user('one')]);
  });

  it('writes the whole session again when its file vanished behind its back', async () => {
    const workDir = await tempDir();
    const manager = await newProcess({ workDir });
    const session = await manager.getOrCreate('s1', { workDir });
    await session.append(user('one'));
    await (await newProcess({ workDir })).delete('s1');

    await session.append(user('two'));

    expect((await load(workDir)).history()).toEqual([user('one'), user('two')]);
  });
});

describe('crash safety: compaction', () => {
  it('compacts the log into a snapshot and keeps everything', async () => {
    const workDir = await tempDir();
    const session = await (await newProcess({ workDir, compactMinBytes: 0 })).getOrCreate('s1', { workDir });
    const expected: Message[] = [];
    for (let index = 0; index < 60; index += 1) {
      const message = index % 2 === 0 ? user(`question ${index}`) : assistant(`answer ${index}`);
      expected.push(message);
      await session.append(message);
      await session.recordUsage({ promptTokens: 1, completionTokens: 1, totalTokens: 2 });
    }
    // A compaction may still be under way beside the last writes: a flush waits for it too.
    await session.flush();

    const lines = await fileLines(sessionFile(workDir, 's1'));
    const reloaded = await load(workDir);

    // 120 changes, yet the file was rewritten along the way: the log never outgrows the snapshot.
    expect(lines.length).toBeLessThan(40);
    expect((JSON.parse(lines[0] ?? '{}') as { type: string; seq: number }).type).toBe('snapshot');
    expect((JSON.parse(lines[0] ?? '{}') as { seq: number }).seq).toBeGreaterThan(60);
    expect(reloaded.history()).toEqual(expected);
    expect(reloaded.usage()).toEqual({ promptTokens: 60, completionTokens: 60, totalTokens: 120 });
  });

  it('a due compaction waits for a write that is not flushed: an intent, which a tool waits on, appends', async () => {
    const workDir = await tempDir();
    const session = await (await newProcess({ workDir, compactMinBytes: 0 })).getOrCreate('s1', { workDir });
    await session.append(user('first'));
    // Records now outweigh the snapshot: a compaction is due.
    await session.append(user('x'.repeat(2000)));
    const snapshotSeq = async (): Promise<number> =>
      (JSON.parse((await fileLines(sessionFile(workDir, 's1')))[0] ?? '{}') as { seq: number }).seq;
    expect(await snapshotSeq()).toBe(1);
    await session.toolStarted(call('c1'));
    const lines = await fileLines(sessionFile(workDir, 's1'));
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[2] ?? '{}')).toMatchObject({ type: 'tool_started', seq: 3 });
    // The next write nobody waits on to be flushed compacts (beside the writes after it: a
    // flush waits for it).
    await session.toolFinished('c1');
    await session.flush();
    expect(await fileLines(sessionFile(workDir, 's1'))).toHaveLength(1);
    expect(await snapshotSeq()).toBe(4);
    expect((await load(workDir)).history()).toEqual([user('first'), user('x'.repeat(2000))]);
  });

  it('flushed writes put off a due compaction at most eight times in a row', async () => {
    const workDir = await tempDir();
    const session = await (await newProcess({ workDir, compactMinBytes: 0, syncEveryWrite: true })).getOrCreate('s1', { workDir });
    await session.append(user('first'));
    await session.append(user('x'.repeat(2000)));
    for (let index = 0; index < 8; index += 1) await session.append(user(`more ${index}`));
    expect(await fileLines(sessionFile(workDir, 's1'))).toHaveLength(10);
    await session.append(user('ninth'));
    await session.flush();
    expect(await fileLines(sessionFile(workDir, 's1'))).toHaveLength(1);
    expect((await load(workDir)).history()).toHaveLength(11);
  });

  it('rewrites the file as a small snapshot on clear', async () => {
    const workDir = await tempDir();
    const session = await (await newProcess({ workDir, compactMinBytes: 2000 })).getOrCreate('s1', { workDir });
    for (let index = 0; index < 50; index += 1) await session.append(user(`long message number ${index} `.repeat(4)));
    // No compaction under way beside the appends (the clear's would wait for it).
    await session.flush();
    await session.clear();
    await session.append(user('fresh start'));
    await session.flush();

    const lines = await fileLines(sessionFile(workDir, 's1'));
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ type: 'snapshot', seq: 51, session: { history: [] } });
    expect(JSON.parse(lines[1] ?? '{}')).toMatchObject({ type: 'append', seq: 52, messages: [user('fresh start')] });
    expect((await load(workDir)).history()).toEqual([user('fresh start')]);
  });

  it.each([
    ['creating the temporary file', 'open', false],
    ['writing the temporary file', 'write', false],
    ['flushing the temporary file', 'sync', false],
    ['renaming it over the log', 'rename', false],
    ['syncing the folder after the rename', 'open-folder', true],
  ] as const)('survives a crash while %s', async (_step, step, committed) => {
    const workDir = await tempDir();
    const fileSystem = new RecordingFileSystem();
    const file = sessionFile(workDir, 's1');
    const folder = nodePath.dirname(file);
    const session = await (await newProcess({ workDir, fileSystem, compactMinBytes: 0 })).getOrCreate('s1', { workDir });
    await session.append(user('m0'));
    let acknowledged: Message[] = [...session.history()];
    let crashed = false;
    fileSystem.failWhen = (entry) => {
      const snapshotStep =
        (step === 'open' && entry.operation === 'open' && entry.flags === 'wx') ||
        (step === 'write' && entry.operation === 'write' && entry.path.endsWith('.tmp')) ||
        (step === 'sync' && entry.operation === 'sync' && entry.path.endsWith('.tmp')) ||
        (step === 'rename' && entry.operation === 'rename') ||
        (step === 'open-folder' && entry.operation === 'open' && entry.path === folder);
      if (!snapshotStep) return undefined;
      fileSystem.crash();
      crashed = true;
      return errno('EIO', 'crash');
    };

    for (let index = 1; !crashed; index += 1) {
      try {
        await session.append(user(`m${index}`));
        acknowledged = [...session.history()];
      } catch {
        break;
      }
    }

    const reloaded = await load(workDir);
    // Before the rename the old log is the session; after it, the new snapshot. Either way the
    // file holds exactly what was acknowledged.
    expect(reloaded.history()).toEqual(acknowledged);
    expect(reloaded.history().length).toBeGreaterThan(2);
    const lines = (await fileLines(file)).map((line) => JSON.parse(line) as { type: string; seq: number });
    const first = lines[0] ?? { type: 'none', seq: 0 };
    expect(first.type).toBe('snapshot');
    // The new snapshot is of what was stored when the compaction began, and the appends made while
    // it worked follow it as records, up to the last acknowledged change; the old one is of seq 1.
    if (committed) {
      expect(first.seq).toBeGreaterThan(1);
      expect(lines.slice(1).map((line) => line.seq)).toEqual(
        Array.from({ length: acknowledged.length - first.seq }, (_, index) => first.seq + index + 1),
      );
    } else {
      expect(first.seq).toBe(1);
    }

    // A crash may leave a temporary file; it is never read, and the next snapshot removes it.
    const leftovers = (await readdir(folder)).filter((name) => name.endsWith('.tmp'));
    expect(leftovers.length).toBe(step === 'write' || step === 'sync' || step === 'rename' ? 1 : 0);
    const next = await (await newProcess({ workDir, compactMinBytes: 0 })).getOrCreate('s1', { workDir });
    for (let index = 0; index < 20; index += 1) await next.append(user(`later ${index}`));
    await next.flush();
    // The session file and the lock of the process that has it open now; no temporary file.
    expect((await readdir(folder)).sort()).toEqual(['s1.jsonl', 's1.lock']);
  });

  it('ignores a complete temporary snapshot left next to an intact log', async () => {
    const workDir = await tempDir();
    const session = await (await newProcess({ workDir })).getOrCreate('s1', { workDir });
    await session.append(user('one'));
    await session.append(user('two'));
    const file = sessionFile(workDir, 's1');
    const oldLog = await readFile(file, 'utf8');
    const other = await tempDir();
    const otherSession = await (await newProcess({ workDir: other })).getOrCreate('s1', { workDir: other });
    await otherSession.append(user('something else entirely'));
    await writeFile(`${file}.00000000-0000-4000-8000-000000000000.tmp`, await readFile(sessionFile(other, 's1')));

    const reloaded = await load(workDir);

    expect(reloaded.history()).toEqual([user('one'), user('two')]);
    expect(await readFile(file, 'utf8')).toBe(oldLog);
  });
});
