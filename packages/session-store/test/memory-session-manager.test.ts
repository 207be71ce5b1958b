import nodePath from 'node:path';
import { hasErrorCode } from '@claw/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  MemorySession,
  MemorySessionManager,
  SessionStoreError,
  toolCallStartedText,
} from '../src/index.js';
import { assistant, call, ManualClock, rejection, removeTempDirs, tempDir, treeOf, user } from './fixtures.js';

afterEach(removeTempDirs);

describe('MemorySessionManager (SES-6)', () => {
  it('never touches disk, whatever the session goes through (seed persistence 7)', async () => {
    const workDir = await tempDir();
    const manager = new MemorySessionManager();
    const session = await manager.getOrCreate('s1', { workDir });
    await session.append(user('go'), assistant('', [call('c1')]));
    await session.toolStarted(call('c1'));
    await session.toolFinished('c1');
    await session.recordUsage({ promptTokens: 1, completionTokens: 1, totalTokens: 2 }, 0.5);
    await session.beforeRun();
    await session.flush();
    await manager.list();
    await manager.clear('s1');
    await manager.delete('s1');

    expect(await treeOf(workDir)).toEqual([]);
  });

  it('keeps the same sessions as the file manager: one object per id, totals across clear', async () => {
    const clock = new ManualClock();
    const manager = new MemorySessionManager({ now: clock.now });
    const session = await manager.getOrCreate('s1', { workDir: '/virtual/workspace' });
    await session.append(user('one'));
    await session.recordUsage({ promptTokens: 4, completionTokens: 1, totalTokens: 5 });

    await manager.clear('s1');

    expect(await manager.getOrCreate('s1', { workDir: '/virtual/workspace' })).toBe(session);
    expect(session.history()).toEqual([]);
    expect(session.usage()).toEqual({ promptTokens: 4, completionTokens: 1, totalTokens: 5 });
    expect(session.cost()).toEqual({ usd: 0, unpricedCalls: 1 });
    expect(await manager.list()).toEqual([
      {
        id: 's1',
        workDir: '/virtual/workspace',
        lastEventSeq: 0,
        createdAt: '2030-01-01T00:00:00.000Z',
        updatedAt: '2030-01-01T00:00:03.000Z',
        messageCount: 0,
        usage: { promptTokens: 4, completionTokens: 1, totalTokens: 5 },
        cost: { usd: 0, unpricedCalls: 1 },
      },
    ]);
  });

  it('repairs before a run with the journal it kept', async () => {
    const session = await new MemorySessionManager().getOrCreate('s1', { workDir: '/virtual/workspace' });
    await session.append(assistant('', [call('c1')]));
    await session.toolStarted(call('c1'));

    await session.beforeRun();

    expect(session.history().at(-1)).toEqual({ role: 'tool', toolCallId: 'c1', content: toolCallStartedText, isError: true });
  });

  it('refuses unsafe ids and an empty workDir, and forgets deleted sessions', async () => {
    const manager = new MemorySessionManager();

    expect(await rejection(manager.getOrCreate('../x', { workDir: '/w' }))).toBeInstanceOf(SessionStoreError);
    expect(hasErrorCode(await rejection(manager.getOrCreate('s1', { workDir: '' })), 'invalid_work_dir')).toBe(true);
    const session = await manager.getOrCreate('s1', { workDir: nodePath.join('/w') });
    await manager.delete('s1');
    expect(hasErrorCode(await rejection(session.append(user('x'))), 'session_deleted')).toBe(true);
    expect(await manager.list()).toEqual([]);
  });
});

describe('MemorySession (kept for the engine and subagents)', () => {
  it('still works as before', async () => {
    const session = new MemorySession({ workDir: '/w', history: [user('a')] });
    await session.append(user('b'));
    await session.recordUsage({ promptTokens: 1, completionTokens: 2, totalTokens: 3 }, 0.1);

    expect(session.id).toBe('default');
    expect(session.history()).toEqual([user('a'), user('b')]);
    expect(session.usage()).toEqual({ promptTokens: 1, completionTokens: 2, totalTokens: 3 });
    expect(session.cost()).toEqual({ usd: 0.1, unpricedCalls: 0 });
  });
});
