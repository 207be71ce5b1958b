import type { AgentSession, ApprovalGate, TextFileAccess, ToolCall } from '@claw/core';
import { trace, type Context, type Tracer } from '@opentelemetry/api';
import { appendAndReport } from './history.js';
import type { ToolSource } from './registry.js';
import type { RunBudget } from './run-budget.js';
import { ReporterError, type SafeReporter } from './safe-reporter.js';
import { markSpanFailed, startActionSpan } from './spans.js';
import { attributes } from './telemetry.js';
import { runToolWave } from './tool-wave.js';
import type { WriteBehindSession } from './write-behind.js';

export interface ActOptions {
  calls: readonly ToolCall[];
  registry: ToolSource;
  gate: ApprovalGate;
  /** Where the Observations go; also the tool journal (SES-8) when it keeps one. */
  session: AgentSession;
  reporter: SafeReporter;
  signal: AbortSignal;
  budget: RunBudget;
  concurrency: number;
  tracer: Tracer;
  traceContext: Context;
  /** The run's writes that go on behind it (a failed one stops the wave). */
  writes?: Pick<WriteBehindSession, 'onFailure'>;
  /** The run's text files (`RunOptions.files`), handed to every tool call. */
  files?: TextFileAccess;
}

/**
 * One tool wave with its "Action" span ("Action", ENG-2): appends the Observations in call
 * order, then throws what stopped the wave, if anything did: the wave's failure, or the tool
 * time budget running out (BUD-4), so that no further model call is made.
 */
export async function act(options: ActOptions): Promise<void> {
  const { session, signal, reporter, budget } = options;
  const span = startActionSpan(options.tracer, {
    toolCount: options.calls.length,
    parent: options.traceContext,
  });
  const wallBefore = budget.toolClock.elapsed();
  try {
    const wave = await runToolWave({
      calls: options.calls,
      registry: options.registry,
      gate: options.gate,
      sessionId: session.id,
      workDir: session.workDir,
      signal,
      stopSignal: budget.stopSignal,
      reporter,
      journal: session,
      ...(options.writes === undefined ? {} : { writes: options.writes }),
      ...(options.files === undefined ? {} : { files: options.files }),
      concurrency: options.concurrency,
      toolClock: budget.toolClock,
      tracer: options.tracer,
      parentContext: trace.setSpan(options.traceContext, span),
      onStarted: (call) => reporter.toolStarted(call),
      onProgress: (call, progress) => reporter.toolProgress({
        toolCallId: call.id,
        toolName: call.name,
        ...progress,
      }),
    });
    if (wave.failure !== undefined) {
      // History stays paired either way; a broken reporter is not called again, a working one
      // is told on a best-effort basis: the run ends with the wave's failure.
      await session.append(...wave.observations);
      if (!(wave.failure instanceof ReporterError)) {
        for (const message of wave.observations) {
          await reporter.message(message).catch(() => undefined);
        }
      }
      throw wave.failure;
    }
    await appendAndReport(session, reporter, wave.observations);
    // A stuck tool ran the tool time out: stop before another model call (BUD-4).
    if (budget.stopSignal.aborted) throw budget.stopSignal.reason;
  } catch (error) {
    markSpanFailed(span, error, signal);
    throw error;
  } finally {
    span.setAttribute(attributes.toolWallMs, budget.toolClock.elapsed() - wallBefore);
    span.end();
  }
}
