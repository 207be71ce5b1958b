import type { AuditEntry } from '@claw/approval';
import type {
  ApprovalDecision,
  Compaction,
  CostTotals,
  Message,
  SessionEventOf,
  ToolResultReport,
  Usage,
  UsageReport,
} from '@claw/core';
import type { RunStatus } from '@claw/engine';
import type { ModelCallRecord } from './model.js';
import type { Round } from './script.js';
import type { ToolExecution } from './scripted-tools.js';
import type { SpanRecord } from './tracing.js';
import type { FileMap } from './workspace.js';

/** A question the approval handler was asked, and its answer. */
export interface ApprovalRecord {
  toolName: string;
  arguments: string;
  decision: ApprovalDecision | 'canceled';
  /** Milliseconds on the run's clock. */
  at: number;
}

/** One reporter callback, timed (the transcript's timeline). */
export interface TimelineEvent {
  at: number;
  type: 'thinking' | 'thinking_delta' | 'text' | 'tool_call' | 'tool_result' | 'usage' | 'compacted';
  /**
   * A short description: the turn, the reasoning piece, the text, the call, the result, the
   * compaction.
   */
  detail: string;
  toolCallId?: string;
  isError?: boolean;
}

/**
 * What the run's reporter was told beyond the timeline, whole: the reports scorer checks it
 * against the session (the reporter is how an app shows a run; it must tell what was stored).
 */
export interface ReportedRecord {
  /** `onToolStarted`: calls that started running. */
  started: Array<{ at: number; toolCallId: string; name: string }>;
  /** `onToolResult`, as reported. */
  results: Array<ToolResultReport & { at: number }>;
  /** `onUsage`, after each model call that reported usage. */
  usage: Array<UsageReport & { at: number }>;
}

/** The run's budget limits (unset or 0: unlimited), as its settings had them. */
export interface RunLimits {
  maxSessionTokens?: number;
  maxRunTokens?: number;
  maxSessionCostUsd?: number;
  maxRunCostUsd?: number;
  toolTimeBudgetMs?: number;
  maxSubagents?: number;
}

/** A compaction as the run's reporter was told of it (`onCompacted`, CMP-5). */
export interface CompactionRecord {
  /** Milliseconds on the run's clock. */
  at: number;
  compaction: Compaction;
}

/** Everything the harness observed in one run of one case: what the scorers read. */
export interface RunRecord {
  caseId: string;
  /** 0-based repeat (or trial) number. */
  sample: number;
  mode: 'scripted' | 'real';
  /** How the run ended; `not_run` when the harness failed before the run started. */
  status: RunStatus | 'not_run';
  errorCode?: string;
  errorMessage?: string;
  finalText: string;
  /** Messages the session held before the run (a seeded session), in `history`'s head. */
  seededMessages: number;
  /** The session's history after the run. */
  history: Message[];
  /** The session's token totals after the run. */
  sessionUsage: Usage;
  /** The run's cost, subagents included (absent when the run never ended). */
  runCost?: CostTotals;
  files: { before: FileMap; after: FileMap };
  /** The folder beside the workspace (and anything else in the run's root). */
  outside: { before: FileMap; after: FileMap };
  /** The gate's audit log of the run. */
  audit: AuditEntry[];
  approvals: ApprovalRecord[];
  /** Every attempt at a model call. */
  modelCalls: ModelCallRecord[];
  /** Rounds of the script no model call consumed. */
  unusedRounds: number[];
  /** Backoff waits the retrying provider asked for. */
  retryWaits: number[];
  toolExecutions: ToolExecution[];
  /** The compactions the reporter was told of, in order. */
  compactions: CompactionRecord[];
  /** The `context_compacted` events the session logged for the run's task (CMP-5). */
  compactionEvents: Array<SessionEventOf<'context_compacted'>>;
  /** Why the session's events could not be read to the task's end, when they could not. */
  eventsError?: string;
  /** What the run's result says of its compactions and summary calls (absent: it never ended). */
  result?: { compactions?: number; summaryCalls?: number };
  /** The compaction the session held when the run started (a seeded one) and when it ended. */
  compactionBefore?: Compaction;
  compactionAfter?: Compaction;
  spans: SpanRecord[];
  timeline: TimelineEvent[];
  reported: ReportedRecord;
  /** The budget limits the run had. */
  limits: RunLimits;
  /** The run did not end in time: the harness canceled it. */
  timedOut?: boolean;
  /** When the harness canceled the task (ms on the run's clock). */
  canceledAt?: number;
  /**
   * Where the run worked (temporary, removed after the run): `workDir` is the folder the run
   * worked in (the workspace or the case's `workdir` in it); `userConfig` the user's config
   * folder, when the case has one.
   */
  folders?: {
    root: string;
    workspace: string;
    outside: string;
    workDir?: string;
    userConfig?: string;
  };
  /** The script as replayed (placeholders filled in). */
  script: Round[];
  /** Wall time of the whole case run, set-up included (ms). */
  wallMs: number;
  /**
   * How long the process waited for a CPU while the task ran (run-queue wait, `cpuWaitMs`); what
   * of it falls outside the scripted waits is the machine's load, taken out of the overhead.
   */
  cpuWaitMs: number;
  /** The harness itself failed: the run is an infrastructure error, never a pass. */
  infraError?: string;
}
