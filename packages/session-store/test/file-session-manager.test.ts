import { cp, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import nodePath from 'node:path';
import { hasErrorCode } from '@claw/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  FileSessionLog,
  FileSessionManager,
  SessionLogError,
  SessionStoreError,
  sessionRecordVersion,
  type UnreadableSession,
} from '../src/index.js';
import {
  assistant,
  call,
  fileLines,
  ManualClock,
  observation,
  rejection,
  removeTempDirs,
  sealLine,
  sessionFile,
  tempDir,
  treeOf,
  user,
  newProcess,
} from './fixtures.js';

afterEach(removeTempDirs);

const usage = (promptTokens: number, completionTokens: number) => ({
  promptTokens,
  completionTokens,
  totalTokens: promptTokens + completionTokens,
});

describe('FileSessionManager: persistence (SES-1, SES-2, SES-5)', () => {
  it('keeps history, tokens, cost and createdAt for a new manager (seed persistence 1)', async () => {
    const workDir = await tempDir();
    const clock = new ManualClock();
    const session = await (await newProcess({ workDir, now: clock.now })).getOrCreate('s1', { workDir });
    await session.append(user('hello'), assistant('hi there'));
    await session.recordUsage(usage(100, 20), 0.25);
    await session.recordUsage(usage(10, 2));

    const reloaded = await (await newProcess({ workDir })).getOrCreate('s1', { workDir });

    expect(reloaded.history()).toEqual([user('hello'), assistant('hi there')]);
    expect(reloaded.usage()).toEqual({ promptTokens: 110, completionTokens: 22, totalTokens: 132 });
    expect(reloaded.cost()).toEqual({ usd: 0.25, unpricedCalls: 1 });
    expect(reloaded.createdAt).toBe('2030-01-01T00:00:00.000Z');
    expect(reloaded.updatedAt).toBe('2030-01-01T00:00:03.000Z');
    expect(reloaded.id).toBe('s1');
    expect(reloaded.workDir).toBe(workDir);
  });

  it('writes no session file on the first getOrCreate; the file appears on the first change (seed 2)', async () => {
    const workDir = await tempDir();
    const manager = await newProcess({ workDir });
    const session = await manager.getOrCreate('s1', { workDir });

    // Only the lock that says this process has the session open (RT-5).
    expect(await treeOf(workDir)).toEqual(['.claw', '.claw/.gitignore', '.claw/sessions', '.claw/sessions/s1.lock']);
    await session.append(user('hello'));
    expect(await treeOf(workDir)).toEqual(['.claw', '.claw/.gitignore', '.claw/sessions', '.claw/sessions/s1.jsonl', '.claw/sessions/s1.lock']);
    await manager.close();
    expect(await treeOf(workDir)).toEqual(['.claw', '.claw/.gitignore', '.claw/sessions', '.claw/sessions/s1.jsonl']);
  });

  it('round-trips tool calls, their ids and raw argument text exactly (seed 3)', async () => {
    const workDir = await tempDir();
    const raw = '{"path": "a.txt",\n  "nested": {"list": [1, 2.50, "ü"]}}';
    const messages = [
      assistant('', [{ id: 'call_1', name: 'write_file', arguments: raw }, call('call_2', 'bash', { command: 'ls' })]),
      { role: 'tool' as const, toolCallId: 'call_1', content: 'wrote', isError: false },
      { role: 'tool' as const, toolCallId: 'call_2', content: 'bash failed', isError: true },
      { role: 'system' as const, content: 'be brief' },
    ];
    await (await (await newProcess({ workDir })).getOrCreate('s1', { workDir })).append(...messages);

    const reloaded = await (await newProcess({ workDir })).getOrCreate('s1', { workDir });

    expect(reloaded.history()).toEqual(messages);
    const first = reloaded.history()[0];
    expect(first?.role === 'assistant' && first.toolCalls?.[0]?.arguments).toBe(raw);
  });

  it('clear empties the history and keeps token and cost totals, also after reload (seed 4, SES-5)', async () => {
    const workDir = await tempDir();
    const manager = await newProcess({ workDir });
    const session = await manager.getOrCreate('s1', { workDir });
    await session.append(user('one'), assistant('two'));
    await session.recordUsage(usage(50, 5), 0.5);

    await session.clear();
    await session.append(user('after clear'));

    const reloaded = await (await newProcess({ workDir })).getOrCreate('s1', { workDir });
    expect(session.history()).toEqual([user('after clear')]);
    expect(reloaded.history()).toEqual([user('after clear')]);
    expect(reloaded.usage()).toEqual(usage(50, 5));
    expect(reloaded.cost()).toEqual({ usd: 0.5, unpricedCalls: 0 });
  });

  it('clear through the manager works on a session that is not loaded', async () => {
    const workDir = await tempDir();
    const session = await (await newProcess({ workDir })).getOrCreate('s1', { workDir });
    await session.append(user('one'));
    await session.recordUsage(usage(7, 3), 0.1);

    await (await newProcess({ workDir })).clear('s1');

    const reloaded = await (await newProcess({ workDir })).getOrCreate('s1', { workDir });
    expect(reloaded.history()).toEqual([]);
    expect(reloaded.usage()).toEqual(usage(7, 3));
  });

  it('clear of an empty session writes nothing', async () => {
    const workDir = await tempDir();
    const session = await (await newProcess({ workDir })).getOrCreate('s1', { workDir });

    await session.clear();

    expect(await treeOf(workDir)).toEqual(['.claw', '.claw/.gitignore', '.claw/sessions', '.claw/sessions/s1.lock']);
  });

  it('reloads with the caller\'s workDir when the workspace moved, keeping createdAt and totals (seed 5)', async () => {
    const root = await tempDir();
    const before = nodePath.join(root, 'before');
    const after = nodePath.join(root, 'after');
    await mkdir(before);
    const clock = new ManualClock('2030-05-05T05:05:05.000Z');
    const session = await (await newProcess({ workDir: before, now: clock.now })).getOrCreate('s1', { workDir: before });
    await session.append(user('hello'));
    await session.recordUsage(usage(3, 4), 0.01);
    await cp(before, after, { recursive: true });

    const moved = await (await newProcess({ workDir: after })).getOrCreate('s1', { workDir: after });

    expect(moved.workDir).toBe(after);
    expect(moved.createdAt).toBe('2030-05-05T05:05:05.000Z');
    expect(moved.usage()).toEqual(usage(3, 4));
    expect(moved.cost()).toEqual({ usd: 0.01, unpricedCalls: 0 });
    expect(moved.history()).toEqual([user('hello')]);
  });

  it('a new manager sees the previous run\'s messages in what the engine reads (seed 8, restated)', async () => {
    const workDir = await tempDir();
    const first = await (await newProcess({ workDir })).getOrCreate('terminal_default', { workDir });
    await first.beforeRun();
    await first.append(user('my name is Ada'), assistant('Hello Ada'));

    const second = await (await newProcess({ workDir })).getOrCreate('terminal_default', { workDir });
    await second.beforeRun();
    await second.append(user('what is my name?'));

    expect(second.history().map((message) => message.content)).toEqual(['my name is Ada', 'Hello Ada', 'what is my name?']);
  });

  it('returns one object per id, also to concurrent callers', async () => {
    const workDir = await tempDir();
    const manager = await newProcess({ workDir });

    const [a, b] = await Promise.all([manager.getOrCreate('s1', { workDir }), manager.getOrCreate('s1', { workDir })]);
    const c = await manager.getOrCreate('s1', { workDir: `${workDir}/` });

    expect(a).toBe(b);
    expect(c).toBe(a);
    expect(await manager.getOrCreate('s2', { workDir })).not.toBe(a);
  });

  it('refuses a live session for another workspace', async () => {
    const workDir = await tempDir();
    const manager = await newProcess({ workDir });
    await manager.getOrCreate('s1', { workDir });

    const error = await rejection(manager.getOrCreate('s1', { workDir: nodePath.join(workDir, 'other') }));

    expect(hasErrorCode(error, 'session_workdir_conflict')).toBe(true);
  });

  it('writes version 2 JSON lines: a snapshot, then one record per change, each with a checksum', async () => {
    const workDir = await tempDir();
    const session = await (await newProcess({ workDir, now: new ManualClock().now })).getOrCreate('s1', { workDir });
    await session.append(user('one'));
    await session.append(user('two'));
    await session.recordUsage(usage(1, 2));
    await session.toolStarted(call('c1'));
    await session.toolFinished('c1');
    await session.append(observation('c1'));

    const records = (await fileLines(sessionFile(workDir, 's1'))).map((line) => JSON.parse(line) as Record<string, unknown>);

    expect(records.map((record) => [record.v, record.seq, record.type])).toEqual([
      [sessionRecordVersion, 1, 'snapshot'],
      [sessionRecordVersion, 2, 'append'],
      [sessionRecordVersion, 3, 'usage'],
      [sessionRecordVersion, 4, 'tool_started'],
      [sessionRecordVersion, 5, 'tool_finished'],
      [sessionRecordVersion, 6, 'append'],
    ]);
    expect(records.every((record) => typeof record.sum === 'string' && /^[0-9a-f]{8}$/.test(record.sum))).toBe(true);
    expect(records[1]).toMatchObject({ at: '2030-01-01T00:00:02.000Z', messages: [user('two')] });
    expect(records[2]).toMatchObject({ usage: usage(1, 2) });
    expect(records[2]).not.toHaveProperty('costUsd');
    expect(records[0]).toMatchObject({
      session: { id: 's1', createdAt: '2030-01-01T00:00:00.000Z', history: [user('one')] },
    });
  });
});

describe('FileSessionManager: what it refuses (SES-2, SES-3)', () => {
  it.each([
    ['../escape'],
    ['a/b'],
    ['a\\b'],
    ['..'],
    ['x..y'],
    ['nul\u0000byte'],
    ['line\nbreak'],
    [''],
    ['x'.repeat(129)],
    ['é'.repeat(65)],
  ])('rejects the unsafe id %j and writes nothing', async (id) => {
    const workDir = await tempDir();

    const error = await rejection((await newProcess({ workDir })).getOrCreate(id, { workDir }));

    expect(error).toBeInstanceOf(SessionStoreError);
    expect((error as SessionStoreError).code).toBe('invalid_session_id');
    expect((error as Error).message).toContain('Invalid session id');
    expect(await treeOf(workDir)).toEqual([]);
  });

  it('accepts ids that are plain file names', async () => {
    const workDir = await tempDir();
    const manager = await newProcess({ workDir });
    for (const id of ['terminal_default', 'a.b-c', 'x'.repeat(128), 'ü']) {
      await (await manager.getOrCreate(id, { workDir })).append(user(id));
    }

    expect((await manager.list()).map((summary) => summary.id).sort()).toEqual(['a.b-c', 'terminal_default', 'x'.repeat(128), 'ü'].sort());
  });

  it('rejects an empty workDir (seed 6)', async () => {
    const workDir = await tempDir();

    const error = await rejection((await newProcess({ workDir })).getOrCreate('s1', { workDir: '' }));

    expect(hasErrorCode(error, 'invalid_work_dir')).toBe(true);
    expect(() => new FileSessionManager({ workDir: ' ' })).toThrow(SessionStoreError);
  });

  it('treats an empty file as a new session (seed 6)', async () => {
    const workDir = await tempDir();
    const file = sessionFile(workDir, 's1');
    await mkdir(nodePath.dirname(file), { recursive: true });
    await writeFile(file, '');

    const session = await (await newProcess({ workDir })).getOrCreate('s1', { workDir });
    expect(session.history()).toEqual([]);
    await session.append(user('first'));

    expect((await (await newProcess({ workDir })).getOrCreate('s1', { workDir })).history()).toEqual([user('first')]);
  });

  it.each([
    ['not JSON at all', 'garbage\nmore garbage\n', 1],
    ['the seed\'s pretty-printed JSON', '{\n  "id": "s1",\n  "history": []\n}\n', 1],
    ['a log without snapshot', sealLine({ v: 1, seq: 1, at: '2030-01-01T00:00:00.000Z', type: 'clear' }) + sealLine({ v: 1, seq: 2, at: '2030-01-01T00:00:00.000Z', type: 'clear' }), 1],
  ])('reports a corrupt file (%s) naming the file, and leaves it as it was', async (_name, content, line) => {
    const workDir = await tempDir();
    const file = sessionFile(workDir, 's1');
    await mkdir(nodePath.dirname(file), { recursive: true });
    await writeFile(file, content);
    const manager = await newProcess({ workDir });

    const error = await rejection(manager.getOrCreate('s1', { workDir }));

    expect(error).toBeInstanceOf(SessionLogError);
    expect(error).toMatchObject({ code: 'session_corrupt', location: file, record: line });
    expect((error as Error).message).toContain(file);
    expect(await readFile(file, 'utf8')).toBe(content);
    // Not cached as a new session: asking again reads the file again.
    expect(hasErrorCode(await rejection(manager.getOrCreate('s1', { workDir })), 'session_corrupt')).toBe(true);
    expect(await readFile(file, 'utf8')).toBe(content);
  });

  it('reports a file from a newer claw as unsupported, and leaves it as it was', async () => {
    const workDir = await tempDir();
    const session = await (await newProcess({ workDir })).getOrCreate('s1', { workDir });
    await session.append(user('one'));
    const file = sessionFile(workDir, 's1');
    const newer = (await readFile(file, 'utf8')) + sealLine({ v: sessionRecordVersion + 1, seq: 2, at: '2030-01-01T00:00:00.000Z', type: 'append', messages: [] }) + sealLine({ v: sessionRecordVersion + 1, seq: 3, at: '2030-01-01T00:00:00.000Z', type: 'clear' });
    await writeFile(file, newer);

    const error = await rejection((await newProcess({ workDir })).getOrCreate('s1', { workDir }));

    expect(error).toMatchObject({ code: 'session_version_unsupported', location: file, record: 2 });
    expect(await readFile(file, 'utf8')).toBe(newer);
  });

  it('rejects usage figures that would poison the totals, recording nothing', async () => {
    const workDir = await tempDir();
    const session = await (await newProcess({ workDir })).getOrCreate('s1', { workDir });

    const error = await rejection(session.recordUsage(usage(1, 1), Number.NaN));

    expect(hasErrorCode(error, 'invalid_usage')).toBe(true);
    expect(session.cost()).toEqual({ usd: 0, unpricedCalls: 0 });
    expect(await treeOf(workDir)).toEqual(['.claw', '.claw/.gitignore', '.claw/sessions', '.claw/sessions/s1.lock']);
  });
});

describe('FileSessionManager: list and delete', () => {
  it('lists sessions with counts and totals, most recently changed first, naming unreadable files apart', async () => {
    const workDir = await tempDir();
    const clock = new ManualClock();
    const manager = await newProcess({ workDir, now: clock.now });
    const older = await manager.getOrCreate('older', { workDir });
    const newer = await manager.getOrCreate('newer', { workDir });
    await older.append(user('a'));
    await newer.append(user('b'), assistant('c'));
    await newer.recordUsage(usage(5, 5), 1);
    await older.append(user('d'), user('e'), user('f'));
    await writeFile(sessionFile(workDir, 'broken'), 'garbage\n');
    await writeFile(nodePath.join(workDir, '.claw', 'sessions', 'notes.txt'), 'not a session');

    await writeFile(sessionFile(workDir, 'empty'), '');
    const fresh = await newProcess({ workDir });
    const unreadable: UnreadableSession[] = [];
    const summaries = await fresh.list({ onUnreadable: (session) => unreadable.push(session) });

    expect(summaries).toEqual([
      {
        id: 'older',
        workDir,
        lastEventSeq: 0,
        createdAt: '2030-01-01T00:00:00.000Z',
        updatedAt: '2030-01-01T00:00:05.000Z',
        messageCount: 4,
        usage: usage(0, 0),
        cost: { usd: 0, unpricedCalls: 0 },
        // Its first prompt's first line.
        title: 'a',
      },
      {
        id: 'newer',
        workDir,
        lastEventSeq: 0,
        createdAt: '2030-01-01T00:00:01.000Z',
        updatedAt: '2030-01-01T00:00:04.000Z',
        messageCount: 2,
        usage: usage(5, 5),
        cost: { usd: 1, unpricedCalls: 0 },
        title: 'b',
      },
    ]);
    // The damaged file is named with what opening it would say; the empty one is a session not
    // written yet (SES-3), not a damaged one.
    const opening = (await rejection(fresh.getOrCreate('broken', { workDir }))) as Error;
    expect(unreadable).toEqual([
      { id: 'broken', location: sessionFile(workDir, 'broken'), reason: opening.message },
    ]);
    expect(opening.message).toContain('is corrupt at line 1');
    const again: UnreadableSession[] = [];
    expect(await manager.list({ onUnreadable: (session) => again.push(session) })).toEqual(summaries);
    expect(again).toEqual(unreadable);
  });

  it('pages through sessions and unreadable files alike, each named once', async () => {
    const workDir = await tempDir();
    const manager = await newProcess({ workDir });
    for (const id of ['a', 'c']) await (await manager.getOrCreate(id, { workDir })).append(user(id));
    for (const id of ['b', 'd']) await writeFile(sessionFile(workDir, id), `damaged ${id}\n`);
    await manager.close();
    const log = new FileSessionLog({ directory: nodePath.join(workDir, '.claw', 'sessions') });

    const first = await log.list({ limit: 2 });
    const second = await log.list({ limit: 2, after: first.next as string });

    expect(first.sessions.map((session) => session.id)).toEqual(['a']);
    expect(first.unreadable?.map((session) => session.id)).toEqual(['b']);
    expect(first.next).toBe('b');
    expect(second.sessions.map((session) => session.id)).toEqual(['c']);
    expect(second.unreadable?.map((session) => [session.id, session.location])).toEqual([['d', sessionFile(workDir, 'd')]]);
    expect(second.unreadable?.[0]?.reason).toContain(`${sessionFile(workDir, 'd')} is corrupt at line 1`);
    expect(second.next).toBeUndefined();
    expect(await log.list({ after: 'd' })).toEqual({ sessions: [] });
  });

  it('lists a session open here as it is in memory, even when its file was damaged since', async () => {
    const workDir = await tempDir();
    const manager = await newProcess({ workDir });
    await (await manager.getOrCreate('s1', { workDir })).append(user('one'));
    await writeFile(sessionFile(workDir, 's1'), 'scribbled over\n');

    const unreadable: UnreadableSession[] = [];
    const summaries = await manager.list({ onUnreadable: (session) => unreadable.push(session) });

    expect(summaries.map((summary) => [summary.id, summary.messageCount])).toEqual([['s1', 1]]);
    expect(unreadable).toEqual([]);
  });

  it('lists nothing for a workspace without sessions, and creates nothing', async () => {
    const workDir = await tempDir();

    expect(await (await newProcess({ workDir })).list()).toEqual([]);
    expect(await treeOf(workDir)).toEqual([]);
  });

  it('delete removes the file; the old object refuses changes; the id starts afresh', async () => {
    const workDir = await tempDir();
    const manager = await newProcess({ workDir });
    const session = await manager.getOrCreate('s1', { workDir });
    await session.append(user('one'));

    await manager.delete('s1');

    expect(await treeOf(workDir)).toEqual(['.claw', '.claw/.gitignore', '.claw/sessions']);
    expect(hasErrorCode(await rejection(session.append(user('two'))), 'session_deleted')).toBe(true);
    // Nor is it stored again by a flush (a retry after a failed write would bring it back).
    expect(hasErrorCode(await rejection(session.flush()), 'session_deleted')).toBe(true);
    expect(await treeOf(workDir)).toEqual(['.claw', '.claw/.gitignore', '.claw/sessions']);
    const again = await manager.getOrCreate('s1', { workDir });
    expect(again).not.toBe(session);
    expect(again.history()).toEqual([]);
  });

  it('delete removes a file that is not loaded, and ignores a missing one', async () => {
    const workDir = await tempDir();
    await (await (await newProcess({ workDir })).getOrCreate('s1', { workDir })).append(user('one'));
    const manager = await newProcess({ workDir });

    await manager.delete('s1');
    await manager.delete('never-existed');

    expect(await treeOf(workDir)).toEqual(['.claw', '.claw/.gitignore', '.claw/sessions']);
    expect(await manager.list()).toEqual([]);
  });

  it('keeps the file private to its owner', async () => {
    const workDir = await tempDir();
    await (await (await newProcess({ workDir })).getOrCreate('s1', { workDir })).append(user('secret'));

    expect((await stat(sessionFile(workDir, 's1'))).mode & 0o077).toBe(0);
  });
});

describe('FileSessionManager: ordering (SES-4)', () => {
  it('keeps two racing appends, both, in call order', async () => {
    const workDir = await tempDir();
    const session = await (await newProcess({ workDir })).getOrCreate('s1', { workDir });
    await session.append(user('zero'));

    await Promise.all([session.append(user('one')), session.append(assistant('two'))]);

    expect((await (await newProcess({ workDir })).getOrCreate('s1', { workDir })).history()).toEqual([
      user('zero'),
      user('one'),
      assistant('two'),
    ]);
  });

  it('keeps many racing changes of every kind in call order, also across the first write', async () => {
    const workDir = await tempDir();
    const session = await (await newProcess({ workDir, compactMinBytes: 0 })).getOrCreate('s1', { workDir });
    const pending: Promise<void>[] = [];
    for (let index = 0; index < 40; index += 1) {
      pending.push(session.append(user(`m${index}`)));
      if (index % 10 === 9) pending.push(session.recordUsage(usage(index, 1), 0.5));
      if (index === 24) pending.push(session.clear());
    }
    await Promise.all(pending);

    const reloaded = await (await newProcess({ workDir })).getOrCreate('s1', { workDir });
    expect(reloaded.history().map((message) => message.content)).toEqual(Array.from({ length: 15 }, (_, index) => `m${index + 25}`));
    expect(reloaded.usage()).toEqual(usage(9 + 19 + 29 + 39, 4));
    expect(reloaded.cost()).toEqual({ usd: 2, unpricedCalls: 0 });
  });
});

describe('FileSessionManager on a file system without appendSync', () => {
  it('appends through writeFile instead, with the same result', async () => {
    const { nodeSessionFileSystem } = await import('../src/index.js');
    const workDir = await tempDir();
    const writes: string[] = [];
    const fileSystem = {
      ...nodeSessionFileSystem,
      open: async (path: string, flags: string | number, mode?: number) => {
        const handle = await nodeSessionFileSystem.open(path, flags, mode);
        return {
          writeFile: (data: string, encoding: 'utf8') => {
            writes.push(data);
            return handle.writeFile(data, encoding);
          },
          sync: () => handle.sync(),
          close: () => handle.close(),
        };
      },
    };
    const manager = await newProcess({ workDir, fileSystem });
    const session = await manager.getOrCreate('s1', { workDir });
    await session.append(user('one'));
    await session.append(user('two'));
    await manager.close();
    // The snapshot, then the append as a line of its own (the lock is written this way too).
    const records = writes.filter((data) => data.startsWith('{"v":'));
    expect(records.map((data) => (JSON.parse(data) as { type: string }).type)).toEqual(['snapshot', 'append']);
    expect((await (await newProcess({ workDir })).getOrCreate('s1', { workDir })).history()).toEqual([user('one'), user('two')]);
  });
});
