import { spanAttributes, spanNames } from '@claw/engine';
import type { RunRecord } from './run-record.js';
import type { ToolExecution } from './scripted-tools.js';
import {
  actionSpans,
  modelCallSpans,
  numberAttribute,
  runSpan,
  spanTokens,
  spansNamed,
  toolSpans,
} from './span-tree.js';
import type { SpanRecord } from './tracing.js';

/** The figures of one run (EVAL-4), read off its trace. */
export interface RunMetrics {
  /** Wall time of the "Agent.Run" span (ms). */
  runMs: number;
  /** `ttfb_ms` of each model call that answered, in order (subagents' and summary calls too). */
  ttfbMs: number[];
  /** `ttfb_ms` of the run span: its first model call's. */
  firstTtfbMs: number | null;
  /** `tool_wall_ms` of each tool wave, in order. */
  waveWallMs: number[];
  /** `tool_wall_ms` of the run span. */
  toolWallMs: number;
  /** Tokens of the run and its subagents. */
  promptTokens: number;
  completionTokens: number;
  /** Model calls (Thinking and Compact spans: summary calls count) and tool calls (Tool spans). */
  modelCalls: number;
  toolCalls: number;
  /** Scripted waits inside the run: the model's (ttfb, chunk gaps) and the tools' delays (ms). */
  scriptedModelMs: number;
  scriptedToolMs: number;
  /** The engine's own time: run time minus the scripted waits (ms). */
  overheadMs: number;
}

/** Scripted waits to take off the run time; what `scriptedDelays` reads off a run record. */
export interface ScriptedDelays {
  modelMs: number;
  toolMs: number;
  /**
   * Time the process waited for a CPU outside those waits: the machine's load, not the engine's
   * work (see `cpuWaitMs`).
   */
  cpuWaitMs?: number;
}

/**
 * The figures of a run off its trace (EVAL-4): `ttfb_ms`, `prompt_tokens`, `completion_tokens`
 * and `tool_wall_ms` of the Run span (and of its subagents' RunSub spans for tokens), ttfb per
 * model call, wall time per tool wave, call counts, and the engine's own overhead: the Run span's
 * duration minus the scripted model and tool waits (`scripted`, none when absent).
 */
export function metricsFrom(spans: readonly SpanRecord[], scripted?: ScriptedDelays): RunMetrics {
  const root = runSpan(spans);
  const runMs = root?.durationMs ?? 0;
  const loops = [
    ...(root === undefined ? [] : [root]),
    ...spansNamed(spans, spanNames.subagent),
  ];
  const tokens = loops.map(spanTokens);
  const scriptedModelMs = scripted?.modelMs ?? 0;
  const scriptedToolMs = scripted?.toolMs ?? 0;
  return {
    runMs,
    ttfbMs: modelCallSpans(spans)
      .map((span) => numberAttribute(span, spanAttributes.ttfbMs))
      .filter((value): value is number => value !== undefined),
    firstTtfbMs: numberAttribute(root, spanAttributes.ttfbMs) ?? null,
    waveWallMs: actionSpans(spans).map(
      (span) => numberAttribute(span, spanAttributes.toolWallMs) ?? 0,
    ),
    toolWallMs: numberAttribute(root, spanAttributes.toolWallMs) ?? 0,
    promptTokens: tokens.reduce((total, entry) => total + entry.prompt, 0),
    completionTokens: tokens.reduce((total, entry) => total + entry.completion, 0),
    modelCalls: modelCallSpans(spans).length,
    toolCalls: toolSpans(spans).length,
    scriptedModelMs,
    scriptedToolMs,
    overheadMs: Math.max(0, runMs - scriptedModelMs - scriptedToolMs - (scripted?.cpuWaitMs ?? 0)),
  };
}

/** The length of the union of intervals (parallel waits counted once). */
export function unionLength(intervals: ReadonlyArray<readonly [number, number]>): number {
  const sorted = [...intervals].filter(([start, end]) => end > start).sort((a, b) => a[0] - b[0]);
  let total = 0;
  let current: [number, number] | undefined;
  for (const [start, end] of sorted) {
    if (current === undefined || start > current[1]) {
      if (current !== undefined) total += current[1] - current[0];
      current = [start, end];
    } else {
      current[1] = Math.max(current[1], end);
    }
  }
  if (current !== undefined) total += current[1] - current[0];
  return total;
}

/**
 * The scripted waits of a run inside its Run span: the model's waits as the scripted model spent
 * them, and the union of the scripted tools' waits (tools of one wave run together: their waits
 * overlap and count once; a serial wave counts each).
 */
export function scriptedDelays(run: RunRecord): ScriptedDelays {
  const modelCpuWait = run.modelCalls.reduce(
    (total, call) => total + (call.cpuWaitInScriptedMs ?? 0),
    0,
  );
  return {
    modelMs: run.modelCalls.reduce((total, call) => total + call.scriptedMs, 0),
    toolMs: unionLength(
      run.toolExecutions.map(
        (execution) => [execution.startedAt, execution.startedAt + execution.waitedMs] as const,
      ),
    ),
    cpuWaitMs: Math.max(0, run.cpuWaitMs - modelCpuWait - cpuWaitInUnion(run.toolExecutions)),
  };
}

/**
 * The CPU wait inside the union of the tools' waits (overlapping waits counted once): for each
 * stretch of overlapping waits, the counter at its last end minus the counter at its first start.
 */
export function cpuWaitInUnion(
  executions: ReadonlyArray<Pick<ToolExecution, 'startedAt' | 'endedAt' | 'cpuWaitAt'>>,
): number {
  const sorted = [...executions].sort((a, b) => a.startedAt - b.startedAt);
  let total = 0;
  let stretch: { end: number; from: number; to: number } | undefined;
  for (const execution of sorted) {
    if (stretch === undefined || execution.startedAt > stretch.end) {
      if (stretch !== undefined) total += stretch.to - stretch.from;
      const { start, end } = execution.cpuWaitAt;
      stretch = { end: execution.endedAt, from: start, to: end };
    } else if (execution.endedAt > stretch.end) {
      stretch.end = execution.endedAt;
      stretch.to = execution.cpuWaitAt.end;
    }
  }
  if (stretch !== undefined) total += stretch.to - stretch.from;
  return Math.max(0, total);
}

/** The metrics of a run record. */
export function runMetrics(run: RunRecord): RunMetrics {
  return metricsFrom(run.spans, scriptedDelays(run));
}

/** The `p`-th percentile (0–100) of `values`, linearly interpolated; null for no values. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  const lower = sorted[low] as number;
  const upper = sorted[high] as number;
  return lower + (upper - lower) * (rank - low);
}

/** p50 and p95 of `values` (null when there are none). */
export function quantiles(values: readonly number[]): { p50: number | null; p95: number | null } {
  return { p50: percentile(values, 50), p95: percentile(values, 95) };
}
