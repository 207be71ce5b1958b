import { spanAttributes, spanNames } from '@claw/engine';
import type { SpanRecord } from './tracing.js';

/** The spans of one name, in start order. */
export function spansNamed(spans: readonly SpanRecord[], name: string): SpanRecord[] {
  return spans.filter((span) => span.name === name).sort((a, b) => a.startMs - b.startMs);
}

/** A numeric attribute, or undefined. */
export function numberAttribute(span: SpanRecord | undefined, key: string): number | undefined {
  const value = span?.attributes[key];
  return typeof value === 'number' ? value : undefined;
}

/** The run's root span ("Agent.Run"). */
export function runSpan(spans: readonly SpanRecord[]): SpanRecord | undefined {
  return spansNamed(spans, spanNames.run)[0];
}

/** Every model call's span ("Thinking"), subagents' included, in start order. */
export function thinkingSpans(spans: readonly SpanRecord[]): SpanRecord[] {
  return spansNamed(spans, spanNames.thinking);
}

/** Every summary call's span ("Compact", CMP-6): a model call that is not a turn. */
export function compactSpans(spans: readonly SpanRecord[]): SpanRecord[] {
  return spansNamed(spans, spanNames.compact);
}

/**
 * Every model call's span, turns ("Thinking") and summary calls ("Compact") alike, subagents'
 * included, in start order: what the model was asked, and what the run's counts and token sums
 * are made of.
 */
export function modelCallSpans(spans: readonly SpanRecord[]): SpanRecord[] {
  return spans
    .filter((span) => span.name === spanNames.thinking || span.name === spanNames.compact)
    .sort((a, b) => a.startMs - b.startMs);
}

/** Every tool wave's span ("Action"), subagents' included, in start order. */
export function actionSpans(spans: readonly SpanRecord[]): SpanRecord[] {
  return spansNamed(spans, spanNames.action);
}

/** Every tool call's span ("Tool"), in start order. */
export function toolSpans(spans: readonly SpanRecord[]): SpanRecord[] {
  return spansNamed(spans, spanNames.tool);
}

/** The tokens of a span. */
export function spanTokens(span: SpanRecord): { prompt: number; completion: number } {
  return {
    prompt: numberAttribute(span, spanAttributes.promptTokens) ?? 0,
    completion: numberAttribute(span, spanAttributes.completionTokens) ?? 0,
  };
}

/** True when the span ended because the run was canceled. */
export function wasCanceled(span: SpanRecord): boolean {
  return span.attributes['claw.canceled'] === true;
}
