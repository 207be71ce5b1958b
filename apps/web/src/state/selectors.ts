// Texts the page shows for a state (the e2e tests read some of them, keep them stable).
import { describeCost, promptTitle, type InstructionFile } from '@claw/channel/protocol';
import type {
  CompactionItem,
  ConnectionStatus,
  ElicitationAction,
  Figures,
  RunState,
  SessionView,
  ThinkingItem,
} from './types.js';

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

/**
 * The session's tokens, `18,204 (12,800 cached) (last task 2,500)`: the cached part (prompt tokens
 * the server read from its cache, REAL-5) only when there was some.
 */
export function formatTokens(figures: Figures): string {
  if (figures.sessionTokens === undefined) return '—';
  const cachedTokens = figures.sessionCachedTokens ?? 0;
  const cached = cachedTokens > 0 ? ` (${count(cachedTokens)} cached)` : '';
  const run = figures.runTokens === undefined ? '' : ` (last task ${count(figures.runTokens)})`;
  return `${count(figures.sessionTokens)}${cached}${run}`;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

function plural(n: number, noun: string): string {
  return `${count(n)} ${noun}${n === 1 ? '' : 's'}`;
}

/**
 * The one line a folded thinking block shows: `thinking… (1,234 characters)` while the model
 * reasons, `thought (12 lines)` once it is done.
 */
export function thinkingSummaryText(item: Pick<ThinkingItem, 'text' | 'streaming'>): string {
  if (item.streaming) {
    // Characters as people count them (by code point: an emoji is one, not two).
    return `thinking… (${plural(Array.from(item.text).length, 'character')})`;
  }
  return `thought (${plural(item.text.trimEnd().split('\n').length, 'line')})`;
}

/**
 * The divider's line where the conversation was compacted (CMP-5): `context compacted
 * (threshold): 15,200 → 6,100 tokens · 12 old tool results pruned · 40 messages summarised`
 * (`left out` for messages whose summary failed). Rebuilt from a history, which keeps no figures,
 * it says what the model sees of the conversation above instead.
 */
export function compactionText(item: Pick<CompactionItem, 'figures' | 'summary' | 'error'>): string {
  const { figures } = item;
  if (figures === undefined) {
    return item.summary === undefined
      ? 'context compacted: the model no longer sees the conversation above, only your messages in it'
      : 'context compacted: the model sees the conversation above only as a summary, and your messages in it';
  }
  const parts = [
    `context compacted (${figures.reason}): ${count(figures.tokensBefore)} → ${count(figures.tokensAfter)} tokens`,
  ];
  if (figures.prunedResults > 0) parts.push(`${plural(figures.prunedResults, 'old tool result')} pruned`);
  if (figures.summarisedMessages > 0) {
    parts.push(`${plural(figures.summarisedMessages, 'message')} ${item.error === undefined ? 'summarised' : 'left out'}`);
  }
  return parts.join(' · ');
}

/**
 * The project instructions the model is given (REAL-2), in one line: `instructions: AGENTS.md
 * (1.2 KB), sub/AGENTS.md (300 B) (cut)`, where `(cut)` marks a file only the start of which fit;
 * undefined when there are none.
 */
export function instructionsText(
  files: readonly InstructionFile[] | undefined,
): string | undefined {
  if (files === undefined || files.length === 0) return undefined;
  const listed = files.map(
    (file) => `${file.path} (${formatBytes(file.bytes)})${file.truncated === true ? ' (cut)' : ''}`,
  );
  return `instructions: ${listed.join(', ')}`;
}

/** A size in bytes as people read it: `300 B`, `1.2 KB`, `32 KB`, `1.5 MB` (1 KB = 1,024 B). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  // One decimal while it says something (1.2 KB), none from 10 up (32 KB).
  const shown = value < 9.95 ? value.toFixed(1) : Math.round(value).toString();
  return `${shown} ${units[unit]}`;
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

/** How a request for input ended, in words: `by` is who answered, or why nobody did. */
export function elicitationOutcomeText(action: ElicitationAction, by: string): string {
  if (by === 'timeout') return 'declined: nobody answered in time';
  if (by === 'nobody') return 'declined: nobody could be asked';
  if (by === 'canceled') return 'withdrawn';
  const verb = action === 'accept' ? 'answered' : action === 'decline' ? 'declined' : 'dismissed';
  return `${verb} by ${by}`;
}
