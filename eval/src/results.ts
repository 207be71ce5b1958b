import { compactionReasons, messageSchema } from '@claw/core';
import { z } from 'zod';
import { scorerNames } from './case.js';
import type { RunRecord } from './run-record.js';
import { spreadOf } from './calibration.js';
import { systemOf } from './scorers/requests.js';
import type { CaseResult, SampleResult, SuiteResult } from './suite.js';
import { diffSnapshots } from './workspace.js';

/**
 * The version of the results.json format; raised on every incompatible change (2: the gate
 * compares latency with a calibration measured in the same run, PERF-6).
 */
export const resultsSchemaVersion = 2;

const verdictSchema = z.enum(['pass', 'fail', 'error']);
const nullableNumber = z.number().nullable();
const quantileSchema = z.object({ p50: nullableNumber, p95: nullableNumber });

const scoreSchema = z.object({
  scorer: z.enum(scorerNames),
  assertion: z.string(),
  kind: z.enum(['positive', 'negative', 'invariant']),
  pass: z.boolean(),
  reason: z.string(),
  expected: z.unknown().optional(),
  actual: z.unknown().optional(),
});

const metricsSchema = z.object({
  runMs: z.number(),
  ttfbMs: z.array(z.number()),
  firstTtfbMs: nullableNumber,
  waveWallMs: z.array(z.number()),
  toolWallMs: z.number(),
  promptTokens: z.number().int(),
  completionTokens: z.number().int(),
  modelCalls: z.number().int(),
  toolCalls: z.number().int(),
  scriptedModelMs: z.number(),
  scriptedToolMs: z.number(),
  overheadMs: z.number(),
});

const attributeValue = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.array(z.union([z.string(), z.number(), z.boolean()])),
]);

const spanSchema = z.object({
  id: z.string(),
  parentId: z.string().optional(),
  name: z.string(),
  startMs: z.number(),
  endMs: z.number(),
  durationMs: z.number(),
  attributes: z.record(z.string(), attributeValue),
  status: z.enum(['unset', 'ok', 'error']),
  statusMessage: z.string().optional(),
});

const fileChangeSchema = z.object({
  path: z.string(),
  change: z.enum(['added', 'removed', 'changed']),
  lines: z.array(z.string()),
});

const detailSchema = z.object({
  /** The session's whole history after the run; the first `seededMessages` were there before. */
  transcript: z.array(messageSchema),
  seededMessages: z.number().int(),
  timeline: z.array(z.object({
    at: z.number(),
    type: z.enum(['thinking', 'thinking_delta', 'text', 'tool_call', 'tool_result', 'usage', 'compacted']),
    detail: z.string(),
    toolCallId: z.string().optional(),
    isError: z.boolean().optional(),
  })),
  spans: z.array(spanSchema),
  /** The compactions of the run (CMP-5), as the reporter was told of them. */
  compactions: z.array(z.object({
    at: z.number(),
    reason: z.enum(compactionReasons),
    upTo: z.number().int(),
    kept: z.array(z.number().int()),
    pruned: z.number().int(),
    tokensBefore: z.number().int(),
    tokensAfter: z.number().int(),
    prunedResults: z.number().int(),
    summarisedMessages: z.number().int(),
    summary: z.string().optional(),
    summaryError: z.string().optional(),
  })).optional(),
  workspaceDiff: z.array(fileChangeSchema),
  outsideDiff: z.array(fileChangeSchema),
  audit: z.array(z.object({
    time: z.string(),
    requestId: z.string(),
    sessionId: z.string(),
    toolName: z.string(),
    digest: z.string(),
    decision: z.string(),
    reason: z.string().optional(),
  })),
  approvals: z.array(z.object({
    toolName: z.string(),
    arguments: z.string(),
    decision: z.string(),
    at: z.number(),
  })),
  modelCalls: z.array(z.object({
    attempt: z.number().int(),
    round: z.number().int().optional(),
    kind: z.enum(['reply', 'fault', 'extra']),
    outcome: z.enum(['completed', 'failed', 'aborted', 'open']),
    startedAt: z.number(),
    endedAt: z.number().optional(),
    scriptedMs: z.number(),
    messages: z.number().int(),
    /** Which of `systemPrompts` the request began with; absent: it had no system message. */
    system: z.number().int().optional(),
  })),
  /** The distinct system messages the run's requests began with, in the order first sent. */
  systemPrompts: z.array(z.string()).optional(),
  retryWaits: z.array(z.number()),
  toolExecutions: z.array(z.object({
    name: z.string(),
    startedAt: z.number(),
    endedAt: z.number(),
    plannedMs: z.number(),
    waitedMs: z.number(),
    outcome: z.enum(['ok', 'aborted']),
  })),
  canceledAt: z.number().optional(),
  infraError: z.string().optional(),
});

const sampleSchema = z.object({
  sample: z.number().int(),
  verdict: verdictSchema,
  reason: z.string(),
  status: z.enum(['completed', 'canceled', 'failed', 'max_turns', 'not_run']),
  errorCode: z.string().optional(),
  errorMessage: z.string().optional(),
  finalText: z.string(),
  /** The run did not end in time and the harness canceled it. */
  timedOut: z.boolean().optional(),
  /** The tools called in this run, in order. */
  trajectory: z.array(z.string()),
  scores: z.array(scoreSchema),
  metrics: metricsSchema,
  wallMs: z.number(),
  /** Kept for the first run of a case and for every run that did not pass. */
  detail: detailSchema.optional(),
});

const caseSchema = z.object({
  id: z.string(),
  title: z.string(),
  tags: z.array(z.string()),
  canary: z.enum(scorerNames).optional(),
  verdict: verdictSchema,
  reason: z.string(),
  stats: z.object({
    modelCalls: z.number().int(),
    toolCalls: z.number().int(),
    promptTokens: z.number().int(),
    completionTokens: z.number().int(),
    countsStable: z.boolean(),
    ttfbMs: quantileSchema,
    overheadMs: quantileSchema,
    /**
     * The calibration runs made before this case's runs (those that passed): their overhead and
     * ttfb (ms), and the yardstick, the mean overhead of these and of the neighbouring cases' runs.
     */
    calibration: z.object({
      overheadMs: z.array(z.number()),
      ttfbMs: z.array(z.number()),
      unitMs: nullableNumber,
    }).optional(),
    /** Overhead p50/p95 as multiples of the yardstick (what the gate compares). */
    overheadRatio: quantileSchema.optional(),
  }),
  /** Real-model runs: how many trials passed, pass@1 and pass^k (k = trials). */
  real: z.object({
    trials: z.number().int(),
    passes: z.number().int(),
    passAt1: z.number(),
    passHatK: z.number(),
  }).optional(),
  samples: z.array(sampleSchema),
});

export const gateProblemSchema = z.object({
  case: z.string(),
  check: z.enum([
    'verdict', 'missing', 'unknown', 'counts', 'unstable', 'overhead', 'ttfb', 'empty', 'calibration',
  ]),
  message: z.string(),
});

const spreadSchema = z.object({ p50: nullableNumber, p95: nullableNumber, max: nullableNumber });

/**
 * The machine's noise during the run, as the calibration runs measured it (PERF-6): the spread of
 * their overhead and ttfb, and how much slower than the baseline's calibration they ran.
 */
export const noiseSchema = z.object({
  runs: z.number().int(),
  overheadMs: spreadSchema,
  ttfbMs: spreadSchema,
  /** The calibration's overhead p50 ÷ the baseline's (null when either is unknown). */
  slowdown: nullableNumber,
});

export const gateSchema = z.object({
  passed: z.boolean(),
  baseline: z.string(),
  thresholds: z.object({
    ratio: z.number(),
    overheadFloorMs: z.number(),
    ttfbFloorMs: z.number(),
  }),
  /** Absent when the run had no calibration (then latency was not gated: a problem says so). */
  noise: noiseSchema.optional(),
  /** Cases whose latency breached the gate and were measured once more; the second decides. */
  remeasured: z.array(z.object({
    case: z.string(),
    passed: z.boolean(),
    /** The breaches of the first measurement. */
    first: z.array(z.string()),
    overheadMs: quantileSchema,
    overheadRatio: quantileSchema.optional(),
    ttfbMs: quantileSchema,
  })),
  problems: z.array(gateProblemSchema),
});

/** The calibration of a run (PERF-6): what it is, and how its runs went. */
export const calibrationSchema = z.object({
  name: z.string(),
  title: z.string(),
  runs: z.number().int(),
  /** Runs that did not pass (their figures are left out), with why. */
  failures: z.array(z.string()),
  /** Over the runs that passed (ms). */
  overheadMs: spreadSchema,
  ttfbMs: spreadSchema,
});

/** The results.json of a claw-eval run (versioned: `schemaVersion`). */
export const resultsSchema = z.object({
  schemaVersion: z.literal(resultsSchemaVersion),
  tool: z.object({ name: z.literal('claw-eval'), version: z.string() }),
  mode: z.enum(['scripted', 'real']),
  createdAt: z.string(),
  durationMs: z.number(),
  repeat: z.number().int(),
  git: z.object({ sha: z.string().nullable(), dirty: z.boolean().nullable() }),
  machine: z.object({
    platform: z.string(),
    arch: z.string(),
    release: z.string(),
    cpus: z.number().int(),
    cpuModel: z.string(),
    totalMemoryMb: z.number(),
    node: z.string(),
    loadAverage: z.array(z.number()),
  }),
  options: z.object({
    filters: z.array(z.string()),
    tags: z.array(z.string()),
    model: z.string().optional(),
  }),
  summary: z.object({
    cases: z.number().int(),
    passed: z.number().int(),
    failed: z.number().int(),
    errors: z.number().int(),
    runs: z.number().int(),
    passAt1: z.number().optional(),
    passHatK: z.number().optional(),
  }),
  gate: gateSchema.optional(),
  calibration: calibrationSchema.optional(),
  cases: z.array(caseSchema),
});

export type Results = z.infer<typeof resultsSchema>;
export type CaseResults = z.infer<typeof caseSchema>;
export type SampleResults = z.infer<typeof sampleSchema>;
export type GateResult = z.infer<typeof gateSchema>;
export type GateProblem = z.infer<typeof gateProblemSchema>;
export type MachineNoise = z.infer<typeof noiseSchema>;
export type CalibrationResults = z.infer<typeof calibrationSchema>;

/** The JSON Schema of results.json (the committed `eval/schema/results.schema.json`). */
export function resultsJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(resultsSchema, { target: 'draft-2020-12' }),
    $id: 'claw-eval/results.schema.json',
    title: 'claw-eval results',
    description: `results.json written by claw-eval (schemaVersion ${resultsSchemaVersion})`,
  };
}

/** The tools this run called, in order (the seeded history left out). */
export function runToolCallNames(run: RunRecord): string[] {
  return run.history
    .slice(run.seededMessages)
    .flatMap((message) => (message.role === 'assistant' ? message.toolCalls ?? [] : []).map((call) => call.name));
}

function detailOf(run: RunRecord): z.infer<typeof detailSchema> {
  const systemPrompts: string[] = [];
  const systemIndex = (text: string | undefined): number | undefined => {
    if (text === undefined) return undefined;
    const known = systemPrompts.indexOf(text);
    if (known >= 0) return known;
    systemPrompts.push(text);
    return systemPrompts.length - 1;
  };
  const modelCalls = run.modelCalls.map((call) => {
    const system = systemIndex(systemOf(call));
    return {
      attempt: call.attempt,
      ...(call.round === undefined ? {} : { round: call.round }),
      kind: call.kind,
      outcome: call.outcome,
      startedAt: call.startedAt,
      ...(call.endedAt === undefined ? {} : { endedAt: call.endedAt }),
      scriptedMs: call.scriptedMs,
      messages: call.messages.length,
      ...(system === undefined ? {} : { system }),
    };
  });
  return {
    transcript: run.history,
    seededMessages: run.seededMessages,
    timeline: run.timeline,
    spans: run.spans,
    ...(run.compactions.length === 0
      ? {}
      : {
          compactions: run.compactions.map(({ at, compaction }) => ({
            at,
            reason: compaction.reason,
            upTo: compaction.upTo,
            kept: compaction.kept,
            pruned: compaction.pruned.length,
            tokensBefore: compaction.tokensBefore,
            tokensAfter: compaction.tokensAfter,
            prunedResults: compaction.prunedResults,
            summarisedMessages: compaction.summarisedMessages,
            ...(compaction.summary === undefined ? {} : { summary: compaction.summary }),
            ...(compaction.summaryError === undefined
              ? {}
              : { summaryError: compaction.summaryError }),
          })),
        }),
    workspaceDiff: diffSnapshots(run.files.before, run.files.after),
    outsideDiff: diffSnapshots(run.outside.before, run.outside.after),
    audit: run.audit,
    approvals: run.approvals,
    modelCalls,
    systemPrompts,
    retryWaits: run.retryWaits,
    toolExecutions: run.toolExecutions.map(
      ({ arguments: _arguments, cpuWaitAt: _cpuWaitAt, ...execution }) => execution,
    ),
    ...(run.canceledAt === undefined ? {} : { canceledAt: run.canceledAt }),
    ...(run.infraError === undefined ? {} : { infraError: run.infraError }),
  };
}

function sampleOf(sample: SampleResult, withDetail: boolean): SampleResults {
  const { run } = sample;
  return {
    sample: sample.sample,
    verdict: sample.verdict,
    reason: sample.reason,
    status: run.status,
    ...(run.errorCode === undefined ? {} : { errorCode: run.errorCode }),
    ...(run.errorMessage === undefined ? {} : { errorMessage: run.errorMessage }),
    finalText: run.finalText,
    ...(run.timedOut === true ? { timedOut: true } : {}),
    trajectory: runToolCallNames(run),
    scores: sample.scores,
    metrics: sample.metrics,
    wallMs: run.wallMs,
    ...(withDetail ? { detail: detailOf(run) } : {}),
  };
}

/** pass@1 and pass^k of `passes` out of `trials` (tau-bench: all k of k trials pass). */
export function passRates(
  passes: number,
  trials: number,
  k = trials,
): { passAt1: number; passHatK: number } {
  if (trials === 0) return { passAt1: 0, passHatK: 0 };
  // pass^k estimated as C(c, k) / C(n, k): the chance that k trials drawn from n all passed.
  let passHatK = 1;
  for (let index = 0; index < k; index += 1) {
    passHatK *= Math.max(0, passes - index) / (trials - index);
  }
  return { passAt1: passes / trials, passHatK };
}

function caseOf(result: CaseResult, mode: 'scripted' | 'real'): CaseResults {
  const passes = result.samples.filter((sample) => sample.verdict === 'pass').length;
  return {
    id: result.id,
    title: result.title,
    tags: result.tags,
    ...(result.canary === undefined ? {} : { canary: result.canary }),
    verdict: result.verdict,
    reason: result.reason,
    stats: result.stats,
    ...(mode === 'real'
      ? {
          real: {
            trials: result.samples.length,
            passes,
            ...passRates(passes, result.samples.length),
          },
        }
      : {}),
    samples: result.samples.map((sample, index) => sampleOf(sample, index === 0 || sample.verdict !== 'pass')),
  };
}

function mean(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0) / values.length;
}

export interface ResultsContext {
  version: string;
  git: { sha: string | null; dirty: boolean | null };
  machine: Results['machine'];
  filters: string[];
  tags: string[];
  model?: string;
}

/** The results.json document of a suite run (validated against the schema). */
export function buildResults(
  suite: SuiteResult,
  context: ResultsContext,
  gate?: GateResult,
): Results {
  const cases = suite.cases.map((result) => caseOf(result, suite.mode));
  const real = suite.mode === 'real' && cases.length > 0
    ? {
        passAt1: mean(cases.map((entry) => entry.real?.passAt1 ?? 0)),
        passHatK: mean(cases.map((entry) => entry.real?.passHatK ?? 0)),
      }
    : {};
  const results: Results = {
    schemaVersion: resultsSchemaVersion,
    tool: { name: 'claw-eval', version: context.version },
    mode: suite.mode,
    createdAt: suite.startedAt,
    durationMs: suite.durationMs,
    repeat: suite.repeat,
    git: context.git,
    machine: context.machine,
    options: {
      filters: context.filters,
      tags: context.tags,
      ...(context.model === undefined ? {} : { model: context.model }),
    },
    summary: {
      cases: cases.length,
      passed: cases.filter((entry) => entry.verdict === 'pass').length,
      failed: cases.filter((entry) => entry.verdict === 'fail').length,
      errors: cases.filter((entry) => entry.verdict === 'error').length,
      runs: cases.reduce((total, entry) => total + entry.samples.length, 0),
      ...real,
    },
    ...(gate === undefined ? {} : { gate }),
    ...(suite.calibration === undefined ? {} : { calibration: calibrationOf(suite) }),
    cases,
  };
  return resultsSchema.parse(results);
}

/** The calibration of a suite: its runs, failures and spread. */
function calibrationOf(suite: SuiteResult): CalibrationResults {
  const runs = suite.cases.flatMap((entry) => entry.calibration ?? []);
  const passed = runs.filter((run) => run.verdict === 'pass');
  return {
    name: suite.calibration?.name ?? '',
    title: suite.calibration?.title ?? '',
    runs: runs.length,
    failures: runs.filter((run) => run.verdict !== 'pass').map((run) => run.reason),
    overheadMs: spreadOf(passed.map((run) => run.overheadMs)),
    ttfbMs: spreadOf(passed.flatMap((run) => run.ttfbMs)),
  };
}
