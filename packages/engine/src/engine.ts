import {
  ClawError,
  addUsage,
  emptyUsage,
  errorMessage,
  throwIfAborted,
  type AgentSession,
  type ApprovalGate,
  type Message,
  type ModelRequest,
  type ModelResponse,
  type Provider,
  type Reporter,
  type Tool,
  type ToolCall,
  type Usage,
} from '@claw/core';
import {
  SpanStatusCode,
  context as otelContext,
  trace,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { ActivityClock } from './limiter.js';
import { callModel } from './model-call.js';
import { canceledObservation } from './observations.js';
import { ToolRegistry } from './registry.js';
import { SafeReporter } from './safe-reporter.js';
import { attributes, defaultTracer, spanNames } from './telemetry.js';
import { runToolWave } from './tool-wave.js';
import {
  defaultContextWindowTokens,
  defaultMaxWindowMessages,
  defaultReservedOutputTokens,
  estimateTextTokens,
  selectWindow,
} from './working-memory.js';

export const defaultMaxTurns = 20;
export const defaultToolConcurrency = 4;

export interface EngineOptions {
  provider: Provider;
  /** Decides every tool call before it runs (ENG-3). Required: there is no silent allow-all. */
  gate: ApprovalGate;
  tools?: Iterable<Tool> | ToolRegistry;
  /** Sent first in every request; not stored in the session. */
  systemPrompt?: string;
  /** Model name for requests; default: the provider's own. */
  model?: string;
  /** Most model calls per run (default 20). */
  maxTurns?: number;
  /** Most tool calls of one reply running at once (default 4). */
  toolConcurrency?: number;
  /** The model's context size in tokens, which sizes the history window (default 128,000). */
  contextWindowTokens?: number;
  /** Tokens kept free for the reply (default 8,192). */
  reservedOutputTokens?: number;
  /** Most history messages per request (default 2,000). */
  maxWindowMessages?: number;
  /** Default: the global tracer provider's `@claw/engine` tracer (a no-op unless installed). */
  tracer?: Tracer;
  /** Milliseconds clock for ttfb and tool wall time (default `performance.now`). */
  now?: () => number;
}

export interface RunOptions {
  session: AgentSession;
  reporter?: Reporter;
  /** Aborting cancels the run: the model call and running tools stop at once (ENG-5). */
  signal?: AbortSignal;
  /** Parent of the run's root span (e.g. an "Eval" span); default: the active context. */
  traceContext?: Context;
}

export type RunStatus = 'completed' | 'canceled' | 'failed' | 'max_turns';

export interface RunResult {
  status: RunStatus;
  /** The text of the last assistant reply of this run ('' if there was none). */
  finalText: string;
  /** Why the run did not complete (for `failed` and `max_turns`). */
  error?: ClawError;
  /** Model calls made. */
  turns: number;
  /** Tokens this run used. */
  usage: Usage;
  /** Wall time of tool execution, parallel calls counted once (ms). */
  toolWallMs: number;
}

class RunState {
  turns = 0;
  finalText = '';
  usage: Usage = { ...emptyUsage };
  firstTtfbMs: number | undefined;
  readonly toolClock: ActivityClock;

  constructor(now: () => number) {
    this.toolClock = new ActivityClock(now);
  }
}

/**
 * The ReAct loop (ENG-1): Thinking (a model call) → Action (the reply's tool calls) → repeat,
 * until a reply without tool calls or `maxTurns`. The history lives in the session; every tool
 * call in it always has its Observation, whatever way the run ends.
 */
export class Engine {
  readonly tools: ToolRegistry;
  private readonly options: EngineOptions;
  private readonly tracer: Tracer;
  private readonly now: () => number;
  private readonly maxTurns: number;

  /** @throws RangeError when maxTurns or toolConcurrency is not a whole number ≥ 1. */
  constructor(options: EngineOptions) {
    this.options = options;
    this.tools =
      options.tools instanceof ToolRegistry ? options.tools : new ToolRegistry(options.tools);
    this.tracer = options.tracer ?? defaultTracer();
    this.now = options.now ?? (() => performance.now());
    this.maxTurns = options.maxTurns ?? defaultMaxTurns;
    for (const [name, value] of [
      ['maxTurns', this.maxTurns],
      ['toolConcurrency', options.toolConcurrency ?? defaultToolConcurrency],
    ] as const) {
      if (!Number.isInteger(value) || value < 1) {
        throw new RangeError(`${name} must be a whole number ≥ 1, got ${value}`);
      }
    }
  }

  /**
   * Runs one task on the session's history. Never throws: how the run ended is in the result
   * (completed, canceled, failed with the error, or max_turns).
   */
  async run(prompt: string, options: RunOptions): Promise<RunResult> {
    const { session } = options;
    const signal = options.signal ?? new AbortController().signal;
    const reporter = new SafeReporter(options.reporter ?? {});
    const parent = options.traceContext ?? otelContext.active();
    const span = this.tracer.startSpan(
      spanNames.run,
      {
        attributes: {
          [attributes.genAiOperation]: 'invoke_agent',
          [attributes.genAiAgentName]: 'claw',
          [attributes.genAiConversationId]: session.id,
          [attributes.genAiProvider]: this.options.provider.name,
        },
      },
      parent,
    );
    const state = new RunState(this.now);
    let status: RunStatus;
    let error: ClawError | undefined;
    try {
      const runContext = trace.setSpan(parent, span);
      status = await this.loop(prompt, session, signal, reporter, runContext, state);
      if (status === 'max_turns') {
        error = new ClawError(
          `max turns reached: the run made ${this.maxTurns} model calls without a final answer; ` +
          'raise maxTurns or split the task',
          { code: 'max_turns_reached' },
        );
      }
    } catch (caught) {
      if (signal.aborted) {
        status = 'canceled';
      } else {
        status = 'failed';
        error =
          caught instanceof ClawError
            ? caught
            : new ClawError(`the run failed: ${errorMessage(caught)}`, {
                code: 'run_failed',
                cause: caught,
              });
      }
    }
    // A failed write here is the session's to report; memory is paired either way.
    if (status !== 'completed') await pairDanglingCalls(session, reporter).catch(() => undefined);
    this.endRunSpan(span, state, status, error);
    return {
      status,
      finalText: state.finalText,
      ...(error === undefined ? {} : { error }),
      turns: state.turns,
      usage: state.usage,
      toolWallMs: state.toolClock.elapsed(),
    };
  }

  private async loop(
    prompt: string,
    session: AgentSession,
    signal: AbortSignal,
    reporter: SafeReporter,
    runContext: Context,
    state: RunState,
  ): Promise<RunStatus> {
    throwIfAborted(signal);
    await appendAndReport(session, reporter, [{ role: 'user', content: prompt }]);
    for (let turn = 1; turn <= this.maxTurns; turn += 1) {
      throwIfAborted(signal);
      state.turns = turn;
      await reporter.thinking(turn);
      const response = await this.think(session, signal, reporter, runContext, state, turn);
      const message = response.message;
      state.finalText = message.content;
      if (message.content !== '') await reporter.textCompleted(message.content);
      await appendAndReport(session, reporter, [message]);
      const calls = message.toolCalls ?? [];
      if (calls.length === 0) return 'completed';
      await this.act(calls, session, signal, reporter, runContext, state);
      throwIfAborted(signal);
    }
    return 'max_turns';
  }

  /** One model call with its "Thinking" span. */
  private async think(
    session: AgentSession,
    signal: AbortSignal,
    reporter: SafeReporter,
    runContext: Context,
    state: RunState,
    turn: number,
  ): Promise<ModelResponse> {
    const request = this.buildRequest(session.history());
    const span = this.tracer.startSpan(
      spanNames.thinking,
      {
        attributes: {
          [attributes.turn]: turn,
          [attributes.genAiOperation]: 'chat',
          [attributes.genAiProvider]: this.options.provider.name,
          ...(request.model === undefined ? {} : { [attributes.genAiRequestModel]: request.model }),
        },
      },
      runContext,
    );
    const started = this.now();
    try {
      const response = await callModel({
        provider: this.options.provider,
        request,
        signal,
        reporter,
        onFirstOutput: () => {
          const ttfb = this.now() - started;
          span.setAttribute(attributes.ttfbMs, ttfb);
          state.firstTtfbMs ??= ttfb;
        },
      });
      const usage = response.usage;
      if (usage !== undefined) {
        span.setAttributes({
          [attributes.promptTokens]: usage.promptTokens,
          [attributes.completionTokens]: usage.completionTokens,
          [attributes.genAiInputTokens]: usage.promptTokens,
          [attributes.genAiOutputTokens]: usage.completionTokens,
        });
        state.usage = addUsage(state.usage, usage);
        await session.recordUsage(usage);
      }
      if (response.model !== undefined) {
        span.setAttribute(attributes.genAiResponseModel, response.model);
      }
      if (response.finishReason !== undefined) {
        span.setAttribute(attributes.genAiFinishReasons, [response.finishReason]);
      }
      return response;
    } catch (error) {
      markSpanFailed(span, error, signal);
      throw error;
    } finally {
      span.end();
    }
  }

  /** One tool wave with its "Action" span; appends the Observations in call order. */
  private async act(
    calls: readonly ToolCall[],
    session: AgentSession,
    signal: AbortSignal,
    reporter: SafeReporter,
    runContext: Context,
    state: RunState,
  ): Promise<void> {
    const span = this.tracer.startSpan(
      spanNames.action,
      { attributes: { [attributes.toolCount]: calls.length } },
      runContext,
    );
    const wallBefore = state.toolClock.elapsed();
    try {
      const wave = await runToolWave({
        calls,
        registry: this.tools,
        gate: this.options.gate,
        sessionId: session.id,
        workDir: session.workDir,
        signal,
        reporter,
        concurrency: this.options.toolConcurrency ?? defaultToolConcurrency,
        toolClock: state.toolClock,
        tracer: this.tracer,
        parentContext: trace.setSpan(runContext, span),
      });
      if (wave.failure !== undefined) {
        // The reporter is broken: keep history paired, but do not call it again.
        await session.append(...wave.observations);
        throw wave.failure;
      }
      await appendAndReport(session, reporter, wave.observations);
    } catch (error) {
      markSpanFailed(span, error, signal);
      throw error;
    } finally {
      span.setAttribute(attributes.toolWallMs, state.toolClock.elapsed() - wallBefore);
      span.end();
    }
  }

  private buildRequest(history: readonly Message[]): ModelRequest {
    const { systemPrompt } = this.options;
    const tools = this.tools.definitions();
    const fixedTokens =
      (systemPrompt === undefined ? 0 : estimateTextTokens(systemPrompt)) +
      estimateTextTokens(JSON.stringify(tools));
    const window = selectWindow(history, {
      maxTokens: Math.max(
        0,
        (this.options.contextWindowTokens ?? defaultContextWindowTokens) -
        (this.options.reservedOutputTokens ?? defaultReservedOutputTokens) -
        fixedTokens,
      ),
      maxMessages: this.options.maxWindowMessages ?? defaultMaxWindowMessages,
    });
    return {
      messages: systemPrompt === undefined ? window : [{ role: 'system', content: systemPrompt }, ...window],
      ...(tools.length > 0 ? { tools } : {}),
      ...(this.options.model === undefined ? {} : { model: this.options.model }),
    };
  }

  private endRunSpan(span: Span, state: RunState, status: RunStatus, error: ClawError | undefined) {
    span.setAttributes({
      [attributes.runStatus]: status,
      [attributes.turns]: state.turns,
      [attributes.promptTokens]: state.usage.promptTokens,
      [attributes.completionTokens]: state.usage.completionTokens,
      [attributes.genAiInputTokens]: state.usage.promptTokens,
      [attributes.genAiOutputTokens]: state.usage.completionTokens,
      [attributes.toolWallMs]: state.toolClock.elapsed(),
    });
    if (state.firstTtfbMs !== undefined) span.setAttribute(attributes.ttfbMs, state.firstTtfbMs);
    if (error !== undefined) {
      span.recordException(error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    }
    span.end();
  }
}

async function appendAndReport(
  session: AgentSession,
  reporter: SafeReporter,
  messages: readonly Message[],
): Promise<void> {
  await session.append(...messages);
  for (const message of messages) await reporter.message(message);
}

function markSpanFailed(span: Span, error: unknown, signal: AbortSignal): void {
  if (signal.aborted) {
    span.setAttribute('claw.canceled', true);
    return;
  }
  span.recordException(error instanceof Error ? error : new Error(errorMessage(error)));
  span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(error) });
}

/**
 * EnsureToolObservations (ENG-5): if the run stopped after an assistant message with tool calls
 * was appended but before all its Observations were, append "tool call canceled" for the missing
 * ones, in call order. Reporting them is best effort: the run is already ending.
 */
async function pairDanglingCalls(session: AgentSession, reporter: SafeReporter): Promise<void> {
  const history = session.history();
  let index = history.length - 1;
  while (index >= 0 && history[index]?.role === 'tool') index -= 1;
  const last = history[index];
  if (last?.role !== 'assistant' || last.toolCalls === undefined) return;
  const answered = new Set(
    history.slice(index + 1).map((message) => (message.role === 'tool' ? message.toolCallId : '')),
  );
  const missing = last.toolCalls
    .filter((call) => !answered.has(call.id))
    .map((call) => canceledObservation(call.id));
  if (missing.length === 0) return;
  await session.append(...missing);
  for (const message of missing) await reporter.message(message).catch(() => undefined);
}
