import type { CompactionReason } from './compaction.js';
import type { RiskLevel } from './tools.js';

/**
 * The events of a session (RT-3, CH-2), as the runtime records them and the channel protocol
 * sends them: one value per event, snake_case as on the wire. The zod schemas that validate them
 * live in `@claw/channel` (which checks at compile time that they describe these same types).
 */

export const approvalDecisions = ['allow_once', 'allow_session', 'deny'] as const;
export type ApprovalDecision = (typeof approvalDecisions)[number];

/**
 * What happens to a call the policy would ask about (`--approval`, CLI-6): `ask` a person, `allow`
 * it once without asking (unless only a person may), or `deny` it. Policy denials always stand.
 */
export const approvalModes = ['ask', 'allow', 'deny'] as const;
export type ApprovalMode = (typeof approvalModes)[number];

/** What a user may answer a request for input (MCP-7): fill it in, say no, or dismiss it. */
export const elicitationActions = ['accept', 'decline', 'cancel'] as const;
export type ElicitationAction = (typeof elicitationActions)[number];

/**
 * The form an MCP server asks the user to fill in (MCP-7, `elicitation/create` in form mode): a
 * flat object whose properties are strings, numbers, integers, booleans or enums, each a JSON
 * Schema (`type`, `title`, `description`, `default`, `enum`, `minimum`, …) as the server sent it.
 */
export interface ElicitationSchema {
  type: 'object';
  properties: Record<string, Record<string, unknown>>;
  required?: string[];
}

/** What the user entered, by the names of the form's properties. */
export type ElicitationContent = Record<string, string | number | boolean | string[]>;

/** The user's answer to a request for input: the form filled in, a refusal, or a dismissal. */
export type ElicitationAnswer =
  | { action: 'accept'; content: ElicitationContent }
  | { action: 'decline' }
  | { action: 'cancel' };

/** What a session is doing (the `state` event, RT-4 snapshots). */
export const sessionRunStates = ['idle', 'running', 'awaiting_approval'] as const;
export type SessionRunState = (typeof sessionRunStates)[number];

/** Token counts on the wire. */
export interface WireUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Of `prompt_tokens`, those read from the server's prompt cache (absent: not reported). */
  cached_tokens?: number;
}

/**
 * What is left of each budget that has a limit (absent: unlimited). Tokens and spawns are counts,
 * cost in US dollars, tool time in milliseconds.
 */
export interface BudgetsLeft {
  session_tokens?: number;
  run_tokens?: number;
  session_cost_usd?: number;
  run_cost_usd?: number;
  tool_time_ms?: number;
  subagents?: number;
}

/** The events of a session, before the log gives them `session_id`, `seq` and `at`. */
export type SessionEventBody =
  /** A task began with this prompt (every watcher sees what was asked). */
  | { type: 'task_started'; task_id: string; content: string }
  /** A model call starts; `purpose: 'summary'` when it summarises the conversation (CMP-6). */
  | { type: 'thinking'; task_id: string; turn: number; purpose?: 'summary' }
  | { type: 'text_delta'; task_id: string; content: string }
  /** A piece of the model's reasoning (REAL-4): shown apart from the answer, not part of it. */
  | { type: 'thinking_delta'; task_id: string; content: string }
  | { type: 'text_completed'; task_id: string; content: string }
  | {
    type: 'tool_call';
    task_id: string;
    tool_call_id: string;
    tool_name: string;
    arguments: string;
  }
  | {
    type: 'tool_result';
    task_id: string;
    tool_call_id: string;
    tool_name: string;
    result: string;
    is_error: boolean;
  }
  | {
    type: 'approval_request';
    task_id: string;
    request_id: string;
    tool_name: string;
    risk: RiskLevel;
    reason: string;
    arguments: string;
  }
  | {
    type: 'approval_resolved';
    task_id: string;
    request_id: string;
    decision: ApprovalDecision;
    /** Who decided: a client's name, or `"canceled"` when the wait ended without an answer. */
    by: string;
  }
  /**
   * An MCP server asks the user for input during a task (MCP-7): whoever answers approvals is
   * asked to fill in `requested_schema` (a channel client answers with `elicitation_response`).
   */
  | {
    type: 'elicitation_request';
    task_id: string;
    request_id: string;
    /** The MCP server that asks, as named in its configuration. */
    server: string;
    message: string;
    requested_schema: ElicitationSchema;
  }
  /**
   * The request for input was answered (what was entered is not recorded) or ended: `by` names
   * who answered, `"timeout"` when nobody did in time (claw declined), `"canceled"` when the
   * question was withdrawn (the server canceled it, the task ended), `"nobody"` when there was
   * nobody to ask (claw declined).
   */
  | {
    type: 'elicitation_resolved';
    task_id: string;
    request_id: string;
    action: ElicitationAction;
    by: string;
  }
  | { type: 'state'; state: SessionRunState; task_id?: string }
  /**
   * A model call failed and is tried again after `delay_ms`: attempt `attempt` (from 1) of
   * `attempts` failed with `error`.
   */
  | {
    type: 'model_retry';
    task_id: string;
    attempt: number;
    attempts: number;
    delay_ms: number;
    error: string;
  }
  | {
    type: 'usage';
    task_id: string;
    /** This model call. */
    call: WireUsage;
    /** This task so far (subagents included). */
    run: WireUsage;
    /** The session's whole life. */
    session: WireUsage;
    /** US dollars: this call (null when the model has no price), the task, the session. */
    cost: { call_usd: number | null; run_usd: number; session_usd: number; unpriced_calls: number };
    budgets_left: BudgetsLeft;
  }
  /**
   * The conversation was compacted to fit the model's context (CMP-5): why, the request's size
   * before and after (tokens), how many old tool results were pruned and messages summarised,
   * the summary (when one was made), and why the summary failed (when it did: the messages were
   * then left out, the user's kept).
   */
  | {
    type: 'context_compacted';
    task_id: string;
    reason: CompactionReason;
    tokens_before: number;
    tokens_after: number;
    pruned_results: number;
    summarised_messages: number;
    summary?: string;
    error?: string;
  }
  | { type: 'task_completed'; task_id: string; content: string }
  | { type: 'task_canceled'; task_id: string; reason?: string }
  | { type: 'task_failed'; task_id: string; error: string; code: string };

/** Fields every session event carries (RT-3). */
export interface SessionEventFields {
  session_id: string;
  /** Per session: 1, 2, 3… never reused, continued after a restart. */
  seq: number;
  /** ISO 8601. */
  at: string;
}

type WithFields<T> = T extends unknown ? T & SessionEventFields : never;

/** One recorded event of a session. */
export type SessionEvent = WithFields<SessionEventBody>;
export type SessionEventType = SessionEvent['type'];
export type SessionEventOf<T extends SessionEventType> = Extract<SessionEvent, { type: T }>;

/** The event types that end a task; exactly one of them ends every task. */
export const taskEndEventTypes = ['task_completed', 'task_canceled', 'task_failed'] as const;
export type TaskEndEventType = (typeof taskEndEventTypes)[number];

/** True for `task_completed`, `task_canceled` and `task_failed`. */
export function isTaskEndEvent(
  event: { type: string },
): event is { type: TaskEndEventType } {
  return (taskEndEventTypes as readonly string[]).includes(event.type);
}

const encodedEvents = new WeakMap<object, string>();

/**
 * `JSON.stringify(event)`, made once per event object: an event is stored with its session and
 * sent to every client that follows it, and it never changes once it is numbered. Use it only
 * for values that are never changed after their first encoding.
 */
export function eventJson(event: object): string {
  let json = encodedEvents.get(event);
  if (json === undefined) {
    json = JSON.stringify(event);
    encodedEvents.set(event, json);
  }
  return json;
}

/**
 * Lets go of the encoding `eventJson` keeps for `event`, once nothing is about to send it again
 * (an event log keeps its events for replay, and their text would stay as long as they do). A
 * later `eventJson(event)` encodes it anew.
 */
export function forgetEventJson(event: object): void {
  encodedEvents.delete(event);
}
