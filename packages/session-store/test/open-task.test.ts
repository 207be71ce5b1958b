import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ElicitationSchema, SessionEvent } from '@claw/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  FileSessionLog,
  MemoryRelay,
  MemorySessionLog,
  SessionReplica,
  SessionStore,
  sessionFileExtension,
  type SessionLog,
  type PersistentSession,
} from '../src/index.js';
import { removeTempDirs, sealLine, tempDir } from './fixtures.js';

afterEach(removeTempDirs);

const workDir = '/work/space';

describe('the open task a session\'s events describe (RT-3, SCALE-3/4)', () => {
  it('follows task_started, state, approvals and the task\'s end', async () => {
    const store = new SessionStore({ log: new MemorySessionLog() });
    const lease = await store.open('s', { workDir });
    const { session } = lease;
    expect(session.openTask()).toBeUndefined();
    session.appendEvent({ type: 'task_started', task_id: 't1', content: 'do it' });
    expect(session.openTask()).toEqual({ taskId: 't1', prompt: 'do it', state: 'running', approvals: [], calls: [] });
    const asked = session.appendEvent({
      type: 'approval_request', task_id: 't1', request_id: 'r1', tool_name: 'bash', risk: 'dangerous',
      reason: 'why', arguments: '{}',
    }).event;
    session.appendEvent({ type: 'state', state: 'awaiting_approval', task_id: 't1' });
    expect(session.openTask()).toEqual({ taskId: 't1', prompt: 'do it', state: 'awaiting_approval', approvals: [asked], calls: [] });
    session.appendEvent({ type: 'approval_resolved', task_id: 't1', request_id: 'r1', decision: 'deny', by: 'x' });
    expect(session.openTask()?.approvals).toEqual([]);
    // A retried model call, and an event type of a newer claw, leave the task open as it was.
    const before = session.openTask();
    session.appendEvent({ type: 'model_retry', task_id: 't1', attempt: 1, attempts: 3, delay_ms: 200, error: 'HTTP 503' });
    session.appendEvent({ type: 'from_a_newer_claw', task_id: 't1' } as never);
    expect(session.openTask()).toEqual(before);
    session.appendEvent({ type: 'task_completed', task_id: 't1', content: 'done' });
    expect(session.openTask()).toBeUndefined();
    await lease.release();
  });

  it('keeps the task\'s calls whose tool_result event is not stored, whichever order they end in', async () => {
    const store = new SessionStore({ log: new MemorySessionLog() });
    const lease = await store.open('s', { workDir });
    const { session } = lease;
    const call = (id: string): void => {
      session.appendEvent({ type: 'tool_call', task_id: 't1', tool_call_id: id, tool_name: 'read_file', arguments: '{}' });
    };
    const result = (id: string): void => {
      session.appendEvent({ type: 'tool_result', task_id: 't1', tool_call_id: id, tool_name: 'read_file', result: 'x', is_error: false });
    };
    session.appendEvent({ type: 'task_started', task_id: 't1', content: 'read' });
    call('c1');
    call('c2');
    call('c3');
    result('c2');
    expect(session.openTask()?.calls).toEqual([{ id: 'c1', name: 'read_file' }, { id: 'c3', name: 'read_file' }]);
    result('c1');
    result('c3');
    expect(session.openTask()?.calls).toEqual([]);
    await lease.release();
  });

  it('is kept by a file snapshot, and a damaged one is refused as corrupt', async () => {
    const dir = await tempDir();
    const log = new FileSessionLog({ directory: dir });
    const store = new SessionStore({ log });
    const kept = await store.open('kept', { workDir });
    const { session } = kept;
    session.appendEvent({ type: 'task_started', task_id: 't1', content: 'long job' });
    session.appendEvent({ type: 'tool_call', task_id: 't1', tool_call_id: 'c1', tool_name: 'bash', arguments: '{}' });
    const last = session.appendEvent({ type: 'state', state: 'running', task_id: 't1' });
    await last.written;
    await session.flush();
    const stored = await log.load('kept');
    if (stored === undefined) throw new Error('not stored');
    const openTask = session.openTask();
    await log.compact('kept', { ...stored.snapshot, seq: 3, eventSeq: 3, ...(openTask === undefined ? {} : { openTask }) });
    await kept.release();
    await store.close();

    const reopened = new SessionStore({ log: new FileSessionLog({ directory: dir }) });
    const lease = await reopened.open('kept', { workDir });
    expect(lease.session.storedEvents()).toEqual([]);
    expect(lease.session.openTask()).toEqual({
      taskId: 't1', prompt: 'long job', state: 'running', approvals: [], calls: [{ id: 'c1', name: 'bash' }],
    });
    await lease.release();
    await reopened.close();

    const file = path.join(dir, `kept${sessionFileExtension}`);
    // A whole, sealed record whose open task has a state that is none.
    const [first, ...rest] = (await readFile(file, 'utf8')).split('\n');
    const { sum: _sum, ...record } = JSON.parse(first as string) as Record<string, unknown>;
    const snapshot = record as { session: { openTask: { state: string } } };
    snapshot.session.openTask.state = 'sleeping';
    await writeFile(file, sealLine(record) + rest.join('\n'));
    const damaged = new SessionStore({ log: new FileSessionLog({ directory: dir }) });
    const refused = await damaged.open('kept', { workDir }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'session_corrupt' });
    expect((refused as Error).message).toContain('session.openTask.state is "sleeping", not a state');
    await damaged.close();
  });

  it('keeps requests for input until they are resolved, in a file snapshot too; one without them still loads', async () => {
    const dir = await tempDir();
    const file = path.join(dir, `asks${sessionFileExtension}`);
    const form: ElicitationSchema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
    const ask = (session: PersistentSession, requestId: string): SessionEvent => session.appendEvent({
      type: 'elicitation_request', task_id: 't1', request_id: requestId, server: 'sdk', message: 'Who?', requested_schema: form,
    }).event;
    const answer = (session: PersistentSession, requestId: string): void => {
      session.appendEvent({ type: 'elicitation_resolved', task_id: 't1', request_id: requestId, action: 'accept', by: 'x' });
    };
    const store = new SessionStore({ log: new FileSessionLog({ directory: dir }) });
    const lease = await store.open('asks', { workDir });
    const { session } = lease;
    // None outside a task, as for approvals.
    ask(session, 'e0');
    expect(session.openTask()).toBeUndefined();
    session.appendEvent({ type: 'task_started', task_id: 't1', content: 'ask me' });
    const first = ask(session, 'e1');
    const second = ask(session, 'e2');
    expect(session.openTask()?.elicitations).toEqual([first, second]);
    answer(session, 'e1');
    expect(session.openTask()?.elicitations).toEqual([second]);
    // A clear compacts the log: the snapshot alone keeps the request still waiting.
    await session.clear();
    await session.flush();
    await lease.release();
    await store.close();
    const [stored, ...records] = (await readFile(file, 'utf8')).split('\n').filter((line) => line !== '');
    expect(records).toEqual([]);
    const { sum: _sum, ...record } = JSON.parse(stored as string) as Record<string, unknown>;
    const snapshot = record.session as { openTask: Record<string, unknown> };
    expect(snapshot.openTask.elicitations).toEqual([JSON.parse(JSON.stringify(second))]);

    const reopened = new SessionStore({ log: new FileSessionLog({ directory: dir }) });
    const again = await reopened.open('asks', { workDir });
    expect(again.session.openTask()).toEqual({
      taskId: 't1', prompt: 'ask me', state: 'running', approvals: [], elicitations: [second], calls: [],
    });
    answer(again.session, 'e2');
    expect(again.session.openTask()).toEqual({ taskId: 't1', prompt: 'ask me', state: 'running', approvals: [], calls: [] });
    await again.release();
    await reopened.close();

    // The snapshot of a claw from before requests for input were kept: its open task has none.
    const rewrite = async (openTask: Record<string, unknown>): Promise<SessionStore> => {
      await writeFile(file, `${sealLine({ ...record, session: { ...snapshot, openTask } })}\n`);
      return new SessionStore({ log: new FileSessionLog({ directory: dir }) });
    };
    const { elicitations: _asked, ...older } = snapshot.openTask;
    const old = await rewrite(older);
    const oldLease = await old.open('asks', { workDir });
    expect(oldLease.session.openTask()).toEqual({ taskId: 't1', prompt: 'ask me', state: 'running', approvals: [], calls: [] });
    // It keeps the requests asked from then on.
    const third = ask(oldLease.session, 'e3');
    expect(oldLease.session.openTask()?.elicitations).toEqual([third]);
    await oldLease.release();
    await old.close();

    // One that lists another event is refused as corrupt.
    const damaged = await rewrite({ ...older, elicitations: [{ ...JSON.parse(JSON.stringify(second)), type: 'approval_request' }] });
    const refused = await damaged.open('asks', { workDir }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'session_corrupt' });
    expect((refused as Error).message).toContain('session.openTask.elicitations holds an event that is not an elicitation_request');
    await damaged.close();
  });

  it('a shared log gets a new session as an empty snapshot and records, so readers elsewhere see every event', async () => {
    const logs: Array<[SessionLog, boolean]> = [[new MemoryRelay(), true], [new MemorySessionLog(), false]];
    for (const [log, shared] of logs) {
      expect(log.relayParts !== undefined).toBe(shared);
      const store = new SessionStore({ log });
      const fresh = await store.open('fresh', { workDir });
      const { session } = fresh;
      session.appendEvent({ type: 'task_started', task_id: 't1', content: 'hi' });
      await session.append({ role: 'user', content: 'hi' });
      await session.flush();
      const stored = await log.load('fresh');
      if (shared) {
        expect(stored?.snapshot.seq).toBe(0);
        expect(stored?.records.map((record) => record.change.type)).toEqual(['event', 'append']);
        // A replica built from it sees the event and the open task.
        const replica = new SessionReplica(stored as never, { workDir, location: 'test' });
        expect(replica.events.map((event) => event.type)).toEqual(['task_started']);
        expect(replica.openTask?.taskId).toBe('t1');
        expect(replica.history()).toEqual([{ role: 'user', content: 'hi' }]);
      } else {
        // One snapshot holds it all (the file store's way: one write).
        expect(stored?.snapshot.seq).toBe(2);
        expect(stored?.records).toEqual([]);
      }
      await fresh.release();
      await store.close();
    }
  });
});
