import type { Message, SessionEventBody, ToolCall } from '@claw/core';
import {
  SessionStore,
  toolCallStartedText,
  type PersistentSession,
} from '@claw/session-store';
import { afterEach, describe, expect, it } from 'vitest';
import type { PgSessionLog } from '../src/index.js';
import { postgresAvailable } from '../src/testing/index.js';
import { ManualTimers, closeLogs, openLog, sharedCluster } from './fixtures.js';

// A tool wave stores each call's `tool_result` event as the call ends, and the wave's
// Observations once every call ended. When its owner dies in between, the instance that takes the
// session over must put the stored result back (SES-8, SCALE-3), not add a second result saying
// it was lost: on PostgreSQL the result reaches it as a change row, or inside a snapshot.

const workDir = '/shared/workspace';
const reads = ['c1', 'c3', 'c4'].map((id) => call(id, 'read_file', { path: `${id}.ts` }));
const build = call('c2', 'bash', { command: 'make' });

function call(id: string, name: string, args: unknown): ToolCall {
  return { id, name, arguments: JSON.stringify(args) };
}

const outputOf = (each: ToolCall) => `contents of ${each.id}.ts`;
const repairedWith = (toolCallId: string, content: string): Message => ({ role: 'tool', toolCallId, content, isError: true });

function event(session: PersistentSession, body: SessionEventBody): void {
  session.appendEvent(body);
}

/** Lets the lease lapse on the database clock, as when its owner was killed. */
async function lapse(log: PgSessionLog, id: string): Promise<void> {
  await log.pool.query('UPDATE claw_sessions SET lease_until = now() - interval \'1 millisecond\' WHERE id = $1', [id]);
}

/**
 * Instance A runs a wave of three reads and a build and dies while the build runs: every intent
 * is stored, the reads ended (their ends, then their `tool_result` events), and the wave's
 * Observations never were.
 */
async function crashWhileBuilding(session: PersistentSession): Promise<void> {
  await session.beforeRun();
  event(session, { type: 'task_started', task_id: 't1', content: 'fix the build' });
  await session.append({ role: 'user', content: 'fix the build' }, { role: 'assistant', content: '', toolCalls: [...reads, build] });
  for (const each of [...reads, build]) {
    event(session, { type: 'tool_call', task_id: 't1', tool_call_id: each.id, tool_name: each.name, arguments: each.arguments });
  }
  await Promise.all([
    ...reads.map((each) => session.toolStarted(each, { readOnly: true })),
    session.toolStarted(build),
  ]);
  for (const each of reads) {
    await session.toolFinished(each.id);
    event(session, { type: 'tool_result', task_id: 't1', tool_call_id: each.id, tool_name: each.name, result: outputOf(each), is_error: false });
    await session.flush();
  }
}

describe.skipIf(!postgresAvailable())('repair after a crash mid-wave on PostgreSQL (SES-8, SCALE-3)', () => {
  const { freshDatabase } = sharedCluster();
  afterEach(closeLogs);

  it.each([
    { kept: 'change rows', compactAfterRecords: 1000 },
    { kept: 'a snapshot', compactAfterRecords: 1 },
  ])('puts back the results the dead owner stored in $kept, and answers only the build as interrupted', async ({ kept, compactAfterRecords }) => {
    const url = await freshDatabase();
    const timers = new ManualTimers();
    const a = await openLog(url, { instanceId: 'a', setTimer: timers.setTimer, compactAfterRecords });
    const b = await openLog(url, { instanceId: 'b', setTimer: timers.setTimer });
    const storeA = new SessionStore({ log: a });
    await crashWhileBuilding((await storeA.open('s', { workDir })).session);
    const stored = await a.load('s');
    // The case is what it says: the first result is in a change row, or only in a snapshot.
    const inRows = stored?.records.some(({ change }) => change.type === 'event' && change.event.type === 'tool_result' && change.event.tool_call_id === 'c1');
    expect(inRows).toBe(kept === 'change rows');
    await lapse(a, 's');

    const storeB = new SessionStore({ log: b });
    const lease = await storeB.open('s', { workDir });
    const { session } = lease;

    expect(session.history().slice(2)).toEqual([
      ...reads.map((each): Message => ({ role: 'tool', toolCallId: each.id, content: outputOf(each) })),
      repairedWith('c2', toolCallStartedText),
    ]);
    expect(session.lastRepair().map(({ call: repaired, state }) => [repaired.id, state])).toEqual([
      ['c1', 'recovered'],
      ['c3', 'recovered'],
      ['c4', 'recovered'],
      ['c2', 'started'],
    ]);
    await lease.release();
    // The repair is stored: the next owner finds every call answered once.
    const storeC = new SessionStore({ log: b });
    const again = await storeC.open('s', { workDir });
    expect(again.session.history()).toEqual(session.history());
    expect(again.session.lastRepair()).toEqual([]);
    await again.release();
    await storeC.close();
    await storeB.close();
    await storeA.close().catch(() => undefined);
  });
});
