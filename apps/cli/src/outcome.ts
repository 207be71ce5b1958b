import { describeTaskSummary } from '@claw/channel/protocol';
import type { RunResult } from '@claw/engine';
import { exitStatus, statusForSignal } from './exit-status.js';
import type { Style } from './style.js';
import { visible } from './terminal-text.js';

/** The exit status of a one-shot task: 0 completed, 1 failed or max turns, 130/143 canceled. */
export function exitStatusOf(result: RunResult, stopSignal: NodeJS.Signals | undefined): number {
  switch (result.status) {
    case 'completed':
      return exitStatus.completed;
    case 'canceled':
      return statusForSignal(stopSignal ?? 'SIGINT');
    case 'failed':
    case 'max_turns':
      return exitStatus.failed;
  }
}

/** One line saying how a task ended, or undefined when it simply completed. */
export function outcomeLine(result: RunResult, style: Style): string | undefined {
  switch (result.status) {
    case 'completed':
      return undefined;
    case 'canceled':
      return style.yellow('✗ canceled');
    case 'failed':
    case 'max_turns':
      return style.red(`✗ failed: ${visible(result.error?.message ?? result.status)}`);
  }
}

/** What the terminal counted of a task besides its result: its tool calls and its time. */
export interface TaskFigures {
  toolCalls: number;
  failedToolCalls: number;
  elapsedMs: number;
}

/**
 * What a task did, in one line: `3 model calls · 2 tool calls (1 failed or denied) · 12,345
 * tokens · cost $0.0042 · 14.2 s` (tokens and cost count its subagents too; `cost unpriced` for
 * a model claw has no price for).
 */
export function summaryLine(result: RunResult, figures: TaskFigures, style: Style): string {
  return style.dim(describeTaskSummary({
    modelCalls: result.turns + (result.summaryCalls ?? 0),
    summaryCalls: result.summaryCalls ?? 0,
    compactions: result.compactions ?? 0,
    toolCalls: figures.toolCalls,
    failedToolCalls: figures.failedToolCalls,
    tokens: result.usage.totalTokens,
    cachedTokens: result.usage.cachedPromptTokens ?? 0,
    costUsd: result.cost.usd,
    unpricedCalls: result.cost.unpricedCalls,
    elapsedMs: figures.elapsedMs,
  }));
}

/**
 * The lines a task's end is told with: what it did (`summaryLine`), then how it ended when it did
 * not simply complete (`outcomeLine`: the error stays the last word). A task that failed before
 * any tokens or tool calls (say, a model API that cannot be reached) is told by its error alone.
 */
export function endLines(
  result: RunResult,
  figures: TaskFigures | undefined,
  style: Style,
): string[] {
  // A `/compact` that found nothing to do says so (a compaction made is told as it happens).
  if (result.status === 'completed' && result.turns === 0 && result.compaction === undefined && result.finalText !== '') {
    return [style.dim(result.finalText)];
  }
  const outcome = outcomeLine(result, style);
  const worked = result.usage.totalTokens > 0 || (figures?.toolCalls ?? 0) > 0;
  const summary = figures !== undefined && (outcome === undefined || worked)
    ? summaryLine(result, figures, style)
    : undefined;
  return [summary, outcome].filter((line): line is string => line !== undefined);
}
