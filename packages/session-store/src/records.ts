import { createHash, hash } from 'node:crypto';
import {
  compactionReasons,
  messageSchema,
  sessionRunStates,
  toolCallSchema,
  type Compaction,
  type CostTotals,
  type Message,
  type SessionEvent,
  type SessionRunState,
  type ToolCall,
  type Usage,
} from '@claw/core';
import type { SessionSnapshot } from './session-log.js';
import type {
  OpenTask,
  RepairInsert,
  SessionChange,
  StoredToolResult,
} from './session-state.js';

/**
 * The version of the records claw writes (`"v"`). Version 2 added events (RT-3) and the event
 * count of snapshots; version 3 added compactions (CMP-4), so that a claw from before them says
 * the session is from a newer claw instead of calling it corrupt. Versions 1 and 2 are still read.
 */
export const sessionRecordVersion = 3;
const readableVersions: ReadonlySet<unknown> = new Set([1, 2, 3]);

// `,"sum":"` + 8 hex digits + `"}`
const sumSuffixLength = 18;
const sumSuffix = /^,"sum":"([0-9a-f]{8})"\}$/;

// One-shot `crypto.hash` (Node 20.12 and later) is a few times cheaper than a Hash object, and
// every record is summed (PERF-1); the same digest either way.
const sha256Hex: (text: string) => string =
  typeof hash === 'function'
    ? (text) => hash('sha256', text, 'hex')
    : (text) => createHash('sha256').update(text, 'utf8').digest('hex');

function checksum(body: string): string {
  return sha256Hex(body).slice(0, 8);
}

/**
 * One JSON line: the record with a `sum` field last, the first 8 hex digits of the SHA-256 of the
 * record's JSON without it. A line cut short or scribbled over then never passes for data.
 */
function seal(record: object): string {
  return sealJson(JSON.stringify(record));
}

/** `seal` of a record already encoded as JSON (an object). */
function sealJson(body: string): string {
  return `${body.slice(0, -1)},"sum":"${checksum(body)}"}\n`;
}

/**
 * The log line for change number `seq`, made at time `at`. `encoded` is `JSON.stringify(change)`
 * when the caller has it already (the line is then built around it, not encoded again).
 */
export function encodeChange(
  seq: number,
  at: string,
  change: SessionChange,
  encoded?: string,
): string {
  if (encoded === undefined) return seal({ v: sessionRecordVersion, seq, at, ...change });
  return sealJson(`{"v":${sessionRecordVersion},"seq":${seq},"at":${JSON.stringify(at)},${encoded.slice(1)}`);
}

/** The snapshot line: the whole state, the first line of every session file. */
export function encodeSnapshot(snapshot: SessionSnapshot): string {
  return seal({
    v: sessionRecordVersion,
    seq: snapshot.seq,
    at: snapshot.updatedAt,
    type: 'snapshot',
    session: {
      id: snapshot.id,
      workDir: snapshot.workDir,
      createdAt: snapshot.createdAt,
      updatedAt: snapshot.updatedAt,
      eventSeq: snapshot.eventSeq,
      history: snapshot.history,
      usage: snapshot.usage,
      cost: snapshot.cost,
      journal: snapshot.journal,
      ...(snapshot.openTask === undefined ? {} : { openTask: snapshot.openTask }),
      ...(snapshot.compaction === undefined ? {} : { compaction: snapshot.compaction }),
    },
  });
}

/**
 * The JSON value of one line (without its newline), or `undefined` when the line is not a whole,
 * intact record (cut short, not JSON, checksum wrong): what a crash mid-write leaves.
 */
export function unsealLine(line: string): unknown {
  const match = sumSuffix.exec(line.slice(-sumSuffixLength));
  if (match === null) return undefined;
  const body = `${line.slice(0, -sumSuffixLength)}}`;
  if (checksum(body) !== match[1]) return undefined;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}

/** An intact line that is not a record this version understands. */
export class RecordProblem extends Error {
  constructor(
    message: string,
    readonly unsupportedVersion = false,
  ) {
    super(message);
  }
}

export type DecodedRecord =
  | { seq: number; at: string; kind: 'snapshot'; snapshot: SessionSnapshot }
  | { seq: number; at: string; kind: 'change'; change: SessionChange };

type Fields = Record<string, unknown>;

function isFields(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fields(value: unknown, what: string): Fields {
  if (!isFields(value)) throw new RecordProblem(`${what} is not an object`);
  return value;
}

function text(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new RecordProblem(`${what} is not a string`);
  return value;
}

function time(value: unknown, what: string): string {
  const result = text(value, what);
  if (Number.isNaN(Date.parse(result))) throw new RecordProblem(`${what} is not a time`);
  return result;
}

function count(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new RecordProblem(`${what} is not a non-negative number`);
  }
  return value;
}

function whole(value: unknown, what: string): number {
  const result = count(value, what);
  if (!Number.isInteger(result)) throw new RecordProblem(`${what} is not a whole number`);
  return result;
}

function flag(value: unknown, what: string): boolean {
  if (typeof value !== 'boolean') throw new RecordProblem(`${what} is not true or false`);
  return value;
}

function list(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new RecordProblem(`${what} is not a list`);
  return value;
}

function message(value: unknown, what: string): Message {
  const parsed = messageSchema.safeParse(value);
  if (!parsed.success) throw new RecordProblem(`${what} is not a message`);
  return parsed.data;
}

function messages(value: unknown, what: string): Message[] {
  return list(value, what).map((item, index) => message(item, `${what}[${index}]`));
}

function toolCall(value: unknown, what: string): ToolCall {
  const parsed = toolCallSchema.safeParse(value);
  if (!parsed.success) throw new RecordProblem(`${what} is not a tool call`);
  return parsed.data;
}

function usage(value: unknown, what: string): Usage {
  const object = fields(value, what);
  const result: Usage = {
    promptTokens: count(object.promptTokens, `${what}.promptTokens`),
    completionTokens: count(object.completionTokens, `${what}.completionTokens`),
    totalTokens: count(object.totalTokens, `${what}.totalTokens`),
  };
  // Records written before REAL-5 have none.
  if (object.cachedPromptTokens !== undefined) {
    result.cachedPromptTokens = count(object.cachedPromptTokens, `${what}.cachedPromptTokens`);
  }
  return result;
}

function cost(value: unknown, what: string): CostTotals {
  const object = fields(value, what);
  return {
    usd: count(object.usd, `${what}.usd`),
    unpricedCalls: whole(object.unpricedCalls, `${what}.unpricedCalls`),
  };
}

function repairInserts(value: unknown): RepairInsert[] {
  let previous = -1;
  return list(value, 'inserts').map((item, index) => {
    const insert = fields(item, `inserts[${index}]`);
    const at = whole(insert.index, `inserts[${index}].index`);
    if (at <= previous) {
      throw new RecordProblem(`inserts[${index}].index is out of order`);
    }
    previous = at;
    const observation = message(insert.message, `inserts[${index}].message`);
    if (observation.role !== 'tool') {
      throw new RecordProblem(`inserts[${index}].message is not an Observation`);
    }
    return { index: at, message: observation };
  });
}

function snapshot(value: unknown, seq: number): SessionSnapshot {
  const session = fields(value, 'session');
  const journal = fields(session.journal, 'session.journal');
  const entries = list(journal.calls, 'session.journal.calls').map((item, index) => {
    const what = `session.journal.calls[${index}]`;
    const entry = fields(item, what);
    const call = {
      id: text(entry.id, `${what}.id`),
      started: flag(entry.started, `${what}.started`),
      finished: flag(entry.finished, `${what}.finished`),
    };
    // A call's stored result (SES-8); snapshots from before it, and calls without one, have none.
    return entry.result === undefined
      ? call
      : { ...call, result: storedResult(entry.result, `${what}.result`) };
  });
  return {
    id: text(session.id, 'session.id'),
    workDir: text(session.workDir, 'session.workDir'),
    createdAt: time(session.createdAt, 'session.createdAt'),
    updatedAt: time(session.updatedAt, 'session.updatedAt'),
    seq,
    // Version 1 snapshots predate events.
    eventSeq: session.eventSeq === undefined ? 0 : whole(session.eventSeq, 'session.eventSeq'),
    history: messages(session.history, 'session.history'),
    usage: usage(session.usage, 'session.usage'),
    cost: cost(session.cost, 'session.cost'),
    journal: { active: flag(journal.active, 'session.journal.active'), calls: entries },
    // Older snapshots (and those taken with no task running) have none.
    ...(session.openTask === undefined ? {} : { openTask: openTask(session.openTask) }),
    ...(session.compaction === undefined
      ? {}
      : { compaction: compaction(session.compaction, 'session.compaction') }),
  };
}

function storedResult(value: unknown, what: string): StoredToolResult {
  const object = fields(value, what);
  return {
    content: text(object.content, `${what}.content`),
    isError: flag(object.isError, `${what}.isError`),
  };
}

function compaction(value: unknown, what: string): Compaction {
  const object = fields(value, what);
  const reason = text(object.reason, `${what}.reason`);
  if (!(compactionReasons as readonly string[]).includes(reason)) {
    throw new RecordProblem(`${what}.reason is ${JSON.stringify(reason)}, not a reason`);
  }
  const result: Compaction = {
    reason: reason as Compaction['reason'],
    upTo: whole(object.upTo, `${what}.upTo`),
    kept: list(object.kept, `${what}.kept`).map((item, index) => whole(item, `${what}.kept[${index}]`)),
    pruned: list(object.pruned, `${what}.pruned`).map((item, index) => text(item, `${what}.pruned[${index}]`)),
    tokensBefore: whole(object.tokensBefore, `${what}.tokensBefore`),
    tokensAfter: whole(object.tokensAfter, `${what}.tokensAfter`),
    prunedResults: whole(object.prunedResults, `${what}.prunedResults`),
    summarisedMessages: whole(object.summarisedMessages, `${what}.summarisedMessages`),
  };
  if (object.summary !== undefined) result.summary = text(object.summary, `${what}.summary`);
  if (object.summaryError !== undefined) result.summaryError = text(object.summaryError, `${what}.summaryError`);
  if (object.usage !== undefined) result.usage = usage(object.usage, `${what}.usage`);
  return result;
}

function openTask(value: unknown): OpenTask {
  const task = fields(value, 'session.openTask');
  const state = text(task.state, 'session.openTask.state');
  if (!(sessionRunStates as readonly string[]).includes(state)) {
    throw new RecordProblem(`session.openTask.state is ${JSON.stringify(state)}, not a state`);
  }
  return {
    taskId: text(task.taskId, 'session.openTask.taskId'),
    prompt: text(task.prompt, 'session.openTask.prompt'),
    state: state as SessionRunState,
    approvals: list(task.approvals, 'session.openTask.approvals').map((item) => {
      const asked = event(item);
      if (asked.type !== 'approval_request') {
        throw new RecordProblem('session.openTask.approvals holds an event that is not an approval_request');
      }
      return asked;
    }),
    // Snapshots from before it, and those taken while none waits, have none.
    ...(task.elicitations === undefined
      ? {}
      : {
          elicitations: list(task.elicitations, 'session.openTask.elicitations').map((item) => {
            const asked = event(item);
            if (asked.type !== 'elicitation_request') {
              throw new RecordProblem(
                'session.openTask.elicitations holds an event that is not an elicitation_request',
              );
            }
            return asked;
          }),
        }),
    // Snapshots from before it have none (see `OpenTask.calls`).
    ...(task.calls === undefined
      ? {}
      : {
          calls: list(task.calls, 'session.openTask.calls').map((item, index) => {
            const call = fields(item, `session.openTask.calls[${index}]`);
            return {
              id: text(call.id, `session.openTask.calls[${index}].id`),
              name: text(call.name, `session.openTask.calls[${index}].name`),
            };
          }),
        }),
  };
}

function event(value: unknown): SessionEvent {
  const object = fields(value, 'event');
  text(object.type, 'event.type');
  text(object.session_id, 'event.session_id');
  whole(object.seq, 'event.seq');
  time(object.at, 'event.at');
  // Events are the runtime's to validate; the log checks what it relies on (their order).
  return object as unknown as SessionEvent;
}

function change(record: Fields): SessionChange {
  const type = text(record.type, 'type');
  switch (type) {
    case 'append':
      return { type, messages: messages(record.messages, 'messages') };
    case 'usage':
      return record.costUsd === undefined
        ? { type, usage: usage(record.usage, 'usage') }
        : { type, usage: usage(record.usage, 'usage'), costUsd: count(record.costUsd, 'costUsd') };
    case 'clear':
      return { type };
    case 'tool_started':
      return { type, call: toolCall(record.call, 'call') };
    case 'tool_finished':
      return { type, toolCallId: text(record.toolCallId, 'toolCallId') };
    case 'repair':
      return { type, inserts: repairInserts(record.inserts) };
    case 'event':
      return { type, event: event(record.event) };
    case 'compaction':
      return { type, compaction: compaction(record.compaction, 'compaction') };
    default:
      throw new RecordProblem(`unknown record type ${JSON.stringify(type)}`);
  }
}

/**
 * The record in an intact line's JSON value.
 *
 * @throws RecordProblem when it is not a record of this version (`unsupportedVersion` when it is
 * from a newer one).
 */
export function decodeRecord(value: unknown): DecodedRecord {
  const record = fields(value, 'the record');
  const version = record.v;
  if (!readableVersions.has(version)) {
    const newer =
      typeof version === 'number' && Number.isInteger(version) && version > sessionRecordVersion;
    throw new RecordProblem(`record version ${JSON.stringify(version)} is not supported`, newer);
  }
  const seq = whole(record.seq, 'seq');
  const at = time(record.at, 'at');
  if (record.type === 'snapshot') {
    return { seq, at, kind: 'snapshot', snapshot: snapshot(record.session, seq) };
  }
  return { seq, at, kind: 'change', change: change(record) };
}
