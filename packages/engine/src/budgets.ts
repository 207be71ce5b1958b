import { ClawError, type Usage } from '@claw/core';

/**
 * Limits of one run (BUD-1..BUD-5). A limit ≤ 0 or absent means unlimited. Token and cost limits
 * stop the *next* model call: a reply that reaches a limit still counts, and the run stops before
 * asking again.
 */
export interface BudgetOptions {
  /** Prompt + completion tokens over the session's whole life (BUD-1). */
  maxSessionTokens?: number;
  /** Prompt + completion tokens of this run, subagents included (BUD-2). */
  maxRunTokens?: number;
  /** `spawn_subagent` calls per run (BUD-3). */
  maxSubagents?: number;
  /** Wall time of tool execution per run, parallel calls counted once (BUD-4). */
  toolTimeBudgetMs?: number;
  /** US dollars over the session's life (BUD-5). */
  maxSessionCostUsd?: number;
  /** US dollars for this run (BUD-5). */
  maxRunCostUsd?: number;
}

/** Which budget of `BudgetOptions` stopped a run: the `budget` of a `BudgetExceededError`. */
export type BudgetName =
  | 'session_tokens'
  | 'run_tokens'
  | 'subagents'
  | 'tool_time'
  | 'session_cost'
  | 'run_cost';

const descriptions: Record<BudgetName, { code: string; text: string }> = {
  session_tokens: { code: 'session_token_budget_exceeded', text: 'session token budget exceeded' },
  run_tokens: { code: 'run_token_budget_exceeded', text: 'run token budget exceeded' },
  subagents: { code: 'subagent_budget_exceeded', text: 'subagent budget exceeded' },
  tool_time: { code: 'tool_time_budget_exceeded', text: 'tool time budget exceeded' },
  session_cost: { code: 'session_cost_budget_exceeded', text: 'session cost budget exceeded' },
  run_cost: { code: 'run_cost_budget_exceeded', text: 'run cost budget exceeded' },
};

/** A budget stopped the run (or a spawn). `code` names which one. */
export class BudgetExceededError extends ClawError {
  readonly budget: BudgetName;
  readonly limit: number;
  readonly used: number;

  constructor(budget: BudgetName, limit: number, used: number) {
    const { code, text } = descriptions[budget];
    super(`${text}: used ${formatAmount(budget, used)} of ${formatAmount(budget, limit)}`, {
      code,
    });
    this.budget = budget;
    this.limit = limit;
    this.used = used;
  }
}

function formatAmount(budget: BudgetName, value: number): string {
  if (budget === 'tool_time') return `${Math.round(value)} ms`;
  if (budget === 'session_cost' || budget === 'run_cost') return `$${value.toFixed(4)}`;
  if (budget === 'subagents') return `${value} spawns`;
  return `${value} tokens`;
}

export function isLimited(limit: number | undefined): limit is number {
  return limit !== undefined && limit > 0;
}

/** What the budgets are checked against before a model call. */
export interface BudgetFigures {
  sessionUsage: Usage;
  runUsage: Usage;
  sessionCostUsd: number | undefined;
  runCostUsd: number;
  toolTimeMs: number;
  toolTimeExhausted: boolean;
}

/** The first budget the figures reach, checked before a model call; undefined when none. */
export function exceededBudget(
  limits: BudgetOptions,
  figures: BudgetFigures,
): BudgetExceededError | undefined {
  const checks: Array<[BudgetName, number | undefined, number | undefined]> = [
    ['session_tokens', limits.maxSessionTokens, figures.sessionUsage.totalTokens],
    ['run_tokens', limits.maxRunTokens, figures.runUsage.totalTokens],
    ['session_cost', limits.maxSessionCostUsd, figures.sessionCostUsd],
    ['run_cost', limits.maxRunCostUsd, figures.runCostUsd],
  ];
  for (const [name, limit, used] of checks) {
    if (isLimited(limit) && used !== undefined && used >= limit) {
      return new BudgetExceededError(name, limit, used);
    }
  }
  if (isLimited(limits.toolTimeBudgetMs) && figures.toolTimeExhausted) {
    return new BudgetExceededError('tool_time', limits.toolTimeBudgetMs, figures.toolTimeMs);
  }
  return undefined;
}
