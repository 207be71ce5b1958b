import type { Compaction } from './compaction.js';
import type { Message, ToolCall, Usage } from './messages.js';

/**
 * The conversation a run works on. The engine reads the history, appends to it, and records
 * token usage; how it is stored (memory, disk) is the implementation's business. `append` and
 * `recordUsage` resolve once the change is in place and, for a persistent session, on its way to
 * disk in order.
 */
export interface AgentSession {
  readonly id: string;
  readonly workDir: string;
  /**
   * True when `append`, `recordUsage` and `toolFinished` change the session in memory before
   * they return, their promise saying only when the change is stored. The engine then goes on
   * while they are stored and checks them before the next tool starts and before the run ends
   * (PERF-1); otherwise it waits for each.
   */
  readonly changesApplyAtOnce?: boolean;
  /** The whole history, oldest first. Callers must not mutate it. */
  history(): readonly Message[];
  append(...messages: Message[]): Promise<void>;
  /**
   * Records the tokens of one model call and its price in US dollars (`undefined` when the model
   * has no known price: the call then counts as unpriced, never as free).
   */
  recordUsage(usage: Usage, costUsd?: number): Promise<void>;
  /** Token totals over the session's life (kept across `/clear`). */
  usage(): Usage;
  /** Cost over the session's life (kept across `/clear`). */
  cost(): CostTotals;
  /**
   * Called by the engine before each run (ENG-10): a persistent session repairs tool calls left
   * without an Observation by an earlier, interrupted run (SES-7), so the model never sees them
   * unpaired. Optional.
   */
  beforeRun?(): Promise<void>;
  /**
   * The tool journal (SES-8): called right before a tool's `execute` starts, and after it ended
   * (however it ended). A durable session writes the first before the tool runs, so that after a
   * crash it can tell "never started" from "started, outcome unknown". Optional.
   *
   * For a tool that only reads (`options.readOnly`), a durable session may resolve once the
   * intent is written, while it is still being flushed to the disk hardware: a crash of the
   * process loses nothing written, and a crash of the machine can lose only the intent of a call
   * that changed nothing. The session stores nothing after it before the flush is done.
   */
  toolStarted?(call: ToolCall, options?: ToolStartOptions): Promise<void>;
  toolFinished?(toolCallId: string): Promise<void>;
  /**
   * The conversation's latest compaction (CMP-4): the model is sent the history through it
   * (`compactedView`). Undefined when there is none (or after `clear`). Optional: a session
   * without it is compacted for the run only.
   */
  compaction?(): Compaction | undefined;
  /**
   * Stores a compaction (CMP-4); the full history stays. Resolves once it is stored, so that a
   * crash after it resumes from the compacted view.
   */
  compact?(compaction: Compaction): Promise<void>;
}

/** What the session is told about a tool call that is about to start. */
export interface ToolStartOptions {
  /** The tool only reads (`Tool.readOnly`). */
  readOnly?: boolean;
}

/** Money spent so far: the priced part, and how many calls could not be priced. */
export interface CostTotals {
  usd: number;
  /** Calls whose model had no price; when > 0 the true cost is higher than `usd`. */
  unpricedCalls: number;
}

export function addCost(totals: CostTotals, costUsd: number | undefined): CostTotals {
  return costUsd === undefined
    ? { usd: totals.usd, unpricedCalls: totals.unpricedCalls + 1 }
    : { usd: totals.usd + costUsd, unpricedCalls: totals.unpricedCalls };
}
