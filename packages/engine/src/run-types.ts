import type {
  AgentSession,
  Compaction,
  ApprovalGate,
  ClawError,
  CostTotals,
  Reporter,
  TextFileAccess,
  ToolCall,
  Usage,
} from '@claw/core';
import type { Context } from '@opentelemetry/api';
import type { ToolSource } from './registry.js';
import type { InstructionText, SessionEnvironment } from './system-prompt.js';

/** One run of `Engine.run`: the session it continues, and what applies to this run only. */
export interface RunOptions {
  session: AgentSession;
  reporter?: Reporter;
  /**
   * Decides this run's tool calls (ENG-3), so that one engine can serve many sessions, each with
   * its own gate (RT-2). Default: the engine's `gate`; with neither, the run fails at once
   * (`approval_gate_missing`). Subagents the run spawns use the same gate.
   */
  gate?: ApprovalGate;
  /** Aborting cancels the run: the model call and running tools stop at once (ENG-5). */
  signal?: AbortSignal;
  /** Parent of the run's root span (e.g. an "Eval" span); default: the active context. */
  traceContext?: Context;
  /**
   * Tools for this run only, next to the engine's (e.g. the MCP tools of the session's
   * workspace). Read again for every model call and tool call, so tools that come and go during
   * the run are seen by the next one; subagents the run spawns get them too. An engine tool of
   * the same name wins.
   */
  tools?: ToolSource;
  /**
   * Goes on with a task a stopped process left waiting for approvals (SCALE-3) instead of
   * starting from the prompt (which is then not added to the history): these calls, which never
   * ran, are made again as a new turn of the model's, asked about at the gate again and run if
   * allowed; the loop then goes on as usual. Give them new ids: their first ids already have the
   * Observation repair gave them ("never started").
   */
  resumeCalls?: readonly ToolCall[];
  /**
   * Where this run works, for the system prompt's environment block (REAL-1); default: the
   * engine's `environment`. Give the same one to every run of a session, so that its requests
   * keep the same system prompt (providers cache the prefix).
   */
  environment?: SessionEnvironment;
  /** The project instructions of this run (REAL-2); default: the engine's `instructions`. */
  instructions?: readonly InstructionText[];
  /**
   * Where the file tools of this run read and write text instead of the local file system: the
   * editor's, when an ACP client offers it (ACP-4), so that the model sees unsaved buffers and
   * its edits show in the editor. Given to every tool call as `ToolContext.files`, those of the
   * run's subagents too. The tools' path checks and the approval gate apply as without it.
   * Default: none (the local file system).
   */
  files?: TextFileAccess;
}

/** How a run ended: a final answer, an abort, an error, or the turn limit. */
export type RunStatus = 'completed' | 'canceled' | 'failed' | 'max_turns';

/** What `Engine.run` resolves to: how the run ended, its last reply, and what it used. */
export interface RunResult {
  status: RunStatus;
  /** The text of the last assistant reply of this run ('' if there was none). */
  finalText: string;
  /** Why the run did not complete (`failed`, `max_turns`); a budget is a `BudgetExceededError`. */
  error?: ClawError;
  /** Model calls made (by this run itself, not its subagents). */
  turns: number;
  /** Tokens this run used, its subagents included. */
  usage: Usage;
  /** Cost of this run, its subagents included. */
  cost: CostTotals;
  /** Wall time of tool execution, parallel calls counted once (ms). */
  toolWallMs: number;
  /** Subagents this run spawned. */
  subagents: number;
  /** Times the run compacted the conversation (CMP-5), and its summary calls (model calls). */
  compactions?: number;
  summaryCalls?: number;
  /** The compaction made, for `Engine.compact` (absent when there was nothing to compact). */
  compaction?: Compaction;
}
