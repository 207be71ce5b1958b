import {
  errorMessage,
  type AgentSession,
  type ApprovalGate,
  type Tool,
  type ToolCall,
  type ToolMessage,
  type ToolResult,
} from '@claw/core';
import { SpanStatusCode, type Context, type Tracer } from '@opentelemetry/api';
import { type ActivityClock, ConcurrencyLimiter } from './limiter.js';
import { canceledObservation, errorObservation, recoveryHints } from './observations.js';
import type { ToolRegistry } from './registry.js';
import { ReporterError, type SafeReporter } from './safe-reporter.js';
import { attributes, spanNames } from './telemetry.js';

export interface ToolWaveOptions {
  calls: readonly ToolCall[];
  registry: ToolRegistry;
  gate: ApprovalGate;
  sessionId: string;
  workDir: string;
  /** The run's signal: aborting it cancels every call of the wave. */
  signal: AbortSignal;
  /** Aborted (with a budget error) when the run's tool time is used up: stops the wave too. */
  stopSignal?: AbortSignal;
  reporter: SafeReporter;
  /** The session's tool journal (SES-8), when it keeps one. */
  journal?: Pick<AgentSession, 'toolStarted' | 'toolFinished'>;
  concurrency: number;
  /** Times `execute` only (not approval), counting parallel calls once. */
  toolClock: ActivityClock;
  tracer: Tracer;
  parentContext: Context;
}

export interface ToolWaveResult {
  /** One Observation per call, in call order. */
  observations: ToolMessage[];
  /** Set when a reporter callback failed and stopped the wave. */
  failure?: ReporterError;
}

type Outcome = 'ok' | 'error' | 'denied' | 'canceled';

/**
 * Runs the tool calls of one reply ("Action", ENG-2/3/4): each call is reported, then passes the
 * approval gate and runs, in parallel up to `concurrency`. A call whose report failed is not run,
 * and neither is any later one (ENG-7); running calls are aborted. Every call gets exactly one
 * Observation, in call order: its result, an error with a recovery hint, or "tool call canceled".
 */
export async function runToolWave(options: ToolWaveOptions): Promise<ToolWaveResult> {
  const { calls, signal, reporter } = options;
  const controller = new AbortController();
  const sources = options.stopSignal === undefined ? [signal] : [signal, options.stopSignal];
  const forwards = sources.map((source) => {
    const forward = (): void => controller.abort(source.reason);
    if (source.aborted) forward();
    else source.addEventListener('abort', forward, { once: true });
    return () => source.removeEventListener('abort', forward);
  });

  const observations: Array<ToolMessage | undefined> = calls.map(() => undefined);
  let failure: ReporterError | undefined;
  const fail = (error: unknown): void => {
    if (failure !== undefined) return;
    failure = error instanceof ReporterError ? error : new ReporterError('tool wave', error);
    controller.abort(failure);
  };
  const limiter = new ConcurrencyLimiter(options.concurrency);
  const running: Array<Promise<void>> = [];
  try {
    for (const [index, call] of calls.entries()) {
      if (controller.signal.aborted) break;
      try {
        await reporter.toolCall(call);
      } catch (error) {
        fail(error);
        break;
      }
      running.push(
        limiter.run(async () => {
          if (controller.signal.aborted) return;
          const { observation, tool } = await executeCall(call, controller.signal, options);
          observations[index] = observation;
          if (failure !== undefined) return;
          try {
            await reporter.toolResult({
              toolCallId: call.id,
              toolName: tool?.definition.name ?? call.name,
              content: observation.content,
              isError: observation.isError === true,
            });
          } catch (error) {
            fail(error);
          }
        }),
      );
    }
    await Promise.all(running);
  } finally {
    for (const remove of forwards) remove();
  }
  return {
    observations: calls.map((call, index) => observations[index] ?? canceledObservation(call.id)),
    ...(failure === undefined ? {} : { failure }),
  };
}

async function executeCall(
  call: ToolCall,
  signal: AbortSignal,
  options: ToolWaveOptions,
): Promise<{ observation: ToolMessage; tool: Tool | undefined }> {
  const span = options.tracer.startSpan(
    spanNames.tool,
    {
      attributes: {
        [attributes.genAiOperation]: 'execute_tool',
        [attributes.genAiToolName]: call.name,
        [attributes.genAiToolCallId]: call.id,
      },
    },
    options.parentContext,
  );
  const tool = options.registry.get(call.name);
  const finish = (observation: ToolMessage, outcome: Outcome) => {
    span.setAttribute(attributes.toolOutcome, outcome);
    if (outcome === 'error') span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
    return { observation, tool };
  };
  if (tool === undefined) {
    return finish(
      errorObservation(
        call.id,
        `unknown tool "${call.name}"`,
        recoveryHints.unknownTool(options.registry.names()),
      ),
      'error',
    );
  }
  const parsed = parseArguments(call, tool);
  if (!parsed.ok) return finish(parsed.observation, 'error');

  let decision;
  try {
    decision = await options.gate.check(
      {
        sessionId: options.sessionId,
        workDir: options.workDir,
        toolCall: call,
        risk: tool.risk,
        arguments: parsed.value,
      },
      { signal },
    );
  } catch (error) {
    if (signal.aborted) return finish(canceledObservation(call.id), 'canceled');
    return finish(
      errorObservation(
        call.id,
        `permission could not be obtained: ${errorMessage(error)}`,
        recoveryHints.denied,
      ),
      'denied',
    );
  }
  if (!decision.allowed) {
    return finish(
      errorObservation(call.id, `permission denied: ${decision.reason}`, recoveryHints.denied),
      'denied',
    );
  }
  if (signal.aborted) return finish(canceledObservation(call.id), 'canceled');

  options.toolClock.begin();
  try {
    // The intent is on record before the tool can have any effect (SES-8); if it cannot be
    // recorded, the tool does not run.
    await options.journal?.toolStarted?.(call);
    const result = normalizeResult(
      await tool.execute(parsed.value, { signal, workDir: options.workDir }),
    );
    const observation: ToolMessage = {
      role: 'tool',
      toolCallId: call.id,
      content: result.content,
      ...(result.isError === true ? { isError: true } : {}),
    };
    return finish(observation, result.isError === true ? 'error' : 'ok');
  } catch (error) {
    if (signal.aborted) return finish(canceledObservation(call.id), 'canceled');
    span.recordException(error instanceof Error ? error : new Error(errorMessage(error)));
    return finish(
      errorObservation(
        call.id,
        `${call.name} failed: ${errorMessage(error)}`,
        recoveryHints.toolFailed,
      ),
      'error',
    );
  } finally {
    options.toolClock.end();
    await options.journal?.toolFinished?.(call.id);
  }
}

function parseArguments(
  call: ToolCall,
  tool: Tool,
): { ok: true; value: unknown } | { ok: false; observation: ToolMessage } {
  let value: unknown;
  try {
    // Some models send an empty string for a call without arguments.
    value = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch (error) {
    return {
      ok: false,
      observation: errorObservation(
        call.id,
        `the arguments of ${call.name} are not valid JSON (${errorMessage(error)})`,
        recoveryHints.invalidJson,
      ),
    };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      ok: false,
      observation: errorObservation(
        call.id,
        `the arguments of ${call.name} must be a JSON object`,
        recoveryHints.invalidJson,
      ),
    };
  }
  if (tool.parseArguments === undefined) return { ok: true, value };
  const checked = tool.parseArguments(value);
  if (checked.success) return { ok: true, value: checked.data };
  return {
    ok: false,
    observation: errorObservation(
      call.id,
      `invalid arguments for ${call.name}: ${checked.error}`,
      recoveryHints.invalidArguments,
    ),
  };
}

function normalizeResult(result: ToolResult | string): ToolResult {
  return typeof result === 'string' ? { content: result } : result;
}
