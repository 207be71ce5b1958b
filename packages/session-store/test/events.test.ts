import { mkdir, writeFile } from 'node:fs/promises';
import nodePath from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileSessionManager, MemorySessionManager } from '../src/index.js';
import { fileLines, newProcess, rejection, removeTempDirs, sealLine, sessionFile, tempDir, user } from './fixtures.js';

afterEach(removeTempDirs);

const delta = (content: string) => ({ type: 'text_delta' as const, task_id: 'task-1', content });

describe('session events are numbered and stored with the session (RT-3)', () => {
  it('numbers events 1, 2, 3… stamped with the session id and time, and continues after a reload', async () => {
    const workDir = await tempDir();
    const manager = new FileSessionManager({ workDir, now: () => new Date('2030-01-01T00:00:00.000Z') });
    const session = await manager.getOrCreate('s1', { workDir });
    // The first change writes the file (a snapshot); events after it are records of their own.
    await session.append(user('first'));
    const appended = [session.appendEvent(delta('a')), session.appendEvent(delta('b'))];
    await session.append(user('between'));
    appended.push(session.appendEvent({ type: 'state', state: 'idle' }));
    await Promise.all(appended.map((entry) => entry.written));

    expect(appended.map((entry) => entry.event)).toEqual([
      { ...delta('a'), session_id: 's1', seq: 1, at: '2030-01-01T00:00:00.000Z' },
      { ...delta('b'), session_id: 's1', seq: 2, at: '2030-01-01T00:00:00.000Z' },
      { type: 'state', state: 'idle', session_id: 's1', seq: 3, at: '2030-01-01T00:00:00.000Z' },
    ]);
    expect(session.lastEventSeq()).toBe(3);
    await manager.close();

    const reloaded = await new FileSessionManager({ workDir }).getOrCreate('s1', { workDir });
    expect(reloaded.lastEventSeq()).toBe(3);
    expect(reloaded.storedEvents()).toEqual(appended.map((entry) => entry.event));
    expect(reloaded.history()).toEqual([user('first'), user('between')]);
    expect(reloaded.appendEvent(delta('c')).event.seq).toBe(4);
  });

  it('keeps numbering after a compaction, which drops the stored events', async () => {
    const workDir = await tempDir();
    const manager = new FileSessionManager({ workDir, compactMinBytes: 0 });
    const session = await manager.getOrCreate('s1', { workDir });
    for (let index = 0; index < 5; index += 1) await session.appendEvent(delta(`d${index}`)).written;
    await session.append(user('last'));
    await manager.close();
    const lines = (await fileLines(sessionFile(workDir, 's1'))).map((line) => JSON.parse(line) as { type: string; session?: { eventSeq: number } });
    const snapshotEvents = lines[0]?.session?.eventSeq ?? -1;
    const eventRecords = lines.filter((line) => line.type === 'event').length;
    // Compaction folded some events into the snapshot's count; the rest follow it as records.
    expect(lines[0]?.type).toBe('snapshot');
    expect(snapshotEvents).toBeGreaterThan(0);
    expect(snapshotEvents + eventRecords).toBe(5);

    const reloaded = await new FileSessionManager({ workDir }).getOrCreate('s1', { workDir });
    expect(reloaded.lastEventSeq()).toBe(5);
    expect(reloaded.storedEvents().map((event) => event.seq)).toEqual(
      Array.from({ length: eventRecords }, (_, index) => snapshotEvents + 1 + index),
    );
    expect(reloaded.appendEvent(delta('next')).event.seq).toBe(6);
  });

  it('reads version 1 files (before events) as sessions with no events yet', async () => {
    const workDir = await tempDir();
    const file = sessionFile(workDir, 's1');
    await mkdir(nodePath.dirname(file), { recursive: true });
    await writeFile(
      file,
      sealLine({
        v: 1, seq: 1, at: '2030-01-01T00:00:00.000Z', type: 'snapshot',
        session: {
          id: 's1', workDir, createdAt: '2030-01-01T00:00:00.000Z', updatedAt: '2030-01-01T00:00:00.000Z',
          history: [user('old')], usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
          cost: { usd: 0, unpricedCalls: 0 }, journal: { active: false, calls: [] },
        },
      }) + sealLine({ v: 1, seq: 2, at: '2030-01-01T00:00:01.000Z', type: 'append', messages: [user('older')] }),
    );
    const session = await (await newProcess({ workDir })).getOrCreate('s1', { workDir });
    expect(session.history()).toEqual([user('old'), user('older')]);
    expect(session.lastEventSeq()).toBe(0);
    expect(session.appendEvent(delta('first')).event.seq).toBe(1);
  });

  it('reports an event out of order in the file as corruption, naming the line', async () => {
    const workDir = await tempDir();
    const manager = new FileSessionManager({ workDir });
    const session = await manager.getOrCreate('s1', { workDir });
    await session.append(user('one'));
    await session.appendEvent(delta('a')).written;
    await manager.close();
    const file = sessionFile(workDir, 's1');
    const lines = await fileLines(file);
    const record = JSON.parse(lines[1] ?? '{}') as Record<string, unknown>;
    delete record.sum;
    const skipped = { ...record, seq: 3, event: { ...(record.event as object), seq: 3 } };
    await writeFile(file, `${lines.join('\n')}\n${sealLine(skipped)}`);

    const error = await rejection(new FileSessionManager({ workDir }).getOrCreate('s1', { workDir }));
    expect(error).toMatchObject({ code: 'session_corrupt', record: 3 });
    expect((error as Error).message).toMatch(/event 3 follows event 1/);
  });

  it('works the same in memory', async () => {
    const manager = new MemorySessionManager();
    const session = await manager.getOrCreate('m', { workDir: '/virtual' });
    expect(session.appendEvent(delta('x')).event).toMatchObject({ session_id: 'm', seq: 1 });
    expect(session.lastEventSeq()).toBe(1);
    expect(session.summary().lastEventSeq).toBe(1);
  });
});
