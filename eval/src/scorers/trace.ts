import { spanAttributes, spanNames } from '@claw/engine';
import {
  actionSpans,
  numberAttribute,
  spanTokens,
  modelCallSpans,
  spansNamed,
  wasCanceled,
} from '../span-tree.js';
import { roundChunks, type Round } from '../script.js';
import { evalSpanName, type SpanRecord } from '../tracing.js';
import { result, type ScoreResult, type Scorer } from './types.js';

/**
 * The scripted time a reply spends after its first piece: the gaps between its pieces (reasoning,
 * text, tool calls), however late a busy machine makes them. A ttfb taken at a later piece than
 * the first leaves less than this of the call after it; no load can make a right one do so.
 */
export function scriptedAfterFirstMs(round: Round | undefined): number {
  if (round === undefined) return 0;
  const pieces = (round.reasoning?.length ?? 0) + roundChunks(round).length +
    (round.toolCalls?.length ?? 0);
  return Math.max(0, pieces - 1) * (round.chunkGapMs ?? 0);
}

/** What is wrong with the shape of the trace (empty when nothing): Eval → Agent.Run → steps. */
export function spanTreeProblems(spans: readonly SpanRecord[]): string[] {
  const problems: string[] = [];
  const byId = new Map(spans.map((span) => [span.id, span]));
  const parentName = (span: SpanRecord): string | undefined =>
    span.parentId === undefined ? undefined : byId.get(span.parentId)?.name;
  const evals = spansNamed(spans, evalSpanName);
  if (evals.length !== 1) problems.push(`${evals.length} Eval spans, expected 1`);
  const runs = spansNamed(spans, spanNames.run);
  if (runs.length !== 1) problems.push(`${runs.length} ${spanNames.run} spans, expected 1`);
  for (const span of spans) {
    const parent = parentName(span);
    const allowed: Record<string, ReadonlyArray<string | undefined>> = {
      [evalSpanName]: [undefined],
      [spanNames.run]: [evalSpanName],
      [spanNames.subagent]: [spanNames.run],
      [spanNames.thinking]: [spanNames.run, spanNames.subagent],
      // A compaction's summary call (CMP-6) is made for the loop it compacts.
      [spanNames.compact]: [spanNames.run, spanNames.subagent],
      [spanNames.action]: [spanNames.run, spanNames.subagent],
      [spanNames.tool]: [spanNames.action],
    };
    const parents = allowed[span.name];
    if (parents === undefined) {
      problems.push(`an unexpected span "${span.name}"`);
    } else if (!parents.includes(parent)) {
      problems.push(`a ${span.name} span under ${parent ?? 'no parent'}, expected under ${parents.map((name) => name ?? 'no parent').join(' or ')}`);
    }
  }
  return problems;
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

/**
 * The trace scorer (EVAL-3, OBS-1, OBS-2): the span tree Eval → Agent.Run → Thinking / Compact /
 * Action (→ Tool; RunSub for subagents), a ttfb_ms on every model call that answered (summary
 * calls included), root figures that match their children (first ttfb, tokens, tool wall time),
 * token sums equal to the script's usage; and what the case asks of timing (ttfb replayed,
 * parallel waves, retries, subagents).
 */
export const scoreTrace: Scorer = (context) => {
  const { run, evalCase, relaxed } = context;
  if (run.infraError !== undefined) return [];
  const { spans } = run;
  const results: ScoreResult[] = [];
  const tree = spanTreeProblems(spans);
  results.push(result('trace', 'span tree', 'invariant', tree.length === 0,
    tree.length === 0
      ? `Eval → ${spanNames.run} → ${[...new Set(spans.map((span) => span.name))].filter((name) => name !== evalSpanName && name !== spanNames.run).join(' / ') || 'nothing'}`
      : tree.join('; '),
    { expected: [], actual: tree }));

  // Turns and summary calls alike: both are model calls, counted and priced (CMP-6).
  const thinking = modelCallSpans(spans);
  const answered = thinking.filter((span) => span.status !== 'error' && !wasCanceled(span));
  const ttfbOf = (span: SpanRecord): number | undefined =>
    numberAttribute(span, spanAttributes.ttfbMs);
  const missing = answered.filter((span) => ttfbOf(span) === undefined);
  const late = answered.filter((span) => (ttfbOf(span) ?? 0) > span.durationMs + 0.001);
  results.push(result('trace', 'ttfb on every model call', 'invariant', missing.length === 0 && late.length === 0,
    missing.length > 0
      ? `${missing.length} of ${answered.length} answered model call(s) have no ttfb_ms`
      : late.length > 0
        ? `${late.length} model call(s) have a ttfb_ms longer than the call`
        : `each of ${answered.length} answered model call(s) has one ttfb_ms`,
    { expected: answered.length, actual: answered.length - missing.length }));

  const root = spansNamed(spans, spanNames.run)[0];
  if (root !== undefined) {
    const children = (parent: SpanRecord, name: string): SpanRecord[] =>
      spans.filter((span) => span.parentId === parent.id && span.name === name);
    const rootThinking = children(root, spanNames.thinking);
    const firstTtfb = rootThinking
      .map((span) => numberAttribute(span, spanAttributes.ttfbMs))
      .find((value) => value !== undefined);
    const rootTtfb = numberAttribute(root, spanAttributes.ttfbMs);
    results.push(result('trace', 'root ttfb', 'invariant', rootTtfb === firstTtfb,
      rootTtfb === firstTtfb
        ? `${spanNames.run} carries the first model call's ttfb_ms (${firstTtfb?.toFixed(1) ?? 'none'})`
        : `${spanNames.run} has ttfb_ms ${rootTtfb?.toFixed(1) ?? 'none'}, its first model call ${firstTtfb?.toFixed(1) ?? 'none'}`,
      { expected: firstTtfb ?? null, actual: rootTtfb ?? null }));

    const loops = [root, ...spansNamed(spans, spanNames.subagent)];
    const tokenProblems: string[] = [];
    for (const loop of loops) {
      const own = [...children(loop, spanNames.thinking), ...children(loop, spanNames.compact)]
        .map(spanTokens);
      const total = spanTokens(loop);
      const prompt = sum(own.map((tokens) => tokens.prompt));
      const completion = sum(own.map((tokens) => tokens.completion));
      if (total.prompt !== prompt || total.completion !== completion) {
        tokenProblems.push(`${loop.name} says ${total.prompt}/${total.completion}, its model calls sum to ${prompt}/${completion}`);
      }
    }
    results.push(result('trace', 'run tokens', 'invariant', tokenProblems.length === 0,
      tokenProblems.length === 0
        ? 'each run span carries the sum of its model calls\' tokens'
        : tokenProblems.join('; '),
      { expected: [], actual: tokenProblems }));

    const wall = numberAttribute(root, spanAttributes.toolWallMs) ?? 0;
    const waves = sum(children(root, spanNames.action)
      .map((span) => numberAttribute(span, spanAttributes.toolWallMs) ?? 0));
    const wallPass = Math.abs(wall - waves) < 0.5;
    results.push(result('trace', 'tool wall time', 'invariant', wallPass,
      `${spanNames.run} tool_wall_ms ${wall.toFixed(1)}, its waves sum to ${waves.toFixed(1)}`,
      { expected: waves, actual: wall }));
  }

  if (!relaxed && run.mode === 'scripted') {
    const replies = run.modelCalls.filter((call) => call.kind === 'reply' && call.outcome === 'completed');
    const usageOf = (call: (typeof replies)[number]) => run.script[(call.round ?? 0) - 1]?.usage;
    const expectedPrompt = sum(replies.map((call) => usageOf(call)?.promptTokens ?? 0));
    const expectedCompletion = sum(replies.map((call) => usageOf(call)?.completionTokens ?? 0));
    const all = thinking.map(spanTokens);
    const prompt = sum(all.map((tokens) => tokens.prompt));
    const completion = sum(all.map((tokens) => tokens.completion));
    const pass = prompt === expectedPrompt && completion === expectedCompletion;
    results.push(result('trace', 'tokens equal the script', 'invariant', pass,
      pass
        ? `the model calls' spans carry ${prompt} prompt and ${completion} completion tokens, as scripted`
        : `the spans carry ${prompt}/${completion} prompt/completion tokens; the ${replies.length} scripted replies sum to ${expectedPrompt}/${expectedCompletion}`,
      {
        expected: { prompt: expectedPrompt, completion: expectedCompletion },
        actual: { prompt, completion },
      }));
  }

  const expectation = evalCase.expect.trace;
  if (expectation === undefined) return results;
  if (expectation.ttfbFromScript === true && !relaxed) {
    const replies = run.modelCalls.filter((call) => call.kind === 'reply' && call.outcome === 'completed');
    const problems: string[] = [];
    const pairs: Array<{ scripted: number; span: number | null }> = [];
    // Both bounds hold on any machine, however busy: timers fire late, never early. The ttfb is
    // at least the scripted wait, and leaves at least the scripted gaps after the first piece
    // of the call (a ttfb taken at the end of the reply leaves none).
    for (const [index, span] of answered.entries()) {
      const round = run.script[(replies[index]?.round ?? 0) - 1];
      const scripted = round?.ttfbMs ?? 0;
      const after = scriptedAfterFirstMs(round);
      const ttfb = numberAttribute(span, spanAttributes.ttfbMs);
      pairs.push({ scripted, span: ttfb ?? null });
      if (ttfb === undefined) problems.push(`model call ${index + 1} has no ttfb_ms`);
      else if (ttfb < scripted - 1) problems.push(`model call ${index + 1}: ttfb_ms ${ttfb.toFixed(1)} is shorter than the scripted ${scripted}`);
      else if (span.durationMs - ttfb < after - 1) {
        problems.push(
          `model call ${index + 1}: ttfb_ms ${ttfb.toFixed(1)} leaves ${(span.durationMs - ttfb).toFixed(1)} ms of the ` +
          `call after it, less than the scripted ${after} ms between its pieces: it was not taken at the first piece`,
        );
      }
    }
    const pass = problems.length === 0 && answered.length === replies.length && replies.length > 0;
    results.push(result('trace', 'ttfb replayed', 'positive', pass,
      pass
        ? `each model call's ttfb_ms reproduces its scripted time to first token (${pairs.map((pair) => `${pair.span?.toFixed(1)} for ${pair.scripted}`).join(', ')})`
        : problems.join('; ') || `${answered.length} answered model call span(s) for ${replies.length} scripted replies`,
      { expected: pairs.map((pair) => pair.scripted), actual: pairs.map((pair) => pair.span) }));
  }
  if (expectation.waveWall === 'slowest') {
    const checked: string[] = [];
    const problems: string[] = [];
    for (const [index, action] of actionSpans(spans).entries()) {
      const inWave = run.toolExecutions.filter((execution) =>
        execution.startedAt >= action.startMs - 0.5 && execution.startedAt <= action.endMs + 0.5);
      if (inWave.length < 2) continue;
      const wall = numberAttribute(action, spanAttributes.toolWallMs) ?? 0;
      const planned = inWave.map((execution) => execution.plannedMs);
      // From the first tool's start to the last one's end, against the tools' own waits as they
      // measured them: a busy machine whose timers fire late stretches both alike, where a
      // limit in planned milliseconds would trip on it. Parallel tools take about the slowest
      // wait; serial ones at least the sum.
      const waited = inWave.map((execution) => execution.waitedMs);
      const slowest = Math.max(...waited);
      const total = sum(waited);
      const limit = slowest + (total - slowest) / 2;
      const together = Math.max(...inWave.map((execution) => execution.endedAt)) -
        Math.min(...inWave.map((execution) => execution.startedAt));
      const line = `wave ${index + 1}: ${wall.toFixed(1)} ms (tools ${together.toFixed(1)} ms from first start to last end) ` +
        `for tools of ${planned.join(' + ')} ms (waited ${waited.map((value) => value.toFixed(1)).join(' + ')})`;
      checked.push(line);
      if (wall < Math.max(...planned) - 1 || together >= limit) {
        problems.push(`${line}: not about the slowest tool (limit ${limit.toFixed(1)} ms)`);
      }
    }
    const pass = checked.length > 0 && problems.length === 0;
    results.push(result('trace', 'parallel wave wall time', 'positive', pass,
      checked.length === 0 ? 'no tool wave ran two or more scripted tools' : pass ? checked.join('; ') : problems.join('; '),
      { expected: 'about the slowest tool', actual: checked }));
  }
  if (expectation.retries !== undefined && !relaxed) {
    const failed = run.modelCalls.filter((call) => call.kind === 'fault').length;
    const pass = failed === expectation.retries && run.retryWaits.length === expectation.retries;
    results.push(result('trace', 'retries', 'positive', pass,
      `${failed} model attempt(s) failed and ${run.retryWaits.length} retry wait(s) were asked for (${run.retryWaits.join(', ') || 'none'} ms); ${thinking.length} model call span(s)` +
      (pass ? '' : `, expected ${expectation.retries} retried attempt(s)`),
      {
        expected: expectation.retries,
        actual: { failedAttempts: failed, retryWaits: run.retryWaits },
      }));
  }
  if (expectation.subagentRuns !== undefined) {
    const count = spansNamed(spans, spanNames.subagent).length;
    results.push(result('trace', 'subagent runs', 'positive', count === expectation.subagentRuns,
      `${count} ${spanNames.subagent} span(s)${count === expectation.subagentRuns ? '' : `, expected ${expectation.subagentRuns}`}`,
      { expected: expectation.subagentRuns, actual: count }));
  }
  return results;
};
