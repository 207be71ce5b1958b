import type { Compaction } from './compaction.js';
import type { Message, ToolCall, Usage } from './messages.js';
import type { ModelRetry } from './provider.js';
import type { CostTotals } from './session.js';
import type { ToolProgress } from './tools.js';

/** What the reporter is told about one finished tool call. */
export interface ToolResultReport {
  toolCallId: string;
  toolName: string;
  content: string;
  isError: boolean;
}

/** What the reporter is told when a running tool call reports progress. */
export interface ToolProgressReport extends ToolProgress {
  toolCallId: string;
  toolName: string;
}

/**
 * A running tool's progress as a session's task reports it to whoever follows the session
 * (clients of this process, and of others through a shared store): best effort, never stored.
 */
export interface TaskToolProgress extends ToolProgressReport {
  taskId: string;
}

/** What the reporter is told when a model call failed and is tried again (`ModelRetry`). */
export interface ModelRetryReport extends Omit<ModelRetry, 'error'> {
  /** Why the attempt failed: the error's message. */
  reason: string;
}

/** Tokens and money after one model call, and what the budgets have left (BUD-*). */
export interface UsageReport {
  /** This model call. */
  call: Usage;
  /** Price of this call in US dollars; `undefined` when the model has no price. */
  callCostUsd: number | undefined;
  /** This run so far, subagents included. */
  run: Usage;
  runCost: CostTotals;
  /** The session's whole life. */
  session: Usage;
  sessionCost: CostTotals;
  /** What each limited budget has left (absent: unlimited). */
  budgetsLeft: {
    sessionTokens?: number;
    runTokens?: number;
    sessionCostUsd?: number;
    runCostUsd?: number;
    toolTimeMs?: number;
    subagents?: number;
  };
}

/**
 * Receives what happens during a run, for a terminal, a socket or a log (CORE-4). Every callback
 * is awaited and may fail: a rejected callback stops the run (ENG-7), so a reporter that cannot
 * deliver (a closed connection) never lets tools run unseen. All callbacks are optional. The time
 * a callback takes never counts against a model call's timeouts.
 */
export interface Reporter {
  /**
   * A model call is about to start (`turn` counts from 1 within the run); `purpose: 'summary'`
   * for the call that summarises the conversation to compact it (CMP-6), made for that turn.
   */
  onThinking?(info: { turn: number; purpose?: 'summary' }): void | Promise<void>;
  onTextDelta?(delta: string): void | Promise<void>;
  /**
   * A piece of the model's reasoning (REAL-4), before or between the pieces of its answer; not
   * part of the answer's text. Awaited like a text delta.
   */
  onThinkingDelta?(delta: string): void | Promise<void>;
  /** The whole text of one assistant reply, once it is complete. */
  onTextCompleted?(text: string): void | Promise<void>;
  /** Called before the tool is executed; if it fails the tool does not run. */
  onToolCall?(call: ToolCall): void | Promise<void>;
  onToolResult?(result: ToolResultReport): void | Promise<void>;
  /**
   * A call starts running: it was allowed and its intent recorded (between its `onToolCall` and
   * `onToolResult`; never for a call that is denied). Informational, like progress: the run does
   * not wait for it, and its failure is ignored.
   */
  onToolStarted?(call: ToolCall): void | Promise<void>;
  /**
   * A running tool reported progress (between its `onToolCall` and `onToolResult`). Informational:
   * the run does not wait for it, and unlike the other callbacks its failure is ignored.
   */
  onToolProgress?(report: ToolProgressReport): void | Promise<void>;
  /**
   * A model call failed and is tried again after `delayMs`. Informational, as tool progress is:
   * the run does not wait for it, and its failure is ignored.
   */
  onModelRetry?(report: ModelRetryReport): void | Promise<void>;
  /** Every message appended to the history, in order. */
  onMessage?(message: Message): void | Promise<void>;
  /** After each model call that reported usage. */
  onUsage?(report: UsageReport): void | Promise<void>;
  /** The conversation was compacted (CMP-5), before the model call it was made for. */
  onCompacted?(compaction: Compaction): void | Promise<void>;
}
