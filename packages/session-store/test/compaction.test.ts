import type { Compaction } from '@claw/core';
import { compactedView } from '@claw/core';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionStoreError } from '../src/index.js';
import { assistant, call, newProcess, rejection, removeTempDirs, tempDir, user } from './fixtures.js';

afterEach(removeTempDirs);

function compactionOf(upTo: number, extra: Partial<Compaction> = {}): Compaction {
  return {
    reason: 'threshold',
    upTo,
    kept: [0],
    summary: 'what happened',
    pruned: [],
    tokensBefore: 1_000,
    tokensAfter: 400,
    prunedResults: 0,
    summarisedMessages: upTo,
    ...extra,
  };
}

describe('a compaction in the session store (CMP-4)', () => {
  it('is stored and reloaded; the full history stays; /clear drops it', async () => {
    const workDir = await tempDir();
    const session = await (await newProcess({ workDir })).getOrCreate('s', { workDir });
    await session.append(user('the task'), assistant('step one'), user('more'), assistant('step two'));
    const compaction = compactionOf(2, { kept: [0], pruned: [] });
    await session.compact(compaction);
    await session.append(assistant('after'));
    const reloaded = await (await newProcess({ workDir })).getOrCreate('s', { workDir });
    expect(reloaded.history()).toHaveLength(5);
    expect(reloaded.compaction()).toEqual(compaction);
    expect(compactedView(reloaded.history(), reloaded.compaction()).map((message) => message.content)).toEqual([
      'the task',
      expect.stringContaining('<summary>\nwhat happened\n</summary>'),
      'more',
      'step two',
      'after',
    ]);
    await reloaded.clear();
    expect(reloaded.compaction()).toBeUndefined();
    const afterClear = await (await newProcess({ workDir })).getOrCreate('s', { workDir });
    expect(afterClear.compaction()).toBeUndefined();
  });

  it('refuses one that names messages the history does not have, storing nothing', async () => {
    const workDir = await tempDir();
    const session = await (await newProcess({ workDir })).getOrCreate('s', { workDir });
    await session.append(user('the task'));
    const error = await rejection(session.compact(compactionOf(5)));
    expect(error).toBeInstanceOf(SessionStoreError);
    expect((error as SessionStoreError).code).toBe('invalid_compaction');
    expect(session.compaction()).toBeUndefined();
  });

  it('moves with the messages orphan repair inserts before it (its indices keep naming the same messages)', async () => {
    const workDir = await tempDir();
    const session = await (await newProcess({ workDir })).getOrCreate('s', { workDir });
    // A call left without its Observation (a crash), then more; a compaction after it.
    await session.append(user('the task'), assistant('', [call('c1', 'bash')]), user('later'), assistant('ok'));
    await session.compact(compactionOf(3, { kept: [0, 2] }));
    const reloaded = await (await newProcess({ workDir })).getOrCreate('s', { workDir });
    // Repair put the Observation right after the call: everything after it moved by one.
    expect(reloaded.history()[2]).toMatchObject({ role: 'tool', toolCallId: 'c1' });
    expect(reloaded.compaction()).toMatchObject({ upTo: 4, kept: [0, 3] });
    expect(reloaded.history()[3]).toEqual(user('later'));
  });
});
