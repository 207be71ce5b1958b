import {
  ClawError,
  errorMessage,
  throwIfAborted,
  type AgentSession,
  type AssistantMessage,
  type Compaction,
  type ModelRequest,
  type ApprovalGate,
  type Provider,
  type Reporter,
  type TextFileAccess,
  type Tool,
  type ToolCall,
} from '@claw/core';
import { MemorySession } from '@claw/session-store';
import { context as otelContext, trace, type Context, type Tracer } from '@opentelemetry/api';
import { act } from './act.js';
import type { BudgetOptions } from './budgets.js';
import { appendAndReport, pairDanglingCalls } from './history.js';
import { defaultPrices, type PriceTable } from './pricing.js';
import { ToolRegistry, joinToolSources, type ToolSource } from './registry.js';
import type { RequestSettings } from './request.js';
import { defaultCompactAtRatio, isContextOverflow, type SummaryRequest } from './compaction.js';
import { ContextKeeper, type Measure } from './context.js';
import { defaultContextWindowTokens, defaultReservedOutputTokens } from './working-memory.js';
import { LoopState, RunBudget } from './run-budget.js';
import type { RunOptions, RunResult, RunStatus } from './run-types.js';
import { SafeReporter } from './safe-reporter.js';
import { createSpawnTool, withTool } from './spawn-tool.js';
import { endRunSpan, startRunSpan } from './spans.js';
import { SubagentSession, spawnSubagentToolName, subagentMaxTurns } from './subagent.js';
import { WriteBehindSession } from './write-behind.js';
import { defaultTracer, spanNames } from './telemetry.js';
import { think } from './think.js';
import type { SetTimer } from './timers.js';
import {
  buildSystemPrompt,
  type InstructionText,
  type SessionEnvironment,
} from './system-prompt.js';

/** Most model calls of one run, by default: real tasks take tens of turns (REAL-3; it was 20). */
export const defaultMaxTurns = 200;
/** Most tool calls of one wave that run at once, by default (`EngineOptions.toolConcurrency`). */
export const defaultToolConcurrency = 4;

/** How an `Engine` runs: its provider, tools, approval gate, limits and budgets, for every run. */
export interface EngineOptions extends BudgetOptions, Omit<RequestSettings, 'systemPrompt'> {
  provider: Provider;
  /**
   * Replaces claw's own part of the system prompt (who it is, how to work, how its tools behave;
   * REAL-1). The environment block, the project instructions and `appendSystemPrompt` still
   * follow it when given; an empty string with none of them sends no system prompt at all.
   * Default: claw's text for the tools offered.
   */
  systemPrompt?: string;
  /** Text added at the end of the system prompt (REAL-1), of the subagents' too. */
  appendSystemPrompt?: string;
  /** Replaces claw's own part of the subagents' system prompt (ENG-9). */
  subagentSystemPrompt?: string;
  /**
   * Where runs work, for the environment block of the system prompt (REAL-1); a run may bring
   * its own (`RunOptions.environment`). Default: none (no environment block).
   */
  environment?: SessionEnvironment;
  /** Project instructions given to the model (REAL-2); a run may bring its own. Default: none. */
  instructions?: readonly InstructionText[];
  /**
   * Compact the conversation before a request would fill this share of `contextWindowTokens`
   * (CMP-1): old tool results are pruned, then the older part summarised by one model call.
   * Default 0.8.
   */
  compactAtRatio?: number;
  /**
   * Decides every tool call before it runs (ENG-3) for runs that bring no gate of their own
   * (`RunOptions.gate`). There is no silent allow-all: a run with neither fails at once.
   */
  gate?: ApprovalGate;
  tools?: Iterable<Tool> | ToolRegistry;
  /** Most model calls per run (default 200). */
  maxTurns?: number;
  /** Most tool calls of one reply running at once (default 4). */
  toolConcurrency?: number;
  /** Offer the `spawn_subagent` tool (ENG-9, TOOL-5). Default false. */
  subagents?: boolean;
  /** Prices per model (BUD-5); merged over `defaultPrices`. */
  prices?: PriceTable;
  /** Default: the global tracer provider's `@claw/engine` tracer (a no-op unless installed). */
  tracer?: Tracer;
  /** Milliseconds clock for ttfb and tool wall time (default `performance.now`). */
  now?: () => number;
  /**
   * Starts the tool time budget's timer (BUD-4); default: the global `setTimeout`, read at call
   * time. With `now`, it puts the engine's time under a test's control.
   */
  setTimer?: SetTimer;
}

/** One run of the loop: the top-level run, or a subagent's. */
interface Execution {
  session: AgentSession;
  signal: AbortSignal | undefined;
  reporter: SafeReporter;
  gate: ApprovalGate | undefined;
  /** Parent of the root span; default: the active context. */
  traceContext: Context | undefined;
  budget: RunBudget;
  registry: ToolSource;
  maxTurns: number;
  spanName: string;
  /** Filled with the run's trace context once its root span exists (for its subagents). */
  runContext?: { current?: Context };
  /** See `RunOptions.resumeCalls`. */
  resumeCalls?: readonly ToolCall[];
  /** A subagent's run: its own system prompt (ENG-9). */
  subagent: boolean;
  environment: SessionEnvironment | undefined;
  instructions: readonly InstructionText[] | undefined;
  /** See `RunOptions.files`. */
  files: TextFileAccess | undefined;
}

/** What every step of one loop works with. */
interface LoopSetup {
  session: WriteBehindSession;
  signal: AbortSignal;
  reporter: SafeReporter;
  gate: ApprovalGate | undefined;
  traceContext: Context;
  registry: ToolSource;
  maxTurns: number;
  state: LoopState;
  resumeCalls: readonly ToolCall[] | undefined;
  /** What shapes each request of the run: its system prompt is fixed for the whole run. */
  requestSettings: RequestSettings;
  /** Keeps the run's requests inside the model's context (CMP-1 … CMP-3). */
  context: ContextKeeper;
  /** See `RunOptions.files`. */
  files: TextFileAccess | undefined;
}

/**
 * The ReAct loop (ENG-1): Thinking (a model call) → Action (the reply's tool calls) → repeat,
 * until a reply without tool calls or `maxTurns`. The history lives in the session; every tool
 * call in it always has its Observation, whatever way the run ends. Budgets (BUD-*) stop the next
 * model call; `spawn_subagent` runs a child loop that shares them (ENG-9). One engine serves any
 * number of sessions, each run with its own gate (RT-2).
 */
export class Engine {
  readonly tools: ToolRegistry;
  private readonly options: EngineOptions;
  private readonly tracer: Tracer;
  private readonly now: () => number;
  private readonly maxTurns: number;
  private readonly concurrency: number;
  private readonly prices: PriceTable;
  /** What the server counted of each session's last request (CMP-1), by session. */
  private readonly measures = new WeakMap<object, Measure>();
  /** The context windows servers stated for sessions' models (smaller than the settings'). */
  private readonly windows = new WeakMap<object, number>();

  /**
   * @throws RangeError when maxTurns or toolConcurrency is not a whole number ≥ 1.
   * @throws ClawError `duplicate_tool` when subagents are on and a tool is named `spawn_subagent`.
   */
  constructor(options: EngineOptions) {
    this.options = options;
    this.tools =
      options.tools instanceof ToolRegistry ? options.tools : new ToolRegistry(options.tools);
    this.tracer = options.tracer ?? defaultTracer();
    this.now = options.now ?? (() => performance.now());
    this.maxTurns = options.maxTurns ?? defaultMaxTurns;
    this.concurrency = options.toolConcurrency ?? defaultToolConcurrency;
    this.prices = { ...defaultPrices, ...options.prices };
    for (const [name, value] of [
      ['maxTurns', this.maxTurns],
      ['toolConcurrency', this.concurrency],
    ] as const) {
      if (!Number.isInteger(value) || value < 1) {
        throw new RangeError(`${name} must be a whole number ≥ 1, got ${value}`);
      }
    }
    const ratio = options.compactAtRatio ?? defaultCompactAtRatio;
    if (!(ratio > 0.1 && ratio <= 1)) {
      throw new RangeError(`compactAtRatio must be above 0.1 and at most 1, got ${ratio}`);
    }
    if (options.subagents === true && this.tools.get(spawnSubagentToolName) !== undefined) {
      throw new ClawError(`a tool named "${spawnSubagentToolName}" is reserved for subagents`, {
        code: 'duplicate_tool',
      });
    }
  }

  /**
   * Runs one task on the session's history. Never throws: how the run ended is in the result
   * (completed, canceled, failed with the error — a budget is a `BudgetExceededError`, a missing
   * gate `approval_gate_missing` — or max_turns).
   */
  async run(prompt: string, options: RunOptions): Promise<RunResult> {
    const budget = this.newBudget(options.session);
    const gate = options.gate ?? this.options.gate;
    const environment = options.environment ?? this.options.environment;
    const instructions = options.instructions ?? this.options.instructions;
    const reporter = new SafeReporter(options.reporter ?? {});
    // Subagents' spans go under this run's root span, known once the run has started.
    const runContext: { current?: Context } = {};
    const tools = options.tools === undefined
      ? this.tools
      : joinToolSources(this.tools, options.tools);
    const registry = this.options.subagents === true
      ? withTool(tools, createSpawnTool({
          budget,
          // A child of a running parent: the parent's gate and budget, its usage reported to
          // the parent's reporter (only that: its conversation is not the parent's).
          runChild: (task, signal) => this.execute(task, {
            session: new SubagentSession(options.session),
            signal,
            reporter: reporter.forSubagent(),
            gate,
            traceContext: runContext.current,
            budget,
            registry: tools,
            maxTurns: subagentMaxTurns,
            spanName: spanNames.subagent,
            subagent: true,
            environment,
            instructions,
            files: options.files,
          }),
        }))
      : tools;
    return this.execute(prompt, {
      session: options.session,
      signal: options.signal,
      reporter,
      gate,
      traceContext: options.traceContext,
      budget,
      registry,
      maxTurns: this.maxTurns,
      spanName: spanNames.run,
      runContext,
      ...(options.resumeCalls === undefined ? {} : { resumeCalls: options.resumeCalls }),
      subagent: false,
      environment,
      instructions,
      files: options.files,
    });
  }

  /**
   * Runs a subagent on its own (ENG-9): a temporary in-memory session in `workDir`, its own
   * budgets, at most 10 model calls, no further spawning. `gate` and `files` as in `RunOptions`.
   */
  async runSubagent(
    task: string,
    options: {
      workDir: string;
      reporter?: Reporter;
      gate?: ApprovalGate;
      signal?: AbortSignal;
      traceContext?: Context;
      files?: TextFileAccess;
    },
  ): Promise<RunResult> {
    const session = new MemorySession({ id: 'subagent', workDir: options.workDir });
    return this.execute(task, {
      session,
      signal: options.signal,
      reporter: new SafeReporter(options.reporter ?? {}),
      gate: options.gate ?? this.options.gate,
      traceContext: options.traceContext,
      budget: this.newBudget(session),
      registry: this.tools,
      maxTurns: subagentMaxTurns,
      spanName: spanNames.subagent,
      subagent: true,
      environment: this.options.environment,
      instructions: this.options.instructions,
      files: options.files,
    });
  }

  /**
   * The system prompt of a run (REAL-1): built once when the run starts, from the tools it is
   * offered then, so that every request of the run sends the same text.
   */
  private systemPromptOf(execution: Execution): string {
    const { options } = this;
    return buildSystemPrompt({
      base: execution.subagent ? options.subagentSystemPrompt : options.systemPrompt,
      tools: execution.registry.definitions().map((definition) => definition.name),
      environment: execution.environment,
      instructions: execution.instructions,
      append: options.appendSystemPrompt,
      subagent: execution.subagent,
    });
  }

  /**
   * Compacts a session's conversation now, whatever its size (CMP-5: `/compact`): old tool
   * results are pruned and everything but the latest steps summarised by one model call, which
   * counts against the budgets like any other (CMP-6). Never throws: the result says how it went;
   * `result.compaction` is what was stored (absent when there was nothing to compact).
   */
  async compact(options: CompactOptions): Promise<RunResult> {
    const budget = this.newBudget(options.session);
    const state = new LoopState(budget);
    const session = new WriteBehindSession(options.session);
    const signal = options.signal ?? new AbortController().signal;
    const reporter = new SafeReporter(options.reporter ?? {});
    const parent = options.traceContext ?? otelContext.active();
    const span = startRunSpan(this.tracer, {
      name: spanNames.compaction,
      sessionId: session.id,
      providerName: this.options.provider.name,
      parent,
    });
    const registry = options.tools === undefined
      ? this.tools
      : joinToolSources(this.tools, options.tools);
    const execution: Execution = {
      session: options.session,
      signal,
      reporter,
      gate: undefined,
      traceContext: undefined,
      budget,
      registry,
      maxTurns: 0,
      spanName: spanNames.compaction,
      subagent: false,
      environment: options.environment ?? this.options.environment,
      instructions: options.instructions ?? this.options.instructions,
      // A compaction runs no tools.
      files: undefined,
    };
    let status: RunStatus = 'completed';
    let error: ClawError | undefined;
    let compaction: Compaction | undefined;
    try {
      throwIfAborted(signal);
      // Calls left unpaired by an interrupted run are paired before anything is summarised.
      await session.beforeRun?.();
      const requestSettings = { ...this.options, systemPrompt: this.systemPromptOf(execution) };
      const keeper = this.contextKeeper({
        session,
        measureKey: options.session,
        requestSettings,
        reporter,
        signal,
        traceContext: trace.setSpan(parent, span),
        state,
      });
      compaction = await keeper.manual(registry.definitions(), options.focus);
      await session.settle();
    } catch (caught) {
      if (signal.aborted) {
        status = 'canceled';
      } else {
        status = 'failed';
        error = asClawError(caught);
      }
    }
    endRunSpan(span, { state, status, error, toolWallMs: 0 });
    return {
      status,
      finalText: status !== 'completed'
        ? ''
        : compaction === undefined
          ? 'nothing to compact: the conversation has no older part to prune or summarise'
          : describeCompaction(compaction),
      ...(error === undefined ? {} : { error }),
      turns: 0,
      usage: budget.usage,
      cost: budget.cost,
      toolWallMs: 0,
      subagents: 0,
      compactions: state.compactions,
      summaryCalls: state.summaryCalls,
      ...(compaction === undefined ? {} : { compaction }),
    };
  }

  private newBudget(session: AgentSession): RunBudget {
    return new RunBudget({
      limits: this.options,
      session,
      now: this.now,
      ...(this.options.setTimer === undefined ? {} : { setTimer: this.options.setTimer }),
    });
  }

  private async execute(prompt: string, execution: Execution): Promise<RunResult> {
    const { reporter, budget, spanName } = execution;
    const session = new WriteBehindSession(execution.session);
    const signal = execution.signal ?? new AbortController().signal;
    const parent = execution.traceContext ?? otelContext.active();
    const span = startRunSpan(this.tracer, {
      name: spanName,
      sessionId: session.id,
      providerName: this.options.provider.name,
      parent,
    });
    const state = new LoopState(budget);
    let status: RunStatus;
    let error: ClawError | undefined;
    try {
      const traceContext = trace.setSpan(parent, span);
      if (execution.runContext !== undefined) execution.runContext.current = traceContext;
      const requestSettings = { ...this.options, systemPrompt: this.systemPromptOf(execution) };
      status = await this.loop(prompt, {
        session,
        signal,
        reporter,
        gate: execution.gate,
        traceContext,
        registry: execution.registry,
        maxTurns: execution.maxTurns,
        state,
        resumeCalls: execution.resumeCalls,
        requestSettings,
        files: execution.files,
        context: this.contextKeeper({
          session,
          measureKey: execution.session,
          requestSettings,
          reporter,
          signal,
          traceContext,
          state,
        }),
      });
      // The run ends once everything it changed is stored (or the failure to store it is its end).
      await session.settle();
      if (status === 'max_turns') error = maxTurnsReached(execution.maxTurns);
    } catch (caught) {
      if (signal.aborted) {
        status = 'canceled';
      } else {
        status = 'failed';
        error = asClawError(caught);
      }
    }
    // A failed write here is the session's to report; memory is paired either way.
    if (status !== 'completed') {
      await pairDanglingCalls(session, reporter).catch(() => undefined);
      await session.settle().catch(() => undefined);
    }
    const toolWallMs = state.toolWallMs();
    endRunSpan(span, { state, status, error, toolWallMs });
    return {
      status,
      finalText: state.finalText,
      ...(error === undefined ? {} : { error }),
      turns: state.turns,
      usage: spanName === spanNames.run ? budget.usage : state.usage,
      cost: budget.cost,
      toolWallMs,
      subagents: budget.spawns,
      compactions: state.compactions,
      summaryCalls: state.summaryCalls,
    };
  }

  private async loop(prompt: string, setup: LoopSetup): Promise<RunStatus> {
    const { session, signal, reporter, state } = setup;
    throwIfAborted(signal);
    const gate = requireGate(setup.gate);
    // Unpaired calls of an interrupted earlier run are repaired before anything is sent (ENG-10).
    await session.beforeRun?.();
    const resumed = setup.resumeCalls ?? [];
    if (resumed.length === 0) {
      await appendAndReport(session, reporter, [{ role: 'user', content: prompt }]);
      // The task's prompt is stored before the model is asked (once a run, not once a turn).
      await session.settle();
    } else {
      // The interrupted turn's calls, made again: asked at the gate and run like any wave.
      const calls = [...resumed];
      await appendAndReport(session, reporter, [{ role: 'assistant', content: '', toolCalls: calls }]);
      await this.actOn(calls, setup, gate);
      throwIfAborted(signal);
    }
    for (let turn = 1; turn <= setup.maxTurns; turn += 1) {
      throwIfAborted(signal);
      session.throwIfFailed();
      state.budget.checkBeforeModelCall();
      state.turns = turn;
      const tools = setup.registry.definitions();
      // Compacted first when the request would not fit (CMP-1), before the call is announced.
      const prepared = await setup.context.request(tools);
      await reporter.thinking(turn);
      const message = await this.think(setup, prepared.request, turn).catch(
        async (error: unknown) => {
          // The server said the request does not fit: compacted (unless this call already
          // was), then tried once more (CMP-1, CMP-3).
          if (!isContextOverflow(error) || signal.aborted) throw error;
          const retried = prepared.compacted
            ? setup.context.exhaustedBy(prepared.request, tools, error)
            : await setup.context.afterOverflow(tools, error);
          return this.think(setup, retried, turn).catch((again: unknown) => {
            if (isContextOverflow(again) && !signal.aborted) {
              setup.context.exhaustedBy(retried, tools, again);
            }
            throw again;
          });
        },
      );
      state.finalText = message.content;
      if (message.content !== '') await reporter.textCompleted(message.content);
      await appendAndReport(session, reporter, [message]);
      const calls = message.toolCalls ?? [];
      if (calls.length === 0) return 'completed';
      await this.actOn(calls, setup, gate);
      throwIfAborted(signal);
    }
    return 'max_turns';
  }

  /** One turn's model call, its usage noted for the size of the next request. */
  private async think(
    setup: LoopSetup,
    request: ModelRequest,
    turn: number,
  ): Promise<AssistantMessage> {
    const response = await think({
      provider: this.options.provider,
      prices: this.prices,
      tracer: this.tracer,
      now: this.now,
      request,
      turn,
      session: setup.session,
      reporter: setup.reporter,
      signal: setup.signal,
      traceContext: setup.traceContext,
      state: setup.state,
    });
    setup.context.measured(request, response.usage);
    return response.message;
  }

  /** The context keeper of one run: its summary calls are counted and traced as the run's. */
  private contextKeeper(options: {
    session: WriteBehindSession;
    measureKey: object;
    requestSettings: RequestSettings;
    reporter: SafeReporter;
    signal: AbortSignal;
    traceContext: Context;
    state: LoopState;
  }): ContextKeeper {
    const { session, reporter, signal, state } = options;
    return new ContextKeeper({
      session,
      measures: this.measures,
      windows: this.windows,
      measureKey: options.measureKey,
      settings: options.requestSettings,
      limits: {
        contextWindowTokens: this.options.contextWindowTokens ?? defaultContextWindowTokens,
        compactAtRatio: this.options.compactAtRatio ?? defaultCompactAtRatio,
        reservedOutputTokens: this.options.reservedOutputTokens ?? defaultReservedOutputTokens,
      },
      summarise: async (summary: SummaryRequest) => {
        // The summary call counts like any other (CMP-6): a spent budget stops it too.
        state.budget.checkBeforeModelCall();
        state.summaryCalls += 1;
        // Told like any model call (a summary can take a while): clients show the wait.
        await reporter.thinking(Math.max(1, state.turns), 'summary');
        const response = await think({
          provider: this.options.provider,
          prices: this.prices,
          tracer: this.tracer,
          now: this.now,
          request: {
            messages: [
              { role: 'system', content: summary.system },
              { role: 'user', content: summary.user },
            ],
            ...(this.options.model === undefined ? {} : { model: this.options.model }),
          },
          turn: state.turns,
          session,
          reporter: reporter.forSubagent(),
          signal,
          traceContext: options.traceContext,
          state,
          spanName: spanNames.compact,
        });
        return {
          text: response.message.content,
          ...(response.usage === undefined ? {} : { usage: response.usage }),
        };
      },
      onCompacted: (compaction) => {
        state.compactions += 1;
        return reporter.compacted(compaction);
      },
      signal,
    });
  }

  private async actOn(calls: ToolCall[], setup: LoopSetup, gate: ApprovalGate): Promise<void> {
    await act({
      calls,
      registry: setup.registry,
      gate,
      session: setup.session,
      reporter: setup.reporter,
      signal: setup.signal,
      budget: setup.state.budget,
      concurrency: this.concurrency,
      tracer: this.tracer,
      traceContext: setup.traceContext,
      writes: setup.session,
      ...(setup.files === undefined ? {} : { files: setup.files }),
    });
  }
}

/** Options of `Engine.compact`. */
export interface CompactOptions {
  session: AgentSession;
  /** What the summary must keep in particular (`/compact <focus>`). */
  focus?: string;
  /** Hears the summary call's usage and the compaction (`onCompacted`). */
  reporter?: Reporter;
  signal?: AbortSignal;
  /** The session's run tools (MCP), for the size of its requests. */
  tools?: ToolSource;
  /** As in `RunOptions`: the system prompt's parts, for the size of its requests. */
  environment?: SessionEnvironment;
  instructions?: readonly InstructionText[];
  traceContext?: Context;
}

/**
 * `context compacted: 15,200 → 6,100 tokens (12 old tool results pruned, 40 messages
 * summarised)`.
 */
export function describeCompaction(compaction: Compaction): string {
  const count = (n: number) => n.toLocaleString('en-US');
  const parts: string[] = [];
  if (compaction.prunedResults > 0) {
    parts.push(`${count(compaction.prunedResults)} old tool result${compaction.prunedResults === 1 ? '' : 's'} pruned`);
  }
  if (compaction.summarisedMessages > 0) {
    const what = `${count(compaction.summarisedMessages)} message${compaction.summarisedMessages === 1 ? '' : 's'}`;
    parts.push(compaction.summaryError === undefined ? `${what} summarised` : `${what} left out (no summary: ${compaction.summaryError})`);
  }
  return `context compacted: ${count(compaction.tokensBefore)} → ${count(compaction.tokensAfter)} tokens` +
    (parts.length === 0 ? '' : ` (${parts.join(', ')})`);
}

function requireGate(gate: ApprovalGate | undefined): ApprovalGate {
  if (gate !== undefined) return gate;
  throw new ClawError(
    'no approval gate for this run: every tool call must pass one (ENG-3); pass a gate in ' +
    'the Engine options (`gate`) or in the run options (`run(prompt, { gate })`)',
    { code: 'approval_gate_missing' },
  );
}

function maxTurnsReached(maxTurns: number): ClawError {
  return new ClawError(
    `max turns reached: the run made ${maxTurns} model calls without a final answer; ` +
    'raise maxTurns or split the task',
    { code: 'max_turns_reached' },
  );
}

function asClawError(error: unknown): ClawError {
  return error instanceof ClawError
    ? error
    : new ClawError(`the run failed: ${errorMessage(error)}`, { code: 'run_failed', cause: error });
}
