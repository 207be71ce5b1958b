import {
  ClawError,
  errorMessage,
  type AgentSession,
  type ApprovalGate,
  type TextFileAccess,
  type Tool,
  type ToolCall,
  type ToolMessage,
  type ToolProgress,
  type ToolResult,
} from '@claw/core';
import { SpanStatusCode, type Context, type Span, type Tracer } from '@opentelemetry/api';
import type { IntentBatch } from './intent-batch.js';
import type { ActivityClock } from './limiter.js';
import { canceledObservation, errorObservation, recoveryHints } from './observations.js';
import type { ToolSource } from './registry.js';
import { ReporterError } from './safe-reporter.js';
import { attributes, spanNames } from './telemetry.js';
import { WriteBehindError, journalError } from './write-behind.js';

/** What running one call needs from its wave. */
export interface ToolCallOptions {
  registry: ToolSource;
  gate: ApprovalGate;
  sessionId: string;
  workDir: string;
  /** Given to every tool as `ToolContext.files` (the editor's file system, ACP-4), when set. */
  files?: TextFileAccess;
  /** The session's tool journal (SES-8), when it keeps one. */
  journal?: Pick<AgentSession, 'toolStarted' | 'toolFinished'>;
  /** Times `execute` only (not approval, not the journal), counting parallel calls once. */
  toolClock: ActivityClock;
  tracer: Tracer;
  parentContext: Context;
  /** Told when a running tool reports progress (`ToolContext.onProgress`). */
  onProgress?: (call: ToolCall, progress: ToolProgress) => void;
  /** Told right before a call's `execute` starts (allowed, its intent recorded). */
  onStarted?: (call: ToolCall) => void;
  /** Groups the intents of the wave's calls into one write (one fsync); see `IntentBatch`. */
  intents?: IntentBatch;
}

export interface CallOutcome {
  /** The call's Observation: its result, an error with a recovery hint, or "tool call canceled". */
  observation: ToolMessage;
  tool: Tool | undefined;
  /**
   * Set when the wave must stop: the session's journal failed, the tool's argument check threw,
   * or the run's reporter failed inside the tool (a subagent reports through it).
   */
  failure?: ClawError;
}

type Outcome = 'ok' | 'error' | 'denied' | 'canceled';

/**
 * Runs one tool call: arguments checked, the approval gate asked, the intent journaled, then
 * `execute` (ENG-3, ENG-4, SES-8). Never rejects: whatever happens is in the outcome.
 */
export async function executeCall(
  call: ToolCall,
  signal: AbortSignal,
  options: ToolCallOptions,
): Promise<CallOutcome> {
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
  let result: StepResult;
  try {
    result = tool === undefined
      ? {
          observation: errorObservation(
            call.id,
            `unknown tool "${call.name}"`,
            recoveryHints.unknownTool(options.registry.names()),
          ),
          outcome: 'error',
        }
      : await checkAndRun(call, tool, signal, options, span);
  } catch (error) {
    // Nothing above is meant to throw; if something does, the wave stops instead of losing it.
    result = {
      observation: canceledObservation(call.id),
      outcome: 'canceled',
      failure: new ClawError(`the tool call ${call.id} (${call.name}) failed in claw: ${errorMessage(error)}`, {
        code: 'tool_wave_failed',
        cause: error,
      }),
    };
  }
  span.setAttribute(attributes.toolOutcome, result.outcome);
  if (result.outcome === 'error' || result.failure !== undefined) {
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
  return {
    observation: result.observation,
    tool,
    ...(result.failure === undefined ? {} : { failure: result.failure }),
  };
}

interface StepResult {
  observation: ToolMessage;
  outcome: Outcome;
  failure?: ClawError;
}

async function checkAndRun(
  call: ToolCall,
  tool: Tool,
  signal: AbortSignal,
  options: ToolCallOptions,
  span: Span,
): Promise<StepResult> {
  const { intents } = options;
  if (intents === undefined) return check(call, tool, signal, options, span, {});
  intents.enter();
  // Counted among the calls being checked until it runs, ends, or waits for a person.
  let counted = true;
  const stopCounting = (): void => {
    if (!counted) return;
    counted = false;
    intents.leave();
  };
  try {
    return await check(call, tool, signal, options, span, {
      onAsking: stopCounting,
      beforeIntent: () => {
        const turn = intents.ready(counted);
        counted = false;
        return turn;
      },
    });
  } finally {
    stopCounting();
  }
}

interface CheckHooks {
  /** The gate waits for a person. */
  onAsking?: () => void;
  /** The call passed its checks; resolves when its intent may be recorded. */
  beforeIntent?: () => Promise<void>;
}

async function check(
  call: ToolCall,
  tool: Tool,
  signal: AbortSignal,
  options: ToolCallOptions,
  span: Span,
  hooks: CheckHooks,
): Promise<StepResult> {
  const parsed = parseArguments(call, tool);
  if (!parsed.ok) {
    return { observation: parsed.observation, outcome: 'error', ...withFailure(parsed.failure) };
  }

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
      hooks.onAsking === undefined ? { signal } : { signal, onAsking: hooks.onAsking },
    );
  } catch (error) {
    if (signal.aborted) return { observation: canceledObservation(call.id), outcome: 'canceled' };
    return {
      observation: errorObservation(
        call.id,
        `permission could not be obtained: ${errorMessage(error)}`,
        recoveryHints.denied,
      ),
      outcome: 'denied',
    };
  }
  if (!decision.allowed) {
    return {
      observation: errorObservation(
        call.id,
        `permission denied: ${decision.reason}`,
        recoveryHints.denied,
      ),
      outcome: 'denied',
    };
  }
  if (signal.aborted) return { observation: canceledObservation(call.id), outcome: 'canceled' };
  await hooks.beforeIntent?.();
  if (signal.aborted) return { observation: canceledObservation(call.id), outcome: 'canceled' };
  return runJournaled(call, tool, parsed.value, signal, options, span);
}

/**
 * The intent is on record before the tool can have any effect (SES-8): if it cannot be recorded,
 * the tool does not run, and the wave stops (the session can no longer tell what ran). A tool
 * that only reads (`readOnly`) has no effect to record: the session may let it run once the
 * intent is written, while the flush to the disk hardware goes on beside it. After the
 * tool, its end is recorded; a failure there keeps the tool's result and stops the wave too.
 */
async function runJournaled(
  call: ToolCall,
  tool: Tool,
  args: unknown,
  signal: AbortSignal,
  options: ToolCallOptions,
  span: Span,
): Promise<StepResult> {
  const { journal } = options;
  let result: StepResult;
  try {
    await journal?.toolStarted?.(call, tool.readOnly === true ? { readOnly: true } : undefined);
  } catch (error) {
    result = {
      observation: errorObservation(
        call.id,
        `${call.name} failed: ${errorMessage(error)} (claw could not record that the call was ` +
        'starting, so the tool did not run)',
        recoveryHints.journalFailed,
      ),
      outcome: 'error',
      failure: asJournalError('start', call, error),
    };
    // Best effort: the session closes the intent it may hold in memory; the start error counts.
    await journal?.toolFinished?.(call.id).catch(() => undefined);
    return result;
  }
  // The wave may have been stopped while the intent was being written: do not start then.
  if (!signal.aborted) options.onStarted?.(call);
  result = signal.aborted
    ? { observation: canceledObservation(call.id), outcome: 'canceled' }
    : await runTool(call, tool, args, signal, options, span);
  try {
    await journal?.toolFinished?.(call.id);
  } catch (error) {
    return { ...result, failure: result.failure ?? asJournalError('end', call, error) };
  }
  return result;
}

async function runTool(
  call: ToolCall,
  tool: Tool,
  args: unknown,
  signal: AbortSignal,
  options: ToolCallOptions,
  span: Span,
): Promise<StepResult> {
  const { onProgress, files } = options;
  options.toolClock.begin();
  try {
    const result = normalizeResult(
      await tool.execute(args, {
        signal,
        workDir: options.workDir,
        ...(files === undefined ? {} : { files }),
        ...(onProgress === undefined
          ? {}
          : { onProgress: (progress: ToolProgress) => onProgress(call, progress) }),
      }),
    );
    const observation: ToolMessage = {
      role: 'tool',
      toolCallId: call.id,
      content: result.content,
      ...(result.isError === true ? { isError: true } : {}),
    };
    return { observation, outcome: result.isError === true ? 'error' : 'ok' };
  } catch (error) {
    if (signal.aborted) return { observation: canceledObservation(call.id), outcome: 'canceled' };
    // The run's reporter failed inside the tool (a subagent reports through it): stop (ENG-7).
    if (error instanceof ReporterError) {
      return { observation: canceledObservation(call.id), outcome: 'canceled', failure: error };
    }
    span.recordException(error instanceof Error ? error : new Error(errorMessage(error)));
    return {
      observation: errorObservation(
        call.id,
        `${call.name} failed: ${errorMessage(error)}`,
        recoveryHints.toolFailed,
      ),
      outcome: 'error',
    };
  } finally {
    options.toolClock.end();
  }
}

function withFailure(failure: ClawError | undefined): { failure?: ClawError } {
  return failure === undefined ? {} : { failure };
}

type ParsedArguments =
  | { ok: true; value: unknown }
  | { ok: false; observation: ToolMessage; failure?: ClawError };

function parseArguments(call: ToolCall, tool: Tool): ParsedArguments {
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
  let checked;
  try {
    checked = tool.parseArguments(value);
  } catch (error) {
    // A check that throws instead of answering is a defect of the tool, not of the model's call.
    return {
      ok: false,
      observation: errorObservation(
        call.id,
        `the arguments of ${call.name} could not be checked: ${errorMessage(error)}`,
        recoveryHints.toolBroken,
      ),
      failure: new ClawError(
        `the argument check of tool "${call.name}" threw instead of answering ` +
        `(${errorMessage(error)}); the run was stopped. Fix the tool's parseArguments, or ` +
        'leave the tool out',
        { code: 'tool_arguments_check_failed', cause: error },
      ),
    };
  }
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

/** The journal's error, or that of an earlier write that failed (see `WriteBehindSession`). */
function asJournalError(stage: 'start' | 'end', call: ToolCall, error: unknown): ClawError {
  return error instanceof WriteBehindError ? error : journalError(stage, call, error);
}
