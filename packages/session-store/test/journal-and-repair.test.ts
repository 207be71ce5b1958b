import { readFile, stat } from 'node:fs/promises';
import type { Message } from '@claw/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  describeRepair,
  toolCallIncompleteText,
  toolCallNeverStartedText,
  toolCallStartedText,
  toolCallUnrecordedText,
  type PersistentSession,
} from '../src/index.js';
import {
  assistant,
  call,
  fileLines,
  ManualClock,
  observation,
  RecordingFileSystem,
  removeTempDirs,
  sessionFile,
  tempDir,
  user,
  newProcess,
} from './fixtures.js';

afterEach(removeTempDirs);

const repairedWith = (toolCallId: string, content: string): Message => ({ role: 'tool', toolCallId, content, isError: true });

async function load(workDir: string, fileSystem?: RecordingFileSystem): Promise<PersistentSession> {
  const manager = await newProcess(fileSystem === undefined ? { workDir } : { workDir, fileSystem });
  return manager.getOrCreate('s1', { workDir });
}

/**
 * What the engine does with a session (beforeRun, the prompt, the model's reply with tool calls,
 * then the journal around each tool), stopped where a crash would stop it.
 */
async function interruptedRun(session: PersistentSession, started: string[], finished: string[]): Promise<void> {
  await session.beforeRun();
  await session.append(user('fix the build'));
  await session.append(assistant('', [call('c1', 'read_file', { path: 'a.ts' }), call('c2', 'bash', { command: 'make' }), call('c3', 'write_file', { path: 'b.ts' })]));
  for (const id of started) await session.toolStarted(call(id));
  for (const id of finished) await session.toolFinished(id);
}

describe('orphan repair on load and before a run (SES-7, ENG-10)', () => {
  it('reads back a session that ended on an unpaired assistant already paired (seed repair 4)', async () => {
    const workDir = await tempDir();
    const session = await load(workDir);
    await session.append(user('go'), assistant('', [call('c1'), call('c2')]), observation('c1'));

    const reloaded = await load(workDir);

    expect(reloaded.history()).toEqual([
      user('go'),
      assistant('', [call('c1'), call('c2')]),
      observation('c1'),
      repairedWith('c2', toolCallIncompleteText),
    ]);
    expect(describeRepair(reloaded.lastRepair())).toEqual(['bash c2: incomplete (previous run was interrupted)']);
    // The repair is saved: the next load has nothing to repair.
    const again = await load(workDir);
    expect(again.history()).toEqual(reloaded.history());
    expect(again.lastRepair()).toEqual([]);
  });

  it('inserts the Observation before a prompt that was saved after the call (seed repair 2)', async () => {
    const workDir = await tempDir();
    const session = await load(workDir);
    await session.append(user('go'), assistant('', [call('c1')]), user('next sentence'));

    expect((await load(workDir)).history()).toEqual([
      user('go'),
      assistant('', [call('c1')]),
      repairedWith('c1', toolCallIncompleteText),
      user('next sentence'),
    ]);
  });

  it('leaves a paired history untouched: no write, same bytes and mtime, same updatedAt (seed repair 3)', async () => {
    const workDir = await tempDir();
    const first = await load(workDir);
    await first.append(user('go'), assistant('', [call('c1')]), observation('c1'), assistant('done'));
    const file = sessionFile(workDir, 's1');
    const bytes = await readFile(file);
    const { mtimeMs, size } = await stat(file);
    const fileSystem = new RecordingFileSystem();

    const session = await load(workDir, fileSystem);
    const updatedAt = session.updatedAt;
    await session.beforeRun();

    // Opening takes the session's lock (RT-5); the session file itself is not touched.
    const touchingFile = (entry: { path: string }) => entry.path === file || entry.path.startsWith(`${file}.`);
    expect(fileSystem.writes().filter(touchingFile)).toEqual([]);
    expect(Buffer.compare(await readFile(file), bytes)).toBe(0);
    expect(await stat(file)).toMatchObject({ mtimeMs, size });
    expect(session.updatedAt).toBe(updatedAt);
    expect(session.updatedAt).toBe(first.updatedAt);
    expect(session.lastRepair()).toEqual([]);
  });

  it('repairs before a run, so the history the engine then sends is paired (seed repair 5, restated)', async () => {
    const workDir = await tempDir();
    const clock = new ManualClock();
    const session = await (await newProcess({ workDir, now: clock.now })).getOrCreate('s1', { workDir });
    // A history that got unpaired while live (e.g. the same object after a failed run).
    await session.append(user('go'), assistant('', [call('c1')]));
    const before = session.updatedAt;

    await session.beforeRun();
    await session.append(user('again'));

    expect(session.history()).toEqual([user('go'), assistant('', [call('c1')]), repairedWith('c1', toolCallIncompleteText), user('again')]);
    expect(session.updatedAt).not.toBe(before);
    expect((await load(workDir)).history()).toEqual(session.history());
    expect((await fileLines(sessionFile(workDir, 's1'))).map((line) => (JSON.parse(line) as { type: string }).type)).toEqual([
      'snapshot',
      'repair',
      'append',
    ]);
  });
});

describe('tool journal (SES-8)', () => {
  it('has the start on disk, flushed, before toolStarted resolves; the finish is not flushed', async () => {
    const workDir = await tempDir();
    const fileSystem = new RecordingFileSystem();
    const session = await load(workDir, fileSystem);
    await session.append(assistant('', [call('c1')]));
    const file = sessionFile(workDir, 's1');

    fileSystem.log.length = 0;
    await session.toolStarted(call('c1'));
    const afterStart = fileSystem.writes().map((entry) => `${entry.operation} ${entry.path === file ? 'file' : entry.path}`);
    const lastLine = (await fileLines(file)).at(-1) ?? '';

    fileSystem.log.length = 0;
    await session.toolFinished('c1');
    const afterFinish = fileSystem.writes().map((entry) => entry.operation);

    // The file is opened once and kept open for the appends that follow.
    expect(afterStart).toEqual(['open file', 'write file', 'sync file']);
    expect(JSON.parse(lastLine)).toMatchObject({ type: 'tool_started', call: call('c1') });
    expect(afterFinish).toEqual(['write']);
  });

  it('flushes every write when asked to', async () => {
    const workDir = await tempDir();
    const fileSystem = new RecordingFileSystem();
    const session = await (await newProcess({ workDir, fileSystem, syncEveryWrite: true })).getOrCreate('s1', { workDir });
    await session.append(user('one'));

    fileSystem.log.length = 0;
    await session.append(user('two'));

    expect(fileSystem.writes().map((entry) => entry.operation)).toEqual(['open', 'write', 'sync']);
  });

  it('tells the model which calls never started, which started, and which finished unsaved', async () => {
    const workDir = await tempDir();
    await interruptedRun(await load(workDir), ['c2', 'c3'], ['c3']);

    const reloaded = await load(workDir);

    expect(reloaded.history().slice(2)).toEqual([
      repairedWith('c1', toolCallNeverStartedText),
      repairedWith('c2', toolCallStartedText),
      repairedWith('c3', toolCallUnrecordedText),
    ]);
    expect(describeRepair(reloaded.lastRepair())).toEqual([
      'read_file c1: never started',
      'bash c2: started, outcome unknown',
      'write_file c3: finished, result not saved',
    ]);
  });

  it('says "never started" for every call of a wave that crashed before its first tool ran, once the journal is in use', async () => {
    const workDir = await tempDir();
    const session = await load(workDir);
    await interruptedRun(session, ['c1', 'c2', 'c3'], ['c1', 'c2', 'c3']);
    await session.append(observation('c1'), observation('c2'), observation('c3'));
    await session.append(assistant('', [call('c4')]));

    const reloaded = await load(workDir);

    expect(reloaded.history().at(-1)).toEqual(repairedWith('c4', toolCallNeverStartedText));
  });

  it('uses the SES-7 text for a session that never kept a journal', async () => {
    const workDir = await tempDir();
    await interruptedRun(await load(workDir), [], []);

    const reloaded = await load(workDir);

    expect(reloaded.history().slice(2)).toEqual([
      repairedWith('c1', toolCallIncompleteText),
      repairedWith('c2', toolCallIncompleteText),
      repairedWith('c3', toolCallIncompleteText),
    ]);
  });

  it('forgets a journal entry once its Observation is saved, also when a provider reuses the id', async () => {
    const workDir = await tempDir();
    const session = await load(workDir);
    await session.append(assistant('', [call('call_0')]));
    await session.toolStarted(call('call_0'));
    await session.toolFinished('call_0');
    await session.append(observation('call_0'));
    // The next turn reuses the id; the crash comes before its tool started.
    await session.append(assistant('', [call('call_0')]));

    expect((await load(workDir)).history().at(-1)).toEqual(repairedWith('call_0', toolCallNeverStartedText));
  });

  it('keeps the journal across a compaction', async () => {
    const workDir = await tempDir();
    const session = await (await newProcess({ workDir, compactMinBytes: 0 })).getOrCreate('s1', { workDir });
    await session.append(assistant('', [call('c1'), call('c2')]));
    await session.toolStarted(call('c1'));
    for (let index = 0; index < 10; index += 1) {
      await session.recordUsage({ promptTokens: 1, completionTokens: 1, totalTokens: 2 });
    }
    await session.flush();

    expect((await fileLines(sessionFile(workDir, 's1'))).length).toBeLessThan(10);
    expect((await load(workDir)).history().slice(1)).toEqual([
      repairedWith('c1', toolCallStartedText),
      repairedWith('c2', toolCallNeverStartedText),
    ]);
  });

  it('lastRepair shows the latest pass: what the load repaired, then nothing after a clean beforeRun', async () => {
    const workDir = await tempDir();
    await interruptedRun(await load(workDir), ['c1'], []);

    const reloaded = await load(workDir);
    expect(reloaded.lastRepair().map((entry) => [entry.call.id, entry.state])).toEqual([
      ['c1', 'started'],
      ['c2', 'never_started'],
      ['c3', 'never_started'],
    ]);

    await reloaded.beforeRun();
    expect(reloaded.lastRepair()).toEqual([]);
  });
});
