// Texts the page shows for a state (the e2e tests read some of them, keep them stable).
import { describeCost, promptTitle } from '@claw/channel/protocol';
import type { ConnectionStatus, Figures, RunState, SessionView } from './types.js';

export function runStateText(state: RunState): string {
  return state === 'awaiting_approval' ? 'awaiting approval' : state;
}

/**
 * A session's title in the list: the first line of its first prompt, as the server listed it, or
 * (a session begun in this page since) as its transcript here holds it; undefined before any.
 */
export function sessionTitleText(view: SessionView): string | undefined {
  if (view.listing.title !== undefined) return view.listing.title;
  const first = view.items.find((item) => item.kind === 'user');
  return first === undefined ? undefined : promptTitle(first.text);
}

/** The list's state of a session: live when it is open, what the server listed otherwise. */
export function listStateText(connection: ConnectionStatus, view: SessionView): string {
  if (connection !== 'connected') return 'disconnected';
  return runStateText(view.status === 'open' ? view.runState : view.listing.state);
}

/** The task's state: running or waiting, else how the last task ended (until the next). */
export function taskStateText(view: SessionView): string {
  if (view.runState !== 'idle') return runStateText(view.runState);
  return view.lastEnd ?? 'idle';
}

/** The panel's own link state (WEB-4: connection status per session). */
export function linkText(connection: ConnectionStatus, view: SessionView): string {
  if (connection !== 'connected') return 'disconnected';
  return view.status === 'open' ? 'live' : 'opening';
}

export function canInterrupt(connection: ConnectionStatus, view: SessionView): boolean {
  return connection === 'connected' && view.status === 'open' && view.runState !== 'idle';
}

export function formatTokens(figures: Figures): string {
  if (figures.sessionTokens === undefined) return '—';
  const run = figures.runTokens === undefined ? '' : ` (last task ${figures.runTokens.toLocaleString('en-US')})`;
  return `${figures.sessionTokens.toLocaleString('en-US')}${run}`;
}

/** Dollars, or `unpriced` when calls had no price and nothing was priced. */
export function formatCost(figures: Figures): string {
  const usd = figures.sessionCostUsd;
  if (usd === undefined) return '—';
  return describeCost(usd, figures.unpricedCalls ?? 0);
}

export function formatTtft(figures: Figures): string {
  const ms = figures.ttftMs;
  if (ms === undefined) return '—';
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

const budgetNames: Record<string, string> = {
  session_tokens: 'session tokens',
  run_tokens: 'task tokens',
  session_cost_usd: 'session $',
  run_cost_usd: 'task $',
  tool_time_ms: 'tool time',
  subagents: 'subagents',
};

/** "session tokens 199,000 · tool time 118 s" — the budgets that have a limit. */
export function formatBudgets(figures: Figures): string {
  const left = figures.budgetsLeft;
  if (left === undefined) return '—';
  const entries = Object.entries(left) as Array<[string, number | undefined]>;
  const parts = entries.flatMap(([name, value]) => {
    if (value === undefined) return [];
    const label = budgetNames[name] ?? name;
    if (name === 'tool_time_ms') return [`${label} ${Math.floor(value / 1000)} s`];
    if (name.endsWith('_usd')) return [`${label}${value.toFixed(2)}`];
    return [`${label} ${Math.floor(value).toLocaleString('en-US')}`];
  });
  return parts.length === 0 ? 'no limits' : parts.join(' · ');
}
