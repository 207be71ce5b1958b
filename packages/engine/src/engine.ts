import {
  ClawError,
  addCost,
  addUsage,
  defineTool,
  emptyUsage,
  errorMessage,
  throwIfAborted,
  type AgentSession,
  type ApprovalGate,
  type CostTotals,
  type Message,
  type ModelRequest,
  type ModelResponse,
  type Provider,
  type Reporter,
  type Tool,
  type ToolCall,
  type Usage,
} from '@claw/core';
import { MemorySession } from '@claw/session-store';
import {
  SpanStatusCode,
  context as otelContext,
  trace,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { BudgetExceededError, exceededBudget, isLimited, type BudgetOptions } from './budgets.js';
import { ActivityClock } from './limiter.js';
import { callModel } from './model-call.js';
import { canceledObservation } from './observations.js';
import { costOf, defaultPrices, priceOf, type PriceTable } from './pricing.js';
import { ToolRegistry } from './registry.js';
import { SafeReporter } from './safe-reporter.js';
import {
  SubagentSession,
  spawnSubagentArguments,
  spawnSubagentDescription,
  spawnSubagentToolName,
  subagentMaxTurns,
} from './subagent.js';
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

export interface EngineOptions extends BudgetOptions {
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
  /** Offer the `spawn_subagent` tool (ENG-9, TOOL-5). Default false. */
  subagents?: boolean;
  /** The model's context size in tokens, which sizes the history window (default 128,000). */
  contextWindowTokens?: number;
  /** Tokens kept free for the reply (default 8,192). */
  reservedOutputTokens?: number;
  /** Most history messages per request (default 2,000). */
  maxWindowMessages?: number;
  /** Prices per model (BUD-5); merged over `defaultPrices`. */
  prices?: PriceTable;
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
  /** Why the run did not complete (`failed`, `max_turns`); a budget is a `BudgetExceededError`. */
  error?: ClawError;
  /** Model calls made (by this run itself, not its subagents). */
  turns: number;
  /** Tokens this run used, its subagents included. */
  usage: Usage;
  /** Cost of this run, its subagents included. */
  cost: CostTotals;
  /** Wall time of tool execution, parallel calls counted once (ms). */
  toolWallMs: number;
  /** Subagents this run spawned. */
  subagents: number;
}

/** What a run and the subagents it starts share: their budgets (BUD-*). */
class RunBudget {
  usage: Usage = { ...emptyUsage };
  cost: CostTotals = { usd: 0, unpricedCalls: 0 };
  spawns = 0;
  readonly toolClock: ActivityClock;
  /** Aborted with a `BudgetExceededError` when the tool time budget runs out mid-wave. */
  private readonly stopController = new AbortController();

  constructor(
    readonly limits: BudgetOptions,
    /** The session whose totals the session budgets count (the parent's, for a subagent). */
    readonly session: AgentSession,
    now: () => number,
  ) {
    const toolLimit = limits.toolTimeBudgetMs;
    this.toolClock = new ActivityClock(
      now,
      isLimited(toolLimit)
        ? {
            limitMs: toolLimit,
            onExhausted: () =>
              this.stopController.abort(
                new BudgetExceededError('tool_time', toolLimit, this.toolClock.elapsed()),
              ),
          }
        : undefined,
    );
  }

  get stopSignal(): AbortSignal {
    return this.stopController.signal;
  }

  /** Throws the budget the next model call would exceed, if any. */
  checkBeforeModelCall(): void {
    if (this.stopController.signal.aborted) throw this.stopController.signal.reason;
    const exceeded = exceededBudget(this.limits, {
      sessionUsage: this.session.usage(),
      runUsage: this.usage,
      sessionCostUsd: this.session.cost().usd,
      runCostUsd: this.cost.usd,
      toolTimeMs: this.toolClock.elapsed(),
      toolTimeExhausted: this.toolClock.exhausted,
    });
    if (exceeded !== undefined) throw exceeded;
  }
}

/** One loop's own figures (a subagent has its own, and shares the budget). */
class LoopState {
  turns = 0;
  finalText = '';
  usage: Usage = { ...emptyUsage };
  firstTtfbMs: number | undefined;
  toolWallBefore: number;

  constructor(readonly budget: RunBudget) {
    this.toolWallBefore = budget.toolClock.elapsed();
  }
}

/** One run of the loop: the top-level run, or a subagent's. */
interface Execution {
  run: RunOptions;
  budget: RunBudget;
  registry: ToolRegistry;
  maxTurns: number;
  spanName: string;
  /** Filled with the run's trace context once its root span exists. */
  runContext?: { current?: Context };
}

interface LoopSetup {
  session: AgentSession;
  signal: AbortSignal;
  reporter: SafeReporter;
  traceContext: Context;
  registry: ToolRegistry;
  maxTurns: number;
}

/**
 * The ReAct loop (ENG-1): Thinking (a model call) → Action (the reply's tool calls) → repeat,
 * until a reply without tool calls or `maxTurns`. The history lives in the session; every tool
 * call in it always has its Observation, whatever way the run ends. Budgets (BUD-*) stop the next
 * model call; `spawn_subagent` runs a child loop that shares them (ENG-9).
 */
export class Engine {
  readonly tools: ToolRegistry;
  private readonly options: EngineOptions;
  private readonly tracer: Tracer;
  private readonly now: () => number;
  private readonly maxTurns: number;
  private readonly prices: PriceTable;

  /** @throws RangeError when maxTurns or toolConcurrency is not a whole number ≥ 1. */
  constructor(options: EngineOptions) {
    this.options = options;
    this.tools =
      options.tools instanceof ToolRegistry ? options.tools : new ToolRegistry(options.tools);
    this.tracer = options.tracer ?? defaultTracer();
    this.now = options.now ?? (() => performance.now());
    this.maxTurns = options.maxTurns ?? defaultMaxTurns;
    this.prices = { ...defaultPrices, ...options.prices };
    for (const [name, value] of [
      ['maxTurns', this.maxTurns],
      ['toolConcurrency', options.toolConcurrency ?? defaultToolConcurrency],
    ] as const) {
      if (!Number.isInteger(value) || value < 1) {
        throw new RangeError(`${name} must be a whole number ≥ 1, got ${value}`);
      }
    }
    if (options.subagents === true && this.tools.get(spawnSubagentToolName) !== undefined) {
      throw new ClawError(`a tool named "${spawnSubagentToolName}" is reserved for subagents`, {
        code: 'duplicate_tool',
      });
    }
  }

  /**
   * Runs one task on the session's history. Never throws: how the run ended is in the result
   * (completed, canceled, failed with the error — a budget is a `BudgetExceededError` — or
   * max_turns).
   */
  async run(prompt: string, options: RunOptions): Promise<RunResult> {
    const budget = new RunBudget(this.options, options.session, this.now);
    // Subagents' spans go under this run's root span, known once the run has started.
    const runContext: { current?: Context } = {};
    const registry = this.options.subagents === true
      ? this.withSpawnTool(budget, options.session, runContext)
      : this.tools;
    return this.execute(prompt, {
      run: options,
      budget,
      registry,
      maxTurns: this.maxTurns,
      spanName: spanNames.run,
      runContext,
    });
  }

  /**
   * Runs a subagent on its own (ENG-9): a temporary in-memory session in `workDir`, its own
   * budgets, at most 10 model calls, no further spawning.
   */
  async runSubagent(
    task: string,
    options: { workDir: string; reporter?: Reporter; signal?: AbortSignal; traceContext?: Context },
  ): Promise<RunResult> {
    const session = new MemorySession({ id: 'subagent', workDir: options.workDir });
    const budget = new RunBudget(this.options, session, this.now);
    return this.execute(task, {
      run: { ...options, session },
      budget,
      registry: this.tools,
      maxTurns: subagentMaxTurns,
      spanName: spanNames.subagent,
    });
  }

  private async execute(prompt: string, execution: Execution): Promise<RunResult> {
    const { run: options, budget, registry, maxTurns, spanName } = execution;
    const runContext = execution.runContext ?? {};
    const { session } = options;
    const signal = options.signal ?? new AbortController().signal;
    const reporter = new SafeReporter(options.reporter ?? {});
    const parent = options.traceContext ?? otelContext.active();
    const span = this.tracer.startSpan(
      spanName,
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
    const state = new LoopState(budget);
    let status: RunStatus;
    let error: ClawError | undefined;
    try {
      runContext.current = trace.setSpan(parent, span);
      const setup: LoopSetup = {
        session,
        signal,
        reporter,
        traceContext: runContext.current,
        registry,
        maxTurns,
      };
      status = await this.loop(prompt, setup, state);
      if (status === 'max_turns') {
        error = new ClawError(
          `max turns reached: the run made ${maxTurns} model calls without a final answer; ` +
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
    const toolWallMs = budget.toolClock.elapsed() - state.toolWallBefore;
    this.endRunSpan(span, state, status, error, toolWallMs);
    return {
      status,
      finalText: state.finalText,
      ...(error === undefined ? {} : { error }),
      turns: state.turns,
      usage: spanName === spanNames.run ? budget.usage : state.usage,
      cost: budget.cost,
      toolWallMs,
      subagents: budget.spawns,
    };
  }

  private async loop(prompt: string, setup: LoopSetup, state: LoopState): Promise<RunStatus> {
    const { session, signal, reporter } = setup;
    throwIfAborted(signal);
    // Unpaired calls of an interrupted earlier run are repaired before anything is sent (ENG-10).
    await session.beforeRun?.();
    await appendAndReport(session, reporter, [{ role: 'user', content: prompt }]);
    for (let turn = 1; turn <= setup.maxTurns; turn += 1) {
      throwIfAborted(signal);
      state.budget.checkBeforeModelCall();
      state.turns = turn;
      await reporter.thinking(turn);
      const response = await this.think(setup, state, turn);
      const message = response.message;
      state.finalText = message.content;
      if (message.content !== '') await reporter.textCompleted(message.content);
      await appendAndReport(session, reporter, [message]);
      const calls = message.toolCalls ?? [];
      if (calls.length === 0) return 'completed';
      await this.act(calls, setup, state);
      throwIfAborted(signal);
    }
    return 'max_turns';
  }

  /** One model call with its "Thinking" span; records usage and cost. */
  private async think(setup: LoopSetup, state: LoopState, turn: number): Promise<ModelResponse> {
    const { signal } = setup;
    const request = this.buildRequest(setup.session.history(), setup.registry);
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
      setup.traceContext,
    );
    const started = this.now();
    try {
      const response = await callModel({
        provider: this.options.provider,
        request,
        signal,
        reporter: setup.reporter,
        onFirstOutput: () => {
          const ttfb = this.now() - started;
          span.setAttribute(attributes.ttfbMs, ttfb);
          state.firstTtfbMs ??= ttfb;
        },
      });
      const usage = response.usage;
      if (usage !== undefined) {
        const cost = costOf(priceOf(this.prices, response.model ?? request.model), usage);
        span.setAttributes({
          [attributes.promptTokens]: usage.promptTokens,
          [attributes.completionTokens]: usage.completionTokens,
          [attributes.genAiInputTokens]: usage.promptTokens,
          [attributes.genAiOutputTokens]: usage.completionTokens,
          ...(cost === undefined ? {} : { [attributes.costUsd]: cost }),
        });
        state.usage = addUsage(state.usage, usage);
        state.budget.usage = addUsage(state.budget.usage, usage);
        state.budget.cost = addCost(state.budget.cost, cost);
        await setup.session.recordUsage(usage, cost);
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
  private async act(calls: readonly ToolCall[], setup: LoopSetup, state: LoopState): Promise<void> {
    const { session, signal, reporter } = setup;
    const span = this.tracer.startSpan(
      spanNames.action,
      { attributes: { [attributes.toolCount]: calls.length } },
      setup.traceContext,
    );
    const { budget } = state;
    const wallBefore = budget.toolClock.elapsed();
    try {
      const wave = await runToolWave({
        calls,
        registry: setup.registry,
        gate: this.options.gate,
        sessionId: session.id,
        workDir: session.workDir,
        signal,
        stopSignal: budget.stopSignal,
        reporter,
        journal: session,
        concurrency: this.options.toolConcurrency ?? defaultToolConcurrency,
        toolClock: budget.toolClock,
        tracer: this.tracer,
        parentContext: trace.setSpan(setup.traceContext, span),
      });
      if (wave.failure !== undefined) {
        // The reporter is broken: keep history paired, but do not call it again.
        await session.append(...wave.observations);
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

  /** The run's registry: the engine's tools plus a `spawn_subagent` bound to this run. */
  private withSpawnTool(
    budget: RunBudget,
    session: AgentSession,
    runContext: { current?: Context },
  ): ToolRegistry {
    const registry = new ToolRegistry(this.tools.all());
    registry.register(
      defineTool({
        name: spawnSubagentToolName,
        description: spawnSubagentDescription,
        risk: 'safe',
        schema: spawnSubagentArguments,
        execute: async (args, context) => {
          const limit = this.options.maxSubagents;
          if (isLimited(limit) && budget.spawns >= limit) {
            throw new BudgetExceededError('subagents', limit, budget.spawns);
          }
          budget.spawns += 1;
          const child = await this.execute(args.task, {
            run: {
              session: new SubagentSession(session),
              signal: context.signal,
              ...(runContext.current === undefined ? {} : { traceContext: runContext.current }),
            },
            budget,
            registry: this.tools,
            maxTurns: subagentMaxTurns,
            spanName: spanNames.subagent,
          });
          if (child.status === 'canceled') throw context.signal.reason;
          if (child.status === 'completed') return child.finalText;
          return {
            content:
              `the subagent did not finish (${child.status}): ${child.error?.message ?? 'no reason'}` +
              (child.finalText === '' ? '' : `\nIts last answer: ${child.finalText}`),
            isError: true,
          };
        },
      }),
    );
    return registry;
  }

  private buildRequest(history: readonly Message[], registry: ToolRegistry): ModelRequest {
    const { systemPrompt } = this.options;
    const tools = registry.definitions();
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

  private endRunSpan(
    span: Span,
    state: LoopState,
    status: RunStatus,
    error: ClawError | undefined,
    toolWallMs: number,
  ) {
    // Figures are taken from this loop's own state, before anything resets (OBS-2).
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
