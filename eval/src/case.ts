import {
  compactionReasons,
  modelPriceSchema,
  type ApprovalDecision,
  type CompactionReason,
  type Message,
  type ModelPrice,
  type RiskLevel,
} from '@claw/core';
import type { BudgetOptions, RunStatus } from '@claw/engine';
import { z } from 'zod';
import { EvalError } from './errors.js';
import { roundSchema, type Round } from './script.js';

/** The scorers, in the order their results are listed. */
export const scorerNames = [
  'script',
  'state',
  'trajectory',
  'boundary',
  'pairing',
  'budget',
  'trace',
  'requests',
  'compaction',
  'reports',
] as const;
export type ScorerName = (typeof scorerNames)[number];

/** A tool the case adds for the run: it waits `delayMs` (honouring the abort) and answers. */
export interface ScriptedToolSpec {
  name: string;
  description?: string;
  /** Default `safe` (no approval). */
  risk?: RiskLevel;
  /** How long one call takes, in milliseconds: fixed, or from the call's arguments. */
  delayMs?: number | ((args: Record<string, unknown>) => number);
  /** What the call returns. Default `ok`. */
  result?: string | ((args: Record<string, unknown>) => string);
}

/** How the approval handler answers a call the policy asks about. */
export interface ApprovalRule {
  tool: string;
  /** Only calls whose `path` argument is this. */
  path?: string;
  decision: ApprovalDecision;
}

export interface ApprovalSpec {
  /** Default `allow_once`. */
  default?: ApprovalDecision;
  /** The first rule that matches a call decides it. */
  rules?: ApprovalRule[];
}

/** Run limits of the case, as the engine's budgets name them (BUD-*), and its most turns. */
export type CaseBudgets = BudgetOptions & { maxTurns?: number };

/**
 * How the script reaches the engine. `in-process`: a scripted provider handed to the factory.
 * `openai-http`: the script is served by a fake OpenAI-compatible server on 127.0.0.1 and read by
 * the real OpenAI provider wrapped in the real retrying provider, as claw runs with a real model
 * (timeouts and retries included; backoff waits are skipped, and a hanging round makes its
 * first-token timer fire at once). The timeouts and retries are the run's settings: the
 * runtime's defaults unless the case sets them here.
 */
export interface ModelSpec {
  transport?: 'in-process' | 'openai-http';
  /**
   * The model the run asks for, which the scripted model answers as, and whose price the run's
   * cost is reckoned by (scripted runs only). Default `claw-eval-script` (no price).
   */
  name?: string;
  /** The price of `name` (US dollars per million tokens), over the default price table. */
  price?: ModelPrice;
  /** Retries after the first attempt (openai-http). Default 2 (the runtime's). */
  retries?: number;
  /** Limit until a streamed reply's first piece (openai-http). Default 120 000 (the runtime's). */
  firstTokenTimeoutMs?: number;
  /** Limit of silence between a stream's pieces (openai-http). Default 120 000 (the runtime's). */
  streamIdleTimeoutMs?: number;
  /** Limit of a whole model call (openai-http). Default 0: none (the runtime's). */
  callTimeoutMs?: number;
}

/** When the harness cancels the task. */
export type CancelPoint =
  /** As soon as a scripted tool (or the named one) starts executing. */
  | { when: 'tool_started'; tool?: string }
  /** As soon as model call `call` (1-based) starts. */
  | { when: 'model_call'; call: number }
  /** While the approval handler is asked about a call. */
  | { when: 'approval' };

/**
 * A compaction the seeded session has stored (CMP-4), as a run that compacted and then crashed
 * left it: the model is to be sent the history through it. Indices are into `history`.
 */
export interface CompactionSeed {
  /** Messages before this index are replaced (by `summary`, or left out without one). */
  upTo: number;
  /** Indices (before `upTo`) of the user messages kept verbatim. Default: every one. */
  kept?: number[];
  summary?: string;
  /** Ids of the calls (from `upTo` on) whose results are sent as a stub. Default: none. */
  pruned?: string[];
  /** Default `threshold`. */
  reason?: CompactionReason;
  /** The request's estimated size before and after it. Default 0 and 0. */
  tokensBefore?: number;
  tokensAfter?: number;
  summaryError?: string;
}

/** A stored session the run starts from (e.g. one left by a crash). */
export interface SessionSeed {
  history: Message[];
  /** Ids of tool calls the tool journal records as started (SES-8). */
  started?: string[];
  /** A compaction stored after the history (CMP-4): a crash right after compacting. */
  compaction?: CompactionSeed;
}

/**
 * Faults the harness injects: the canary cases use them to prove a scorer can fail, and the tests
 * use them to seed regressions into a run of the real engine.
 */
export interface HarnessFaults {
  /** The run token budget is raised by the first reply's tokens: one more call gets through. */
  budgetLeak?: boolean;
  /** Every synthetic "tool call canceled" Observation of the first canceled call is lost. */
  dropCanceledObservation?: boolean;
  /** Scripted tools run one at a time, as in a serial tool wave. */
  serialTools?: boolean;
  /** Each reply reports one prompt token more than the script says. */
  misreportUsage?: boolean;
  /** Model call `n` (1-based) fails with a provider error instead of replying. */
  failModelCall?: number;
  /**
   * The system message of every model call after the first gets the call's number appended, as
   * a system prompt rebuilt for each request (a clock, a counter) would.
   */
  driftingSystemPrompt?: boolean;
  /**
   * The stored reasoning of each earlier reply is sent back to the model in front of its text, as
   * an engine or provider that leaks reasoning into the history would.
   */
  echoReasoning?: boolean;
  /**
   * The message that stands for a compacted part of the conversation (the summary, or the note
   * that it was left out) is dropped from every request, as a view that forgets it would.
   */
  dropSummary?: boolean;
  /**
   * Each model call's end reaches the engine this many milliseconds late, as an engine that
   * sleeps or blocks that long per turn would: time the metrics count as the engine's overhead
   * (it is no scripted wait), after the first token (so ttfb is as before). The regression the
   * latency gate must catch (PERF-6).
   */
  slowTurnMs?: number;
  /**
   * The machine runs this many times slower: at the end of each model call the run waits
   * (factor − 1) × the CPU time the process used since the previous call ended (or the run
   * began), as a busy machine would stretch it. Given to the calibration as well, it is what the
   * latency gate must not mistake for a regression (PERF-6).
   */
  slowMachine?: number;
  /**
   * The app's reporter fails: its `nth` (1-based) call of `callback` rejects, as a reporter whose
   * connection closed would. The run must stop with `reporter_failed` and run no tool unseen
   * (ENG-7).
   */
  failReporter?: { callback: 'onToolCall' | 'onToolResult'; nth: number };
  /**
   * The session's tool journal fails: from its `nth` (1-based) record of a call starting (the
   * intent, SES-8) on, every one rejects, as a disk that filled up would. Those calls must not
   * run, and the run must stop with `tool_journal_failed` for the first of them (ENG-7).
   */
  failJournal?: number;
  /**
   * The reporter is told the first tool result with its error flag flipped, as an engine that
   * reports something other than what it stored would. The reports scorer's canary.
   */
  misreportResult?: boolean;
}

export interface FileExpectation {
  equals?: string;
  /** Text (or texts) the file must contain. */
  contains?: string | string[];
  /** The file must not exist after the run (negative: needs evidence). */
  absent?: true;
  /** The file must be as it was before the run (negative: needs evidence). */
  unchanged?: true;
}

export interface TrajectoryExpectation {
  /** Exactly these tool calls, in this order. */
  strict?: string[];
  /** These tool calls in this order, others allowed in between. */
  inOrder?: string[];
  /** Exactly these tool calls, in any order. */
  unordered?: string[];
  /** At least these tool calls, in any order. */
  subset?: string[];
  /** None of these tools is called (negative: needs evidence). */
  forbidden?: string[];
  /** How often each named tool is called. */
  counts?: Record<string, number>;
}

/**
 * Checks on the first system message of the run's requests (REAL-1, REAL-2); a subagent's are
 * only held to `stable`.
 */
export interface SystemExpectation {
  /**
   * Texts every request of the run (not a subagent's) carries in its first system message.
   * `{{workspace}}` and `{{outside}}` stand for the run's folders.
   */
  contains?: string[];
  /** Texts in the system message in this order, each after the end of the one before. */
  order?: string[];
  /** Texts no request of the run carries in its system message (negative: needs evidence). */
  absent?: string[];
  /**
   * Every request of the run carries a byte-identical first system message, and so does every
   * request of each subagent (checked apart: a subagent has its own).
   */
  stable?: true;
}

/** Checks on the requests claw sent the model (scripted runs). */
export interface RequestsExpectation {
  system?: SystemExpectation;
  /**
   * Requests after a reply with reasoning do not send it back: no message carries a reasoning
   * field on the wire, and no reasoning of the script appears in the messages' text.
   */
  reasoningNotSent?: true;
}

/**
 * Checks on the compactions of the run (CMP-1 … CMP-6). Whatever the case says, a run that
 * compacted is also held to the compaction scorer's invariants (the reporter, the run's result and
 * the `context_compacted` events agree; so do the summary calls in the result, the trace and the
 * requests; the session stores the latest compaction; the next request shows it).
 */
export interface CompactionExpectation {
  /** Exactly this many compactions in the run. */
  count?: number;
  /** Their reasons, in order. */
  reasons?: CompactionReason[];
  /** Exactly this many summary calls (model calls that summarise, CMP-2). */
  summaryCalls?: number;
  /** Exactly this many compactions whose summary failed (the older messages left out, CMP-3). */
  summaryErrors?: number;
  /** After the run the session stores a compaction that replaces messages (`upTo` > 0). */
  storedUpTo?: 'positive';
}

/** Checks on the reasoning the run reported (REAL-4). */
export interface ThinkingExpectation {
  /** The reasoning the reporter was given (`onThinkingDelta` pieces, joined) is exactly this. */
  equals?: string;
  /** The reported reasoning is the scripted replies' reasoning, in order (scripted runs). */
  fromScript?: true;
  /** The assistant message of each reply with reasoning keeps it (`reasoning`) in the session. */
  stored?: true;
  /** No reasoning shows in the final text or the assistant messages' text (negative). */
  notInAnswer?: true;
}

export interface Expectations {
  outcome?: {
    status?: RunStatus;
    errorCode?: string;
    /** Text the run's error message contains (what it tells the user). */
    errorMessageContains?: string;
    finalText?: string;
    finalTextContains?: string;
  };
  /** Workspace files, by path relative to the workspace. */
  files?: Record<string, FileExpectation>;
  /** Observations of this run's tool calls: `call` is the n-th call of the run (1-based). */
  observations?: Array<{ call: number; error?: boolean; contains?: string }>;
  trajectory?: TrajectoryExpectation;
  /** Calls that must have been refused, changing nothing; the audit log must say so. */
  boundary?: {
    denied: Array<{ tool: string; path?: string; decision?: 'deny' | 'policy_deny' | 'mode_deny' }>;
    /** How many times the approval handler was asked. */
    asked?: number;
  };
  pairing?: {
    /** How many Observations say "tool call canceled". */
    canceled?: number;
    /** How many Observations were inserted by the repair of an interrupted run (SES-7). */
    repaired?: number;
    /** The first model request of the run already has every tool call paired. */
    firstRequestPaired?: boolean;
  };
  budget?: {
    /** The error code the run stopped with. */
    stop?: string;
    /** Exactly this many model calls (replies), subagents' included. */
    modelCalls?: number;
    /** The session's token totals equal the script's usage (subagents' included). */
    sessionTokensFromScript?: boolean;
    /**
     * The run's cost in US dollars (subagents' included), to within 1e-9, every call priced by the
     * price of the model that answered (scripted runs).
     */
    costUsd?: number;
  };
  trace?: {
    /** Each Thinking span's ttfb_ms reproduces the round's scripted ttfb. */
    ttfbFromScript?: boolean;
    /** Each tool wave's wall time is about its slowest tool, not the sum. */
    waveWall?: 'slowest';
    /** How many model attempts failed and were retried. */
    retries?: number;
    /** How many subagent runs (RunSub spans) there were. */
    subagentRuns?: number;
  };
  /** The requests claw sent the model: their system message, what they leave out. */
  requests?: RequestsExpectation;
  /** The reasoning the run reported and kept. */
  thinking?: ThinkingExpectation;
  /** The run's compactions. */
  compaction?: CompactionExpectation;
  /** What the reporter was told (beyond the invariants every run is held to). */
  reports?: ReportsExpectation;
}

/** Checks on what the reporter was told of the run's tool calls (its start and result reports). */
export interface ReportsExpectation {
  /** Exactly this many tool results reported. */
  results?: number;
  /** Exactly this many tool calls reported started. */
  started?: number;
}

export interface EvalCaseInput {
  /** Lower-case letters, digits and dashes; unique in the suite. */
  id: string;
  /** One sentence: what the case proves. */
  title: string;
  tags?: string[];
  /**
   * Workspace files before the run, by relative path (`.git/HEAD` with `ref: refs/heads/main`
   * makes the workspace a git repository; `AGENTS.md` files are project instructions).
   */
  files?: Record<string, string>;
  /**
   * The folder of the workspace the run works in (its working directory, `/`-separated), so that
   * the project instructions from the repository root down to it apply. Default: the workspace.
   */
  workdir?: string;
  /**
   * Files of the user's own config folder (`$XDG_CONFIG_HOME/claw`: its `AGENTS.md`), made beside
   * the workspace; the run must not change them. Default: no user config folder.
   */
  userConfig?: Record<string, string>;
  /** Files in a folder next to the workspace, which no run may change. */
  outside?: Record<string, string>;
  prompt: string;
  script: Round[];
  tools?: ScriptedToolSpec[];
  approval?: ApprovalSpec;
  budgets?: CaseBudgets;
  model?: ModelSpec;
  /**
   * The model's context in tokens for this run (CMP-1): claw compacts the conversation before a
   * request would fill `compactAtRatio` of it. Default: the runtime's (128,000 for the scripted
   * model, which claw does not know).
   */
  contextWindowTokens?: number;
  /**
   * The share of the window a request may fill before claw compacts. Default 0.8 (the runtime's).
   */
  compactAtRatio?: number;
  cancel?: CancelPoint;
  session?: SessionSeed;
  /** Offer `spawn_subagent`. Default false. */
  subagents?: boolean;
  faults?: HarnessFaults;
  /**
   * A canary: a case built to make this scorer fail. It passes only when that scorer fails, so a
   * scorer that would pass anything fails the suite.
   */
  canary?: ScorerName;
  /** Also run against a real model (`claw-eval real`). Default true. */
  real?: boolean;
  expect: Expectations;
}

/** A case as the harness runs it (validated, tags filled in). */
export interface EvalCase extends EvalCaseInput {
  readonly kind: 'claw-eval-case';
  tags: string[];
}

const functionOr = <T extends z.ZodType>(schema: T) =>
  z.union([schema, z.custom<(...args: never[]) => unknown>((value) => typeof value === 'function')]);

const decisionSchema = z.enum(['allow_once', 'allow_session', 'deny']);

/** A folder inside the workspace: relative, `/`-separated, without `.` or `..` parts. */
function isFolderPath(value: string): boolean {
  if (value === '' || value.includes('\\') || value.startsWith('/') || /^[A-Za-z]:/.test(value)) {
    return false;
  }
  return value.split('/').every((part) => part !== '' && part !== '.' && part !== '..');
}

const messageSchema = z.custom<Message>(
  (value) => typeof value === 'object' && value !== null && 'role' in value,
);

const caseSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'use lower-case letters, digits and dashes'),
    title: z.string().min(1),
    tags: z.array(z.string().min(1)).optional(),
    files: z.record(z.string(), z.string()).optional(),
    workdir: z
      .string()
      .refine(isFolderPath, 'use a folder inside the workspace: relative, `/`-separated, no `.` or `..`')
      .optional(),
    userConfig: z.record(z.string(), z.string()).optional(),
    outside: z.record(z.string(), z.string()).optional(),
    prompt: z.string().min(1),
    script: z.array(roundSchema),
    tools: z
      .array(
        z.object({
          name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/),
          description: z.string().optional(),
          risk: z.enum(['safe', 'mutating', 'dangerous']).optional(),
          delayMs: functionOr(z.number().min(0)).optional(),
          result: functionOr(z.string()).optional(),
        }),
      )
      .optional(),
    approval: z
      .object({
        default: decisionSchema.optional(),
        rules: z
          .array(
            z.object({ tool: z.string(), path: z.string().optional(), decision: decisionSchema }),
          )
          .optional(),
      })
      .optional(),
    budgets: z
      .object({
        maxTurns: z.number().int().min(1).optional(),
        maxSessionTokens: z.number().int().optional(),
        maxRunTokens: z.number().int().optional(),
        maxSubagents: z.number().int().optional(),
        toolTimeBudgetMs: z.number().optional(),
        maxSessionCostUsd: z.number().optional(),
        maxRunCostUsd: z.number().optional(),
      })
      .strict()
      .optional(),
    model: z
      .object({
        transport: z.enum(['in-process', 'openai-http']).optional(),
        name: z.string().min(1).optional(),
        price: modelPriceSchema.optional(),
        retries: z.number().int().min(0).optional(),
        firstTokenTimeoutMs: z.number().int().min(0).optional(),
        streamIdleTimeoutMs: z.number().int().min(0).optional(),
        callTimeoutMs: z.number().int().min(0).optional(),
      })
      .strict()
      .optional(),
    contextWindowTokens: z.number().int().min(1000).optional(),
    compactAtRatio: z.number().gt(0.1).max(1).optional(),
    cancel: z
      .discriminatedUnion('when', [
        z.object({ when: z.literal('tool_started'), tool: z.string().optional() }),
        z.object({ when: z.literal('model_call'), call: z.number().int().min(1) }),
        z.object({ when: z.literal('approval') }),
      ])
      .optional(),
    session: z
      .object({
        history: z.array(messageSchema),
        started: z.array(z.string()).optional(),
        compaction: z
          .object({
            upTo: z.number().int().min(1),
            kept: z.array(z.number().int().min(0)).optional(),
            summary: z.string().min(1).optional(),
            pruned: z.array(z.string()).optional(),
            reason: z.enum(compactionReasons).optional(),
            tokensBefore: z.number().int().min(0).optional(),
            tokensAfter: z.number().int().min(0).optional(),
            summaryError: z.string().min(1).optional(),
          })
          .strict()
          .optional(),
      })
      .strict()
      .refine(
        (seed) => seed.compaction === undefined || (
          seed.compaction.upTo <= seed.history.length &&
          (seed.compaction.kept ?? []).every((index) => index < (seed.compaction?.upTo ?? 0))
        ),
        { message: 'a seeded compaction replaces messages the history has: upTo ≤ history.length, kept < upTo', path: ['compaction'] },
      )
      .optional(),
    subagents: z.boolean().optional(),
    faults: z
      .object({
        budgetLeak: z.boolean().optional(),
        dropCanceledObservation: z.boolean().optional(),
        serialTools: z.boolean().optional(),
        misreportUsage: z.boolean().optional(),
        failModelCall: z.number().int().min(1).optional(),
        driftingSystemPrompt: z.boolean().optional(),
        echoReasoning: z.boolean().optional(),
        dropSummary: z.boolean().optional(),
        slowTurnMs: z.number().min(0).max(10_000).optional(),
        slowMachine: z.number().min(1).max(100).optional(),
        failReporter: z
          .object({
            callback: z.enum(['onToolCall', 'onToolResult']),
            nth: z.number().int().min(1),
          })
          .strict()
          .optional(),
        failJournal: z.number().int().min(1).optional(),
        misreportResult: z.boolean().optional(),
      })
      .strict()
      .optional(),
    canary: z.enum(scorerNames).optional(),
    real: z.boolean().optional(),
    expect: z.record(z.string(), z.unknown()),
  })
  .strict();

/**
 * The positive assertions of a set of expectations (and of the requests the script's rounds
 * expect): what the run must have done, as opposed to what it must not have done (those need
 * evidence that the run got that far, EVAL-3).
 */
export function positiveAssertions(expect: Expectations, script: readonly Round[] = []): string[] {
  const found: string[] = [];
  const { outcome, files, trajectory, boundary, pairing, budget, trace } = expect;
  const { requests, thinking, compaction } = expect;
  if (outcome !== undefined && Object.values(outcome).some((value) => value !== undefined)) {
    found.push('outcome');
  }
  for (const [file, expectation] of Object.entries(files ?? {})) {
    if (expectation.equals !== undefined || expectation.contains !== undefined) {
      found.push(`file ${file}`);
    }
  }
  for (const observation of expect.observations ?? []) found.push(`observation ${observation.call}`);
  for (const key of ['strict', 'inOrder', 'unordered', 'subset', 'counts'] as const) {
    if (trajectory?.[key] !== undefined) found.push(`trajectory.${key}`);
  }
  if ((boundary?.denied.length ?? 0) > 0) found.push('boundary.denied');
  if (boundary?.asked !== undefined) found.push('boundary.asked');
  for (const [key, value] of Object.entries(pairing ?? {})) {
    if (value !== undefined) found.push(`pairing.${key}`);
  }
  for (const [key, value] of Object.entries(budget ?? {})) {
    if (value !== undefined) found.push(`budget.${key}`);
  }
  for (const [key, value] of Object.entries(trace ?? {})) {
    if (value !== undefined) found.push(`trace.${key}`);
  }
  for (const key of ['contains', 'order', 'stable'] as const) {
    if (requests?.system?.[key] !== undefined) found.push(`requests.system.${key}`);
  }
  if (requests?.reasoningNotSent !== undefined) found.push('requests.reasoningNotSent');
  for (const key of ['equals', 'fromScript', 'stored'] as const) {
    if (thinking?.[key] !== undefined) found.push(`thinking.${key}`);
  }
  for (const [key, value] of Object.entries(compaction ?? {})) {
    if (value !== undefined) found.push(`compaction.${key}`);
  }
  for (const [key, value] of Object.entries(expect.reports ?? {})) {
    if (value !== undefined) found.push(`reports.${key}`);
  }
  for (const [index, round] of script.entries()) {
    const request = round.expectRequest;
    for (const key of ['contains', 'firstUser', 'isSummary'] as const) {
      if (request?.[key] !== undefined) found.push(`round ${index + 1} request.${key}`);
    }
  }
  return found;
}

const knownExpectations = new Set([
  'outcome', 'files', 'observations', 'trajectory', 'boundary', 'pairing', 'budget', 'trace',
  'requests', 'thinking', 'compaction', 'reports',
]);

const reportsExpectationSchema = z
  .object({
    results: z.number().int().min(0).optional(),
    started: z.number().int().min(0).optional(),
  })
  .strict();

const compactionExpectationSchema = z
  .object({
    count: z.number().int().min(0).optional(),
    reasons: z.array(z.enum(compactionReasons)).optional(),
    summaryCalls: z.number().int().min(0).optional(),
    summaryErrors: z.number().int().min(0).optional(),
    storedUpTo: z.literal('positive').optional(),
  })
  .strict();

/**
 * Defines one evaluation case (EVAL-5): put one `export default defineCase({...})` in a file of
 * `eval/cases/`. Checks the case at once, so a broken case fails when the suite loads, not by
 * passing quietly.
 *
 * @throws EvalError `case_invalid` when a field is wrong, an expectation is unknown, or the case
 *   has no positive assertion (a case must check something the run did, not only what it did not).
 */
export function defineCase(input: EvalCaseInput): EvalCase {
  const parsed = caseSchema.safeParse(input);
  const where = typeof input?.id === 'string' ? `case "${input.id}"` : 'a case';
  if (!parsed.success) {
    throw new EvalError(`${where} is invalid: ${z.prettifyError(parsed.error)}`, {
      code: 'case_invalid',
    });
  }
  for (const key of Object.keys(input.expect)) {
    if (!knownExpectations.has(key)) {
      throw new EvalError(
        `${where} has an unknown expectation "${key}"; use ${[...knownExpectations].join(', ')}`,
        { code: 'case_invalid' },
      );
    }
  }
  if (input.expect.compaction !== undefined) {
    const checked = compactionExpectationSchema.safeParse(input.expect.compaction);
    if (!checked.success) {
      throw new EvalError(`${where} has an invalid compaction expectation: ${z.prettifyError(checked.error)}`, {
        code: 'case_invalid',
      });
    }
  }
  if (input.expect.reports !== undefined) {
    const checked = reportsExpectationSchema.safeParse(input.expect.reports);
    if (!checked.success) {
      throw new EvalError(`${where} has an invalid reports expectation: ${z.prettifyError(checked.error)}`, {
        code: 'case_invalid',
      });
    }
  }
  if (positiveAssertions(input.expect, input.script).length === 0) {
    throw new EvalError(
      `${where} has no positive assertion: a case must check something the run did (outcome, ` +
      'file equals/contains, trajectory, boundary.denied, pairing, budget, trace, requests, ' +
      'thinking, compaction, reports, or a round\'s expectRequest), not only what it did not do',
      { code: 'case_invalid' },
    );
  }
  const transport = input.model?.transport ?? 'in-process';
  if (transport === 'in-process' && input.script.some((round) => round.fault !== undefined)) {
    throw new EvalError(
      `${where} scripts a failed attempt (fault) on the in-process transport, which has no ` +
      'retries: use model: { transport: "openai-http" }',
      { code: 'case_invalid' },
    );
  }
  return Object.freeze({ ...input, kind: 'claw-eval-case' as const, tags: input.tags ?? [] });
}

/** True when `value` is a case made by `defineCase`. */
export function isEvalCase(value: unknown): value is EvalCase {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { kind?: unknown }).kind === 'claw-eval-case'
  );
}
