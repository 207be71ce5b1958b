import { errorMessage, type ClawError, type ModelResponse, type Usage } from '@claw/core';
import { SpanStatusCode, type Context, type Span, type Tracer } from '@opentelemetry/api';
import type { LoopState } from './run-budget.js';
import type { RunStatus } from './run-types.js';
import { attributes, spanNames } from './telemetry.js';

/** Starts the root span of a run or a subagent's run ("Agent.Run" / "RunSub", OBS-1). */
export function startRunSpan(
  tracer: Tracer,
  options: { name: string; sessionId: string; providerName: string; parent: Context },
): Span {
  return tracer.startSpan(
    options.name,
    {
      attributes: {
        [attributes.genAiOperation]: 'invoke_agent',
        [attributes.genAiAgentName]: 'claw',
        [attributes.genAiConversationId]: options.sessionId,
        [attributes.genAiProvider]: options.providerName,
      },
    },
    options.parent,
  );
}

/**
 * Ends a root span with the loop's own figures, taken before anything resets (OBS-2): status,
 * turns, tokens, the first call's ttfb and the tool wall time.
 */
export function endRunSpan(
  span: Span,
  outcome: {
    state: LoopState;
    status: RunStatus;
    error: ClawError | undefined;
    toolWallMs: number;
  },
): void {
  const { state, status, error, toolWallMs } = outcome;
  span.setAttributes({
    [attributes.runStatus]: status,
    [attributes.turns]: state.turns,
    [attributes.promptTokens]: state.usage.promptTokens,
    [attributes.completionTokens]: state.usage.completionTokens,
    [attributes.genAiInputTokens]: state.usage.promptTokens,
    [attributes.genAiOutputTokens]: state.usage.completionTokens,
    [attributes.toolWallMs]: toolWallMs,
  });
  if (state.firstTtfbMs !== undefined) span.setAttribute(attributes.ttfbMs, state.firstTtfbMs);
  if (error !== undefined) {
    span.recordException(error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
  }
  span.end();
}

/** Starts the span of one model call ("Thinking"). */
export function startThinkingSpan(
  tracer: Tracer,
  options: {
    /** Default "Thinking"; "Compact" for a summary call (CMP-6). */
    name?: string | undefined;
    turn: number;
    providerName: string;
    model: string | undefined;
    parent: Context;
  },
): Span {
  return tracer.startSpan(
    options.name ?? spanNames.thinking,
    {
      attributes: {
        [attributes.turn]: options.turn,
        [attributes.genAiOperation]: 'chat',
        [attributes.genAiProvider]: options.providerName,
        ...(options.model === undefined ? {} : { [attributes.genAiRequestModel]: options.model }),
      },
    },
    options.parent,
  );
}

/** Records a model call's usage and price on its span. */
export function recordCallUsage(span: Span, usage: Usage, costUsd: number | undefined): void {
  span.setAttributes({
    [attributes.promptTokens]: usage.promptTokens,
    [attributes.completionTokens]: usage.completionTokens,
    [attributes.genAiInputTokens]: usage.promptTokens,
    [attributes.genAiOutputTokens]: usage.completionTokens,
    ...(costUsd === undefined ? {} : { [attributes.costUsd]: costUsd }),
  });
}

/** Records which model answered and why it stopped. */
export function recordCallResponse(span: Span, response: ModelResponse): void {
  if (response.model !== undefined) {
    span.setAttribute(attributes.genAiResponseModel, response.model);
  }
  if (response.finishReason !== undefined) {
    span.setAttribute(attributes.genAiFinishReasons, [response.finishReason]);
  }
}

/** Starts the span of one tool wave ("Action"). */
export function startActionSpan(
  tracer: Tracer,
  options: { toolCount: number; parent: Context },
): Span {
  return tracer.startSpan(
    spanNames.action,
    { attributes: { [attributes.toolCount]: options.toolCount } },
    options.parent,
  );
}

/** Marks a step's span as failed, or as canceled when the run's signal was aborted. */
export function markSpanFailed(span: Span, error: unknown, signal: AbortSignal): void {
  if (signal.aborted) {
    span.setAttribute('claw.canceled', true);
    return;
  }
  span.recordException(error instanceof Error ? error : new Error(errorMessage(error)));
  span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(error) });
}
