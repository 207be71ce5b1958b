import {
  addCost,
  addUsage,
  emptyUsage,
  type AgentSession,
  type CostTotals,
  type Usage,
  type UsageReport,
} from '@claw/core';
import { BudgetExceededError, exceededBudget, isLimited, type BudgetOptions } from './budgets.js';
import { ActivityClock } from './limiter.js';
import type { SetTimer } from './timers.js';

export interface RunBudgetOptions {
  limits: BudgetOptions;
  /** The session whose totals the session budgets count (the parent's, for a subagent). */
  session: AgentSession;
  /** Milliseconds clock of the tool time budget. */
  now: () => number;
  /** Starts the tool time budget's timer (default: the global `setTimeout`). */
  setTimer?: SetTimer;
}

type BudgetsLeft = UsageReport['budgetsLeft'];

/** What a run and the subagents it starts share: their budgets (BUD-*). */
export class RunBudget {
  usage: Usage = { ...emptyUsage };
  cost: CostTotals = { usd: 0, unpricedCalls: 0 };
  spawns = 0;
  readonly limits: BudgetOptions;
  readonly session: AgentSession;
  readonly toolClock: ActivityClock;
  /** Aborted with a `BudgetExceededError` when the tool time budget runs out mid-wave. */
  private readonly stopController = new AbortController();

  constructor(options: RunBudgetOptions) {
    this.limits = options.limits;
    this.session = options.session;
    const toolLimit = options.limits.toolTimeBudgetMs;
    this.toolClock = new ActivityClock({
      now: options.now,
      ...(options.setTimer === undefined ? {} : { setTimer: options.setTimer }),
      ...(isLimited(toolLimit)
        ? {
            budget: {
              limitMs: toolLimit,
              onExhausted: () =>
                this.stopController.abort(
                  new BudgetExceededError('tool_time', toolLimit, this.toolClock.elapsed()),
                ),
            },
          }
        : {}),
    });
  }

  get stopSignal(): AbortSignal {
    return this.stopController.signal;
  }

  /** Throws the budget the next model call would exceed, if any (BUD-1, 2, 4, 5). */
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

  /** Counts one model call of the run or of one of its subagents. */
  recordCall(usage: Usage, costUsd: number | undefined): void {
    this.usage = addUsage(this.usage, usage);
    this.cost = addCost(this.cost, costUsd);
  }

  /** Counts a spawn (BUD-3). @throws BudgetExceededError when no spawn is left. */
  takeSpawn(): void {
    const limit = this.limits.maxSubagents;
    if (isLimited(limit) && this.spawns >= limit) {
      throw new BudgetExceededError('subagents', limit, this.spawns);
    }
    this.spawns += 1;
  }

  /**
   * The figures after one model call: the call, this run so far (subagents included), the
   * session's totals, and what each limited budget has left.
   */
  usageReport(call: Usage, callCostUsd: number | undefined): UsageReport {
    return {
      call: { ...call },
      callCostUsd,
      run: { ...this.usage },
      runCost: { ...this.cost },
      session: this.session.usage(),
      sessionCost: this.session.cost(),
      budgetsLeft: this.left(),
    };
  }

  /** What each budget with a limit has left, never below 0; unlimited ones are absent. */
  private left(): BudgetsLeft {
    const { limits } = this;
    const figures: Array<[keyof BudgetsLeft, number | undefined, number]> = [
      ['sessionTokens', limits.maxSessionTokens, this.session.usage().totalTokens],
      ['runTokens', limits.maxRunTokens, this.usage.totalTokens],
      ['sessionCostUsd', limits.maxSessionCostUsd, this.session.cost().usd],
      ['runCostUsd', limits.maxRunCostUsd, this.cost.usd],
      ['toolTimeMs', limits.toolTimeBudgetMs, this.toolClock.elapsed()],
      ['subagents', limits.maxSubagents, this.spawns],
    ];
    const left: BudgetsLeft = {};
    for (const [name, limit, used] of figures) {
      if (isLimited(limit)) left[name] = Math.max(0, limit - used);
    }
    return left;
  }
}

/** One loop's own figures (a subagent has its own, and shares the budget). */
export class LoopState {
  turns = 0;
  /** Compactions of this loop, and the summary calls they made (CMP-6). */
  compactions = 0;
  summaryCalls = 0;
  finalText = '';
  usage: Usage = { ...emptyUsage };
  firstTtfbMs: number | undefined;
  readonly toolWallBefore: number;

  constructor(readonly budget: RunBudget) {
    this.toolWallBefore = budget.toolClock.elapsed();
  }

  /** Counts one model call of this loop, in its own figures and in the run's budget. */
  recordCall(usage: Usage, costUsd: number | undefined): void {
    this.usage = addUsage(this.usage, usage);
    this.budget.recordCall(usage, costUsd);
  }

  /** Tool wall time of this loop so far (ms). */
  toolWallMs(): number {
    return this.budget.toolClock.elapsed() - this.toolWallBefore;
  }
}
