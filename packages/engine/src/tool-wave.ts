import { ClawError, errorMessage, linkAbortSignal, type ToolCall, type ToolMessage } from '@claw/core';
import { IntentBatch } from './intent-batch.js';
import { ConcurrencyLimiter } from './limiter.js';
import { canceledObservation } from './observations.js';
import { ReporterError, type SafeReporter } from './safe-reporter.js';
import { executeCall, type ToolCallOptions } from './tool-call.js';
import type { WriteBehindSession } from './write-behind.js';

export interface ToolWaveOptions extends ToolCallOptions {
  calls: readonly ToolCall[];
  /** The run's signal: aborting it cancels every call of the wave. */
  signal: AbortSignal;
  /** Aborted (with a budget error) when the run's tool time is used up: stops the wave too. */
  stopSignal?: AbortSignal;
  reporter: SafeReporter;
  concurrency: number;
  /** The run's writes that go on behind it: one that fails stops the wave. */
  writes?: Pick<WriteBehindSession, 'onFailure'>;
}

export interface ToolWaveResult {
  /** One Observation per call, in call order. */
  observations: ToolMessage[];
  /**
   * Set when a failure stopped the wave: a reporter callback (a `ReporterError`: the reporter
   * must not be called again), the session's tool journal (`tool_journal_failed`) or a tool's
   * argument check (`tool_arguments_check_failed`). The run ends with it.
   */
  failure?: ClawError;
}

/**
 * Runs the tool calls of one reply ("Action", ENG-2/3/4): each call is reported, then passes the
 * approval gate and runs, in parallel up to `concurrency`. A failure stops the wave: a call whose
 * report failed is not run, and neither is any later one or one still waiting for its turn
 * (ENG-7); running calls are aborted through their signals. Every call gets exactly one
 * Observation, in call order: its result (kept when it finished, whatever stopped the wave later),
 * an error with a recovery hint, or "tool call canceled". Never rejects.
 */
export async function runToolWave(options: ToolWaveOptions): Promise<ToolWaveResult> {
  const { calls, reporter } = options;
  const failed = new AbortController();
  const wave = linkAbortSignal(options.signal, options.stopSignal, failed.signal);
  const signal = wave.signal;

  const observations: Array<ToolMessage | undefined> = calls.map(() => undefined);
  let failure: ClawError | undefined;
  const fail = (error: ClawError): void => {
    if (failure !== undefined) return;
    failure = error;
    failed.abort(error);
  };
  // A session write behind the run failed (the end of a call of this wave, say): stop as for a
  // failed journal write.
  const stopListening = options.writes?.onFailure(fail);

  // With a journal, the calls' intents are recorded together: one write, one fsync (PERF-1).
  const intents = options.journal === undefined ? undefined : new IntentBatch();
  const callOptions = intents === undefined ? options : { ...options, intents };

  const runCall = async (index: number, call: ToolCall): Promise<void> => {
    // Waited for its turn while the wave was stopped: it never starts.
    if (signal.aborted) return;
    const outcome = await executeCall(call, signal, callOptions);
    observations[index] = outcome.observation;
    if (outcome.failure !== undefined) fail(outcome.failure);
    if (failure !== undefined) return;
    try {
      await reporter.toolResult({
        toolCallId: call.id,
        toolName: outcome.tool?.definition.name ?? call.name,
        content: outcome.observation.content,
        isError: outcome.observation.isError === true,
      });
    } catch (error) {
      fail(asReporterError(error));
    }
  };

  const limiter = new ConcurrencyLimiter(options.concurrency);
  const running: Array<Promise<void>> = [];
  try {
    for (const [index, call] of calls.entries()) {
      if (signal.aborted) break;
      try {
        await reporter.toolCall(call);
      } catch (error) {
        fail(asReporterError(error));
        break;
      }
      running.push(
        limiter.run(() => runCall(index, call)).catch((error: unknown) => fail(unexpected(error))),
      );
    }
    await Promise.all(running);
  } finally {
    stopListening?.();
    wave.dispose();
  }
  return {
    observations: calls.map((call, index) => observations[index] ?? canceledObservation(call.id)),
    ...(failure === undefined ? {} : { failure }),
  };
}

function asReporterError(error: unknown): ReporterError {
  return error instanceof ReporterError ? error : new ReporterError('tool wave', error);
}

function unexpected(error: unknown): ClawError {
  return new ClawError(`the tool wave failed: ${errorMessage(error)}`, {
    code: 'tool_wave_failed',
    cause: error,
  });
}
