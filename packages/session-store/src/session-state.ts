import {
  addCost,
  addUsage,
  emptyUsage,
  shiftCompaction,
  type Compaction,
  type CostTotals,
  type Message,
  type SessionEvent,
  type SessionEventOf,
  type SessionRunState,
  type ToolCall,
  type ToolMessage,
  type Usage,
} from '@claw/core';
import { SessionLogError } from './errors.js';
import type { ToolJournalView } from './repair.js';
import type { LogRecord, SessionSnapshot, StoredLog } from './session-log.js';

/** What a call's `tool_result` event stored: its Observation's text and whether it failed. */
export interface StoredToolResult {
  content: string;
  isError: boolean;
}

/** What the tool journal knows about one call (SES-8). */
export interface JournalEntry {
  started: boolean;
  finished: boolean;
  /**
   * Its result, once its `tool_result` event is stored. A wave appends its Observations only
   * once every call ended, so after a crash in between this is the one record of what the call
   * returned: repair puts it back rather than tell the model the result was lost.
   */
  result?: StoredToolResult;
}

/** Everything a session keeps (SES-1), as held in memory and written in a snapshot. */
export interface SessionState {
  id: string;
  workDir: string;
  createdAt: string;
  updatedAt: string;
  /** The number of the last change applied (0 for a new session). */
  seq: number;
  /** The seq of the last event handed out (RT-3); 0 before the first. */
  eventSeq: number;
  messages: Message[];
  usage: Usage;
  cost: CostTotals;
  /** True once any tool start or end was recorded: from then on, no record means "not started". */
  journalActive: boolean;
  /**
   * Journal entries of calls that have no Observation yet (also of calls that never started but
   * have a stored result: a denied call, say).
   */
  journal: Map<string, JournalEntry>;
  /** The task the session's events say is running (see {@link OpenTask}). */
  openTask: OpenTask | undefined;
  /** How the model sees the history since it was last compacted (CMP-4); none after `clear`. */
  compaction: Compaction | undefined;
}

/**
 * The task a session's events say is running: started and not ended (RT-3). Snapshots keep it,
 * so that a process that reads the session after a compaction still knows it: another instance
 * serving the session (SCALE-4), or the one that takes it over and ends it (SCALE-3).
 */
export interface OpenTask {
  taskId: string;
  prompt: string;
  state: SessionRunState;
  /** Its questions still waiting for an answer, as their `approval_request` events. */
  approvals: Array<SessionEventOf<'approval_request'>>;
  /**
   * Its MCP servers' requests for input still waiting for an answer (MCP-7), as their
   * `elicitation_request` events. Absent when none waits (and in snapshots from before it).
   */
  elicitations?: Array<SessionEventOf<'elicitation_request'>>;
  /**
   * Its tool calls whose `tool_result` event is not stored, in order: whoever ends the task after
   * a crash answers exactly these, whichever process repaired its history. Absent in snapshots
   * from before it (and then for the rest of that task).
   */
  calls?: Array<{ id: string; name: string }>;
}

/** The open task after `event`. */
function followTask(open: OpenTask | undefined, event: SessionEvent): OpenTask | undefined {
  switch (event.type) {
    case 'task_started':
      return {
        taskId: event.task_id,
        prompt: event.content,
        state: 'running',
        approvals: [],
        calls: [],
      };
    case 'tool_call':
      return open?.calls === undefined
        ? open
        : { ...open, calls: [...open.calls, { id: event.tool_call_id, name: event.tool_name }] };
    case 'tool_result':
      return open?.calls === undefined
        ? open
        : { ...open, calls: open.calls.filter((call) => call.id !== event.tool_call_id) };
    case 'state':
      return open === undefined ? undefined : { ...open, state: event.state };
    case 'approval_request':
      return open === undefined ? undefined : { ...open, approvals: [...open.approvals, event] };
    case 'approval_resolved':
      return open === undefined
        ? undefined
        : {
            ...open,
            approvals: open.approvals.filter((asked) => asked.request_id !== event.request_id),
          };
    case 'elicitation_request':
      return open === undefined
        ? undefined
        : { ...open, elicitations: [...(open.elicitations ?? []), event] };
    case 'elicitation_resolved':
      return open?.elicitations === undefined ? open : withoutElicitation(open, event.request_id);
    case 'task_completed':
    case 'task_canceled':
    case 'task_failed':
      return undefined;
    case 'thinking':
    case 'model_retry':
    case 'text_delta':
    case 'thinking_delta':
    case 'context_compacted':
    case 'text_completed':
    case 'usage':
      return open;
    default: {
      // Every type is named above: a new one fails to compile here instead of closing the task.
      // One written by a newer claw (read from its file) leaves the task as it is.
      const newer: never = event;
      void newer;
      return open;
    }
  }
}

/** `open` without the request for input `requestId` (and without the field once none waits). */
function withoutElicitation(open: OpenTask, requestId: string): OpenTask {
  const { elicitations = [], ...rest } = open;
  const waiting = elicitations.filter((asked) => asked.request_id !== requestId);
  return waiting.length === 0 ? rest : { ...rest, elicitations: waiting };
}

/** One Observation inserted by repair, at its index in the repaired history. */
export interface RepairInsert {
  index: number;
  message: ToolMessage;
}

/** One change to a session: what one log record carries. */
export type SessionChange =
  | { type: 'append'; messages: Message[] }
  | { type: 'usage'; usage: Usage; costUsd?: number }
  | { type: 'clear' }
  | { type: 'tool_started'; call: ToolCall }
  | { type: 'tool_finished'; toolCallId: string }
  | { type: 'repair'; inserts: RepairInsert[] }
  /** The conversation was compacted (CMP-4): the model sees the history through it from now on. */
  | { type: 'compaction'; compaction: Compaction }
  /** One event of the session (RT-3): changes nothing but the event count. */
  | { type: 'event'; event: SessionEvent };

/** A new, empty session. */
export function newSessionState(options: {
  id: string;
  workDir: string;
  now: string;
}): SessionState {
  return {
    id: options.id,
    workDir: options.workDir,
    createdAt: options.now,
    updatedAt: options.now,
    seq: 0,
    eventSeq: 0,
    messages: [],
    usage: { ...emptyUsage },
    cost: { usd: 0, unpricedCalls: 0 },
    journalActive: false,
    journal: new Map(),
    openTask: undefined,
    compaction: undefined,
  };
}

/** Thrown by {@link applyChange} when a change does not fit the state (a corrupt log). */
export class ChangeMismatch extends Error {}

function journalEntry(state: SessionState, id: string): JournalEntry {
  let entry = state.journal.get(id);
  if (entry === undefined) {
    entry = { started: false, finished: false };
    state.journal.set(id, entry);
  }
  return entry;
}

/**
 * Keeps the result a `tool_result` event stores for a call still waiting for its Observation
 * (see {@link JournalEntry.result}). One reported after its Observation, or for a call the
 * history does not have (a subagent's), is not kept.
 */
function keepResult(state: SessionState, event: SessionEventOf<'tool_result'>): void {
  // Events are read back unchecked (the runtime's to validate); repair writes this one as a
  // message, so only a well-formed result is kept.
  if (typeof event.result !== 'string' || typeof event.is_error !== 'boolean') return;
  if (!awaitsObservation(state.messages, event.tool_call_id)) return;
  journalEntry(state, event.tool_call_id).result = {
    content: event.result,
    isError: event.is_error,
  };
}

/**
 * True when `id` is a call of the latest assistant message and no Observation for it follows
 * (where `findUnpairedCalls` looks for one).
 */
function awaitsObservation(messages: readonly Message[], id: string): boolean {
  for (let at = messages.length - 1; at >= 0; at -= 1) {
    const message = messages[at];
    if (message?.role === 'assistant') {
      return message.toolCalls?.some((call) => call.id === id) === true;
    }
    if (message?.role === 'tool' && message.toolCallId === id) return false;
  }
  return false;
}

/**
 * Applies one change at time `at`. The live session and the log reader both go through here, so
 * what is reloaded is what was in memory.
 *
 * @throws ChangeMismatch when a repair insert points outside the history.
 */
export function applyChange(state: SessionState, change: SessionChange, at: string): void {
  switch (change.type) {
    case 'append':
      for (const message of change.messages) {
        state.messages.push(message);
        // An Observation closes the call's journal entry (so a provider reusing ids next turn
        // starts from nothing).
        if (message.role === 'tool') state.journal.delete(message.toolCallId);
      }
      break;
    case 'usage':
      state.usage = addUsage(state.usage, change.usage);
      state.cost = addCost(state.cost, change.costUsd);
      break;
    case 'clear':
      // A new array: a caller still holding the old history keeps what it read.
      state.messages = [];
      state.journal.clear();
      state.compaction = undefined;
      break;
    case 'tool_started':
      state.journalActive = true;
      journalEntry(state, change.call.id).started = true;
      break;
    case 'tool_finished':
      state.journalActive = true;
      journalEntry(state, change.toolCallId).finished = true;
      break;
    case 'repair':
      for (const insert of change.inserts) {
        if (insert.index > state.messages.length) {
          throw new ChangeMismatch(
            `repair inserts at ${insert.index}, but the history has ${state.messages.length} messages`,
          );
        }
        state.messages.splice(insert.index, 0, insert.message);
        state.journal.delete(insert.message.toolCallId);
        // What the compaction names by index stays what it named.
        if (state.compaction !== undefined) {
          state.compaction = shiftCompaction(state.compaction, insert.index, 1);
        }
      }
      break;
    case 'compaction': {
      const { upTo, kept } = change.compaction;
      if (upTo > state.messages.length || kept.some((index) => index >= upTo)) {
        throw new ChangeMismatch(
          `a compaction replaces ${upTo} messages, but the history has ${state.messages.length}`,
        );
      }
      state.compaction = change.compaction;
      break;
    }
    case 'event':
      if (change.event.seq !== state.eventSeq + 1) {
        throw new ChangeMismatch(
          `event ${change.event.seq} follows event ${state.eventSeq}`,
        );
      }
      state.eventSeq = change.event.seq;
      state.openTask = followTask(state.openTask, change.event);
      if (change.event.type === 'tool_result') keepResult(state, change.event);
      break;
  }
  state.updatedAt = at;
}

/**
 * Applies the next record of a log (its change, then its seq).
 *
 * @throws ChangeMismatch when the record is not the next one or its change does not fit.
 */
export function applyRecord(state: SessionState, record: LogRecord): void {
  if (record.seq !== state.seq + 1) {
    throw new ChangeMismatch(`record ${record.seq} does not follow record ${state.seq}`);
  }
  applyChange(state, record.change, record.at);
  state.seq = record.seq;
}

/** Most events kept from a stored log for replay after a load (the newest ones). */
export const maxStoredEvents = 10_000;

/**
 * The state a stored log describes, working in `workDir` (the caller's: SES-5), and the events
 * in it: the newest {@link maxStoredEvents}, without gaps. Every reader of a stored log (the
 * store that opens a session, a replica of one another process writes) goes through here.
 *
 * @throws SessionLogError `session_corrupt` naming `location` and the record at fault when a
 *   record does not fit the session.
 */
export function replay(
  stored: StoredLog,
  options: { workDir: string; location: string },
): { state: SessionState; events: SessionEvent[] } {
  const state = stateOf(stored.snapshot, options.workDir);
  const events: SessionEvent[] = [];
  for (const [index, record] of stored.records.entries()) {
    try {
      applyRecord(state, record);
    } catch (error) {
      if (!(error instanceof ChangeMismatch)) throw error;
      const { location } = options;
      // Record 1 is the snapshot (a file's line numbers count the same way).
      const at = index + 2;
      throw new SessionLogError(
        `The stored session ${location} is corrupt at record ${at} (line ${at} of a file): ` +
        `${error.message}. claw leaves it as it is; move it away (or restore it from a backup) ` +
        'to start this session afresh.',
        { code: 'session_corrupt', location, record: at, cause: error },
      );
    }
    if (record.change.type === 'event') events.push(record.change.event);
  }
  return { state, events: events.slice(-maxStoredEvents) };
}

/**
 * The journal as repair reads it, or `undefined` when this session never kept one and has no
 * stored result to put back.
 */
export function journalView(state: SessionState): ToolJournalView | undefined {
  const started = new Set<string>();
  const finished = new Set<string>();
  const results = new Map<string, ToolMessage>();
  for (const [id, entry] of state.journal) {
    if (entry.started) started.add(id);
    if (entry.finished) finished.add(id);
    if (entry.result !== undefined) results.set(id, observationOf(id, entry.result));
  }
  if (!state.journalActive && results.size === 0) return undefined;
  return { started, finished, results, active: state.journalActive };
}

/** The Observation a stored result stands for. */
function observationOf(toolCallId: string, result: StoredToolResult): ToolMessage {
  return result.isError
    ? { role: 'tool', toolCallId, content: result.content, isError: true }
    : { role: 'tool', toolCallId, content: result.content };
}

/** The snapshot of a new session: nothing in it yet. */
export function newSessionSnapshot(
  options: { id: string; workDir: string; now: string },
): SessionSnapshot {
  return snapshotOf(newSessionState(options));
}

/** The state as one storable value. */
export function snapshotOf(state: SessionState): SessionSnapshot {
  return {
    id: state.id,
    workDir: state.workDir,
    createdAt: state.createdAt,
    updatedAt: state.updatedAt,
    seq: state.seq,
    eventSeq: state.eventSeq,
    // A copy of the list (not of the messages): later appends do not reach a snapshot in flight.
    history: [...state.messages],
    usage: state.usage,
    cost: state.cost,
    journal: {
      active: state.journalActive,
      // With its result when one is stored: a snapshot without results reads as before.
      calls: [...state.journal].map(([id, entry]) => ({ id, ...entry })),
    },
    ...(state.openTask === undefined ? {} : { openTask: state.openTask }),
    ...(state.compaction === undefined ? {} : { compaction: state.compaction }),
  };
}

/** The state a snapshot describes, working in `workDir` (the caller's: SES-5). */
export function stateOf(snapshot: SessionSnapshot, workDir: string): SessionState {
  return {
    id: snapshot.id,
    workDir,
    createdAt: snapshot.createdAt,
    updatedAt: snapshot.updatedAt,
    seq: snapshot.seq,
    eventSeq: snapshot.eventSeq,
    messages: [...snapshot.history],
    usage: { ...snapshot.usage },
    cost: { ...snapshot.cost },
    journalActive: snapshot.journal.active,
    // With its result only when one was stored (see `snapshotOf`).
    journal: new Map(snapshot.journal.calls.map(({ id, ...entry }) => [id, entry])),
    openTask: snapshot.openTask,
    compaction: snapshot.compaction,
  };
}
