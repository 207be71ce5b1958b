import type { AgentSession, ModelRequest, ModelResponse, Provider } from '@claw/core';
import type { Context, Tracer } from '@opentelemetry/api';
import { callModel } from './model-call.js';
import { costOf, priceOf, type PriceTable } from './pricing.js';
import type { LoopState } from './run-budget.js';
import type { SafeReporter } from './safe-reporter.js';
import {
  markSpanFailed,
  recordCallResponse,
  recordCallUsage,
  startThinkingSpan,
} from './spans.js';
import { attributes } from './telemetry.js';

export interface ThinkOptions {
  provider: Provider;
  prices: PriceTable;
  tracer: Tracer;
  /** Milliseconds clock for ttfb. */
  now: () => number;
  request: ModelRequest;
  turn: number;
  /** Records the call's usage; for a subagent, into the parent session too. */
  session: AgentSession;
  reporter: SafeReporter;
  signal: AbortSignal;
  traceContext: Context;
  /** The loop's figures and, through it, the run's budget. */
  state: LoopState;
  /**
   * The span's name: "Thinking" for a turn (the default); "Compact" for a compaction's summary
   * call, which is not a turn (its time to first token is not the run's).
   */
  spanName?: string;
}

/**
 * One model call with its "Thinking" span ("Thinking", ENG-1). When the reply has usage, it is
 * priced (BUD-5), counted in the loop, the run budget and the session, and then reported with
 * `onUsage`; that callback is awaited, and its failure stops the run (ENG-7).
 */
export async function think(options: ThinkOptions): Promise<ModelResponse> {
  const { request, signal, state } = options;
  const span = startThinkingSpan(options.tracer, {
    name: options.spanName,
    turn: options.turn,
    providerName: options.provider.name,
    model: request.model,
    parent: options.traceContext,
  });
  const started = options.now();
  try {
    const response = await callModel({
      provider: options.provider,
      request,
      signal,
      reporter: options.reporter,
      onFirstOutput: () => {
        const ttfb = options.now() - started;
        span.setAttribute(attributes.ttfbMs, ttfb);
        if (options.spanName === undefined) state.firstTtfbMs ??= ttfb;
      },
    });
    const usage = response.usage;
    if (usage !== undefined) {
      const cost = costOf(priceOf(options.prices, response.model ?? request.model), usage);
      recordCallUsage(span, usage, cost);
      state.recordCall(usage, cost);
      await options.session.recordUsage(usage, cost);
      await options.reporter.usage(state.budget.usageReport(usage, cost));
    }
    recordCallResponse(span, response);
    return response;
  } catch (error) {
    markSpanFailed(span, error, signal);
    throw error;
  } finally {
    span.end();
  }
}
