import { createHash } from 'node:crypto';
import {
  messageSchema,
  toolCallSchema,
  type CostTotals,
  type Message,
  type ToolCall,
  type Usage,
} from '@claw/core';
import type { RepairInsert, SessionChange, SessionState } from './session-state.js';

/** The version every record of a session file carries (`"v"`). */
export const sessionRecordVersion = 1;

// `,"sum":"` + 8 hex digits + `"}`
const sumSuffixLength = 18;
const sumSuffix = /^,"sum":"([0-9a-f]{8})"\}$/;

function checksum(body: string): string {
  return createHash('sha256').update(body, 'utf8').digest('hex').slice(0, 8);
}

/**
 * One JSON line: the record with a `sum` field last, the first 8 hex digits of the SHA-256 of the
 * record's JSON without it. A line cut short or scribbled over then never passes for data.
 */
function seal(record: object): string {
  const body = JSON.stringify(record);
  return `${body.slice(0, -1)},"sum":"${checksum(body)}"}\n`;
}

/** The log line for change number `seq`, made at time `at`. */
export function encodeChange(seq: number, at: string, change: SessionChange): string {
  return seal({ v: sessionRecordVersion, seq, at, ...change });
}

/** The snapshot line: the whole state, the first line of every session file. */
export function encodeSnapshot(state: SessionState): string {
  return seal({
    v: sessionRecordVersion,
    seq: state.seq,
    at: state.updatedAt,
    type: 'snapshot',
    session: {
      id: state.id,
      workDir: state.workDir,
      createdAt: state.createdAt,
      updatedAt: state.updatedAt,
      history: state.messages,
      usage: state.usage,
      cost: state.cost,
      journal: {
        active: state.journalActive,
        calls: [...state.journal].map(([id, entry]) => ({ id, ...entry })),
      },
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

/** The snapshot's contents. */
export interface SnapshotData {
  createdAt: string;
  updatedAt: string;
  workDir: string;
  history: Message[];
  usage: Usage;
  cost: CostTotals;
  journalActive: boolean;
  journal: Map<string, { started: boolean; finished: boolean }>;
}

export type DecodedRecord =
  | { seq: number; at: string; kind: 'snapshot'; snapshot: SnapshotData }
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
  return {
    promptTokens: count(object.promptTokens, `${what}.promptTokens`),
    completionTokens: count(object.completionTokens, `${what}.completionTokens`),
    totalTokens: count(object.totalTokens, `${what}.totalTokens`),
  };
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

function snapshot(value: unknown): SnapshotData {
  const session = fields(value, 'session');
  const journal = fields(session.journal, 'session.journal');
  const entries = list(journal.calls, 'session.journal.calls').map((item, index) => {
    const entry = fields(item, `session.journal.calls[${index}]`);
    return [
      text(entry.id, `session.journal.calls[${index}].id`),
      {
        started: flag(entry.started, `session.journal.calls[${index}].started`),
        finished: flag(entry.finished, `session.journal.calls[${index}].finished`),
      },
    ] as const;
  });
  return {
    createdAt: time(session.createdAt, 'session.createdAt'),
    updatedAt: time(session.updatedAt, 'session.updatedAt'),
    workDir: text(session.workDir, 'session.workDir'),
    history: messages(session.history, 'session.history'),
    usage: usage(session.usage, 'session.usage'),
    cost: cost(session.cost, 'session.cost'),
    journalActive: flag(journal.active, 'session.journal.active'),
    journal: new Map(entries),
  };
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
  if (version !== sessionRecordVersion) {
    const newer = typeof version === 'number' && Number.isInteger(version) && version > 1;
    throw new RecordProblem(`record version ${JSON.stringify(version)} is not supported`, newer);
  }
  const seq = whole(record.seq, 'seq');
  const at = time(record.at, 'at');
  if (record.type === 'snapshot') {
    return { seq, at, kind: 'snapshot', snapshot: snapshot(record.session) };
  }
  return { seq, at, kind: 'change', change: change(record) };
}
