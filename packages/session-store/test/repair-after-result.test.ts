import { mkdir, readFile, writeFile } from 'node:fs/promises';
import nodePath from 'node:path';
import type { Message, SessionEventBody, ToolCall, ToolMessage } from '@claw/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  FileSessionLog,
  MemorySessionLog,
  SessionStore,
  sessionsFolder,
  repairHistory,
  toolCallIncompleteText,
  toolCallNeverStartedText,
  toolCallStartedText,
  toolCallUnrecordedText,
  type PersistentSession,
  type StoredLog,
} from '../src/index.js';
import {
  assistant,
  call,
  newProcess,
  observation,
  removeTempDirs,
  sessionFile,
  tempDir,
  user,
} from './fixtures.js';

afterEach(removeTempDirs);

// A tool wave stores each call's `tool_result` event as the call ends, but the wave's
// Observations only once every call ended. A crash in between leaves a call whose result is
// stored (its event) while the history has no Observation for it: repair must put that result
// back, never add a second, contradictory one ("finished, but its result was not saved").

const id = 's1';
const readCall = call('c1', 'read_file', { path: 'a.ts' });
const buildCall = call('c2', 'bash', { command: 'make' });
const readOutput = 'export const a = 1;\n';

const repairedWith = (toolCallId: string, content: string): Message => ({ role: 'tool', toolCallId, content, isError: true });
const stored = (toolCallId: string, content: string): ToolMessage => ({ role: 'tool', toolCallId, content });

/** Storage that outlives a process: each `nextProcess` opens it as a new process after a crash. */
interface Storage {
  workDir: string;
  nextProcess(): Promise<SessionStore>;
  /** The session as the log holds it now. */
  stored(): Promise<StoredLog | undefined>;
}

interface Backend {
  name: string;
  /** `compactEarly`: the log asks for a snapshot as soon as it can (to test what one keeps). */
  storage(compactEarly: boolean): Promise<Storage>;
}

function fileStorage(workDir: string, compactEarly = false): Storage {
  return {
    workDir,
    // The previous process is left as kill -9 leaves it: its lock is taken over.
    nextProcess: () => newProcess({ workDir, ...(compactEarly ? { compactMinBytes: 0 } : {}) }),
    stored: () => new FileSessionLog({ directory: nodePath.join(workDir, sessionsFolder) }).load(id),
  };
}

const backends: Backend[] = [
  { name: 'file log', storage: async (compactEarly) => fileStorage(await tempDir(), compactEarly) },
  {
    name: 'memory log',
    storage: async (compactEarly) => {
      const log = new MemorySessionLog(compactEarly ? { compactAfterRecords: 1 } : {});
      let previous: SessionStore | undefined;
      return {
        workDir: '/memory/workspace',
        nextProcess: async () => {
          // A memory log has no process to outlive: closing the previous store stands for its
          // end (every change was stored already; closing writes nothing more).
          await previous?.close();
          previous = new SessionStore({ log });
          return previous;
        },
        stored: () => log.load(id),
      };
    },
  },
];

async function open(storage: Storage): Promise<PersistentSession> {
  return (await (await storage.nextProcess()).open(id, { workDir: storage.workDir })).session;
}

function event(session: PersistentSession, body: SessionEventBody): void {
  session.appendEvent(body);
}

function toolCallEvent(session: PersistentSession, each: ToolCall): void {
  event(session, { type: 'tool_call', task_id: 't1', tool_call_id: each.id, tool_name: each.name, arguments: each.arguments });
}

function toolResultEvent(session: PersistentSession, each: ToolCall, result: string, isError = false): void {
  event(session, { type: 'tool_result', task_id: 't1', tool_call_id: each.id, tool_name: each.name, result, is_error: isError });
}

/** The task's prompt and the model's reply with `calls`, as the engine and the runtime store them. */
async function reply(session: PersistentSession, calls: ToolCall[]): Promise<void> {
  await session.beforeRun();
  event(session, { type: 'task_started', task_id: 't1', content: 'fix the build' });
  await session.append(user('fix the build'));
  await session.append(assistant('', calls));
  for (const each of calls) toolCallEvent(session, each);
}

/**
 * A wave stopped by a crash while the build runs: both intents are stored, the read ended (its
 * end, then its `tool_result` event), and the wave's Observations never were.
 */
async function crashWhileBuilding(session: PersistentSession): Promise<void> {
  await reply(session, [readCall, buildCall]);
  await Promise.all([session.toolStarted(readCall, { readOnly: true }), session.toolStarted(buildCall)]);
  await session.toolFinished(readCall.id);
  toolResultEvent(session, readCall, readOutput);
  await session.flush();
}

/** Every Observation the history holds for `toolCallId`. */
function observationsOf(history: readonly Message[], toolCallId: string): Message[] {
  return history.filter((message) => message.role === 'tool' && message.toolCallId === toolCallId);
}

describe.each(backends)('repair after a crash mid-wave, on the $name (SES-7, SES-8)', (backend) => {
  it('puts back the result a call stored, and tells only the unfinished call it was interrupted', async () => {
    const storage = await backend.storage(false);
    await crashWhileBuilding(await open(storage));

    const reloaded = await open(storage);

    expect(reloaded.history()).toEqual([
      user('fix the build'),
      assistant('', [readCall, buildCall]),
      stored('c1', readOutput),
      repairedWith('c2', toolCallStartedText),
    ]);
    expect(observationsOf(reloaded.history(), 'c1')).toHaveLength(1);
    expect(reloaded.history()).not.toContainEqual(repairedWith('c1', toolCallUnrecordedText));
    // The read is not told as interrupted, nor is it a call that may run again (only calls that
    // never started are asked again): its result is the one the tool gave.
    expect(reloaded.lastRepair().map(({ call: repaired, state }) => [repaired.id, state])).toEqual([
      ['c1', 'recovered'],
      ['c2', 'started'],
    ]);
    expect(reloaded.lastRepair()[0]?.observation).toEqual(stored('c1', readOutput));
  });

  it('answers each call once: the repair is stored, and the next load has nothing to repair', async () => {
    const storage = await backend.storage(false);
    await crashWhileBuilding(await open(storage));
    const first = await open(storage);
    const repaired = [...first.history()];

    const again = await open(storage);

    expect(again.history()).toEqual(repaired);
    expect(again.lastRepair()).toEqual([]);
    await again.beforeRun();
    expect(again.history()).toEqual(repaired);
  });

  it('puts back results that only a snapshot taken after them holds', async () => {
    const storage = await backend.storage(true);
    const session = await open(storage);
    const reads = ['c1', 'c3', 'c4', 'c5', 'c6', 'c7'].map((each) => call(each, 'read_file', { path: `${each}.ts` }));
    await reply(session, [...reads, buildCall]);
    // The build waits for approval (it never starts) while the reads run and end, one by one.
    await Promise.all(reads.map((each) => session.toolStarted(each, { readOnly: true })));
    event(session, {
      type: 'approval_request', task_id: 't1', request_id: 'r1', tool_name: 'bash', risk: 'dangerous',
      reason: 'runs a command', arguments: buildCall.arguments,
    });
    event(session, { type: 'state', task_id: 't1', state: 'awaiting_approval' });
    for (const each of reads) {
      await session.toolFinished(each.id);
      toolResultEvent(session, each, `contents of ${each.id}.ts`);
      await session.flush();
    }
    // The log folded the first result into a snapshot: no record holds it any more.
    const log = await storage.stored();
    expect(log?.records.some(({ change }) => change.type === 'event' && change.event.type === 'tool_result' && change.event.tool_call_id === 'c1')).toBe(false);
    expect(log?.snapshot.history).toHaveLength(2);

    const reloaded = await open(storage);

    expect(reloaded.history().slice(2)).toEqual([
      ...reads.map((each) => stored(each.id, `contents of ${each.id}.ts`)),
      repairedWith('c2', toolCallNeverStartedText),
    ]);
    expect(reloaded.lastRepair().map(({ state }) => state)).toEqual([...reads.map(() => 'recovered'), 'never_started']);
  });

  it('puts back a denied call\'s result in a session that never started a tool (no journal yet)', async () => {
    const storage = await backend.storage(false);
    const session = await open(storage);
    const denied = call('c1', 'bash', { command: 'rm -rf build' });
    const asked = call('c2', 'bash', { command: 'make' });
    await reply(session, [denied, asked]);
    toolResultEvent(session, denied, 'bash was denied by the user', true);
    event(session, {
      type: 'approval_request', task_id: 't1', request_id: 'r2', tool_name: 'bash', risk: 'dangerous',
      reason: 'runs a command', arguments: asked.arguments,
    });
    await session.flush();

    const reloaded = await open(storage);

    expect(reloaded.history().slice(2)).toEqual([
      { role: 'tool', toolCallId: 'c1', content: 'bash was denied by the user', isError: true },
      repairedWith('c2', toolCallIncompleteText),
    ]);
    expect(reloaded.lastRepair().map(({ state }) => state)).toEqual(['recovered', 'incomplete']);
  });

  it('forgets a result once its Observation is saved, also when a provider reuses the call id', async () => {
    const storage = await backend.storage(false);
    const session = await open(storage);
    await reply(session, [readCall]);
    await session.toolStarted(readCall, { readOnly: true });
    await session.toolFinished(readCall.id);
    await session.append(observation('c1', readOutput));
    // A result the runtime reports after the Observation (a call that ended without one).
    toolResultEvent(session, readCall, readOutput);
    // The next reply reuses the id; the crash comes before its tool started.
    await session.append(assistant('', [readCall]));
    await session.flush();

    const reloaded = await open(storage);

    expect(reloaded.history().at(-1)).toEqual(repairedWith('c1', toolCallNeverStartedText));
  });
});

describe('repair at every point a crash can stop a wave (file log, SES-8)', () => {
  const repairTexts = new Set([
    toolCallIncompleteText,
    toolCallNeverStartedText,
    toolCallStartedText,
    toolCallUnrecordedText,
  ]);
  const denied = call('c3', 'write_file', { path: 'b.ts' });
  const calls = [readCall, buildCall, denied];
  const answers: ToolMessage[] = [
    stored('c1', readOutput),
    stored('c2', 'exit code: 0'),
    { role: 'tool', toolCallId: 'c3', content: 'write_file was denied', isError: true },
  ];

  /** A whole wave, its changes in separate writes: the file of a session that ended normally. */
  async function wholeWave(workDir: string): Promise<string[]> {
    const session = await open(fileStorage(workDir));
    await reply(session, calls);
    toolResultEvent(session, denied, 'write_file was denied', true);
    await session.flush();
    for (const each of [readCall, buildCall]) {
      await session.toolStarted(each);
      await session.flush();
    }
    for (const [index, each] of [readCall, buildCall].entries()) {
      await session.toolFinished(each.id);
      await session.flush();
      toolResultEvent(session, each, answers[index]?.content ?? '');
      await session.flush();
    }
    await session.append(...answers);
    event(session, { type: 'task_completed', task_id: 't1', content: 'done' });
    await session.flush();
    return (await readFile(sessionFile(workDir, id), 'utf8')).split('\n').filter((line) => line !== '');
  }

  /** The call ids whose `tool_result` event one of these records holds. */
  function resultsIn(lines: readonly string[]): Set<string> {
    const ids = new Set<string>();
    for (const line of lines) {
      const record = JSON.parse(line) as { type: string; event?: { type: string; tool_call_id?: string } };
      if (record.type === 'event' && record.event?.type === 'tool_result') ids.add(record.event.tool_call_id ?? '');
    }
    return ids;
  }

  it('answers each call once, with its stored result whenever the file holds one', async () => {
    const lines = await wholeWave(await tempDir());
    const storage = fileStorage(await tempDir());
    const file = sessionFile(storage.workDir, id);
    await mkdir(nodePath.dirname(file), { recursive: true });

    let crashes = 0;
    // A crash leaves the file cut after any whole record (a torn one is dropped on load).
    for (let kept = 1; kept <= lines.length; kept += 1) {
      const prefix = lines.slice(0, kept);
      await writeFile(file, `${prefix.join('\n')}\n`);
      const history = (await open(storage)).history();
      if (!history.some((message) => message.role === 'assistant')) continue;
      crashes += 1;
      const results = resultsIn(prefix);
      for (const [index, each] of calls.entries()) {
        const where = `${each.id}, file cut after record ${kept}`;
        const got = observationsOf(history, each.id);
        expect(got, where).toHaveLength(1);
        if (results.has(each.id)) expect(got[0], where).toEqual(answers[index]);
        else expect(repairTexts.has((got[0] as ToolMessage).content), where).toBe(true);
      }
    }
    // Every record after the snapshot (which holds the prompt), from the reply to the task's
    // end, was a crash point.
    expect(crashes).toBe(lines.length - 1);
  });
});

describe('repairHistory with stored results (SES-8)', () => {
  it('inserts a stored result as it was, in call order with the calls it makes up for', () => {
    const history = [user('go'), assistant('', [call('c1'), call('c2'), call('c3')]), user('next')];
    const result = repairHistory(history, {
      started: new Set(['c1', 'c2']),
      finished: new Set(['c1']),
      results: new Map([['c1', stored('c1', 'ok')], ['c3', { role: 'tool', toolCallId: 'c3', content: 'denied', isError: true }]]),
    });

    expect(result.history).toEqual([
      ...history.slice(0, 2),
      stored('c1', 'ok'),
      repairedWith('c2', toolCallStartedText),
      { role: 'tool', toolCallId: 'c3', content: 'denied', isError: true },
      user('next'),
    ]);
    expect(result.repaired.map(({ state, index }) => [state, index])).toEqual([
      ['recovered', 2],
      ['started', 3],
      ['recovered', 4],
    ]);
  });

  it('leaves a call that has its Observation alone, whatever result is stored for it', () => {
    const history = [assistant('', [call('c1')]), observation('c1')];
    expect(repairHistory(history, { started: new Set(), finished: new Set(), results: new Map([['c1', stored('c1', 'x')]]) }))
      .toEqual({ history, repaired: [] });
  });
});
