import {
  ClawError,
  causeChain,
  compactedView,
  errorMessage,
  findErrorWithCode,
  type Compaction,
  type CompactionReason,
  type Message,
  type Usage,
} from '@claw/core';
import { estimateMessageTokens, estimateTextTokens } from './working-memory.js';

// Compaction (CMP-1 … CMP-3): when a session outgrows the model's context, old tool results are
// pruned first and, if that is not enough, the older part of the conversation is summarised by
// one model call; the user's own messages stay verbatim, and the latest steps stay whole.

/** Compact once a request would fill this share of the context window (CMP-1). */
export const defaultCompactAtRatio = 0.8;
/**
 * The share of the window the latest steps keep after a summary (CMP-2): ~30 % when the
 * threshold is passed; less after the server said a request did not fit (claw's estimate was
 * short of its count); only the last step when the user asks (`/compact`).
 */
const tailShares: Readonly<Record<CompactionReason, number>> = {
  threshold: 0.3,
  overflow: 0.15,
  manual: 0,
};
/** The most tokens of the user's own messages kept verbatim (CMP-2); a small window's quarter. */
const maxKeptUserTokens = 20_000;
/** Tool results are pruned beyond the most recent this many tokens of them (CMP-2). */
const pruneKeepTokens = 40_000;
/** A result shorter than this (characters) costs less than its stub: never pruned. */
const minPrunableChars = 600;
/**
 * Less than this to replace (tokens, or an eighth of a small window) is not worth a summary: the
 * summary itself would take about as much.
 */
const minSummarisedTokens = 800;
/** A tool result in the summary call's transcript is cut to this many characters. */
const transcriptResultChars = 2_000;

/**
 * The request would not fit the model's context even after compaction (CMP-3): the task fails
 * with this, never with a second compaction or a silent cut.
 */
export class ContextExhaustedError extends ClawError {
  declare readonly code: 'context_exhausted';
  readonly requestTokens: number;
  readonly contextWindowTokens: number;

  constructor(options: {
    requestTokens: number;
    limitTokens: number;
    contextWindowTokens: number;
    cause?: unknown;
  }) {
    super(
      'the conversation does not fit the model\'s context even after compacting it: the next ' +
      `request is about ${options.requestTokens.toLocaleString('en-US')} tokens, and at most ` +
      `${options.limitTokens.toLocaleString('en-US')} of the model's ` +
      `${options.contextWindowTokens.toLocaleString('en-US')} can be sent (the rest is kept for ` +
      'its reply). Start a new session (or /clear) with a smaller request, leave out large ' +
      'files or outputs, or, if the model has a larger context than claw assumes, say so with ' +
      '--context-window-tokens',
      { code: 'context_exhausted', cause: options.cause },
    );
    this.requestTokens = options.requestTokens;
    this.contextWindowTokens = options.contextWindowTokens;
  }
}

/** True when the model's server said the request does not fit its context (REAL-6). */
export function isContextOverflow(error: unknown): boolean {
  return findErrorWithCode(error, 'context_length_exceeded') !== undefined;
}

/**
 * The context size a server's overflow error states, in tokens, when it states one (OpenAI,
 * vLLM, DeepSeek, OpenRouter: "maximum context length is 16385 tokens"; llama.cpp: `n_ctx`).
 */
export function statedContextLimit(error: unknown): number | undefined {
  const patterns = [
    /maximum context length is ([\d,]+)/i,
    /context (?:length|size|window) (?:of|is) ([\d,]+)/i,
    /n_ctx["':\s=]+([\d,]+)/i,
  ];
  for (const item of causeChain(error)) {
    const text = item instanceof Error ? item.message : typeof item === 'string' ? item : '';
    for (const pattern of patterns) {
      const found = pattern.exec(text)?.[1];
      const value = found === undefined ? Number.NaN : Number(found.replaceAll(',', ''));
      if (Number.isSafeInteger(value) && value >= 256) return value;
    }
  }
  return undefined;
}

/** The window figures of compaction. */
export interface CompactionLimits {
  contextWindowTokens: number;
  /** Default {@link defaultCompactAtRatio}. */
  compactAtRatio: number;
  /** Tokens kept free for the model's reply. */
  reservedOutputTokens: number;
}

/** The request size above which a call compacts first (CMP-1). */
export function thresholdTokens(limits: CompactionLimits): number {
  return Math.floor(limits.contextWindowTokens * limits.compactAtRatio);
}

/**
 * The most a request may be, the reply's room set aside: its output reservation, but never more
 * than a tenth of the window (a small window must still hold a conversation).
 */
export function limitTokens(limits: CompactionLimits): number {
  const window = limits.contextWindowTokens;
  const reserve = Math.min(limits.reservedOutputTokens, Math.floor(window / 10));
  return limits.contextWindowTokens - reserve;
}

/** What one compaction works with. */
export interface CompactInput {
  history: readonly Message[];
  current: Compaction | undefined;
  reason: CompactionReason;
  limits: CompactionLimits;
  /** The size of a request that sends `view` (system prompt and tools included). */
  requestTokens: (view: readonly Message[]) => number;
  /**
   * Summarises a transcript with one model call (the caller makes it, counted and traced);
   * rejects when the call fails.
   */
  summarise: (request: SummaryRequest) => Promise<{ text: string; usage?: Usage }>;
  /** What the user asked the summary to keep (`/compact <focus>`). */
  focus?: string;
  /** Prune and summarise whatever the size (overflow, manual); else stop under the threshold. */
  force: boolean;
  /** An abort is never a failed summary: the compaction stops with it. */
  signal: AbortSignal;
}

/** The summary call's text (CMP-2): claw's instructions and the transcript to summarise. */
export interface SummaryRequest {
  system: string;
  user: string;
}

/**
 * One compaction (CMP-2): prunes old tool results, then (unless that made the request small
 * enough and nothing forces more) summarises everything but the latest ~30 % of the window,
 * keeping the user's own messages verbatim. A summary that fails leaves the older messages out
 * all the same (the user's kept) and says why in `summaryError`. Returns `undefined` when there
 * is nothing to prune or summarise.
 */
export async function compact(input: CompactInput): Promise<Compaction | undefined> {
  const { history, current, limits } = input;
  const base = current?.upTo ?? 0;
  const before = input.requestTokens(compactedView(history, current));
  const pruned = prune(history, current, limits);
  const prunedCount = pruned.size - (current?.pruned.filter((id) => pruned.has(id)).length ?? 0);
  const pruneOnly: Compaction = {
    reason: input.reason,
    upTo: base,
    kept: current?.kept ?? [],
    ...(current?.summary === undefined ? {} : { summary: current.summary }),
    pruned: [...pruned],
    tokensBefore: before,
    tokensAfter: 0,
    prunedResults: prunedCount,
    summarisedMessages: 0,
  };
  pruneOnly.tokensAfter = input.requestTokens(compactedView(history, pruneOnly));
  if (!input.force && prunedCount > 0 && pruneOnly.tokensAfter <= thresholdTokens(limits)) {
    return pruneOnly;
  }
  const tailStart = tailStartOf(history, base, pruned, limits, tailShares[input.reason]);
  let replacedTokens = 0;
  for (let index = base; index < tailStart; index += 1) {
    const message = history[index] as Message;
    // The user's own messages stay as they are: replacing them gains nothing.
    if (message.role !== 'user') replacedTokens += sizeOf(message, pruned);
  }
  const worthIt = Math.min(minSummarisedTokens, Math.floor(limits.contextWindowTokens / 8));
  if (tailStart <= base || replacedTokens < worthIt) return prunedCount > 0 ? pruneOnly : undefined;
  const kept = keptUserMessages(
    history,
    tailStart,
    Math.min(maxKeptUserTokens, Math.floor(limits.contextWindowTokens / 4)),
  );
  const tailPruned = [...pruned].filter((id) => isAtOrAfter(history, id, tailStart));
  const next: Compaction = {
    reason: input.reason,
    upTo: tailStart,
    kept,
    pruned: tailPruned,
    tokensBefore: before,
    tokensAfter: 0,
    prunedResults: prunedCount,
    summarisedMessages: tailStart - base,
  };
  try {
    const request = summaryRequest(history, current, tailStart, pruned, limits, input.focus);
    const summary = await input.summarise(request);
    const text = summary.text.trim();
    if (text === '') throw new ClawError('the model answered with an empty summary', { code: 'summary_empty' });
    next.summary = text;
    if (summary.usage !== undefined) next.usage = summary.usage;
  } catch (error) {
    if (input.signal.aborted) throw error;
    // The older summary still says what happened before it; the rest is left out.
    if (current?.summary !== undefined) next.summary = current.summary;
    next.summaryError = errorMessage(error);
  }
  next.tokensAfter = input.requestTokens(compactedView(history, next));
  return next;
}

/**
 * The calls whose results the model sees as a stub (CMP-2): those pruned before, and every
 * result since the last summary beyond the most recent ~40k tokens of them (a quarter of the
 * window when that is less). Results too short to be worth it are left, and so are the results
 * of the latest calls, however large: the model has not read them yet.
 */
function prune(
  history: readonly Message[],
  current: Compaction | undefined,
  limits: CompactionLimits,
): Set<string> {
  const base = current?.upTo ?? 0;
  const pruned = new Set(current?.pruned ?? []);
  const keep = Math.min(pruneKeepTokens, Math.floor(limits.contextWindowTokens / 4));
  // The results of the latest calls are what the model is about to read: never pruned.
  let latest = history.length - 1;
  while (latest >= 0 && history[latest]?.role !== 'assistant') latest -= 1;
  let recent = 0;
  for (let index = history.length - 1; index >= base; index -= 1) {
    const message = history[index] as Message;
    if (message.role !== 'tool' || pruned.has(message.toolCallId)) continue;
    recent += estimateMessageTokens(message);
    if (index > latest) continue;
    if (recent > keep && message.content.length >= minPrunableChars) pruned.add(message.toolCallId);
  }
  return pruned;
}

/**
 * Where the latest steps the model keeps whole start (CMP-2): the earliest message from which
 * the rest of the history fits in `share` of the window, at the start of a step (a user message,
 * or an assistant message with its results), never a tool result. At least the last step; never
 * before `base`.
 */
function tailStartOf(
  history: readonly Message[],
  base: number,
  pruned: ReadonlySet<string>,
  limits: CompactionLimits,
  share: number,
): number {
  const budget = Math.floor(limits.contextWindowTokens * share);
  let tokens = 0;
  let start = history.length;
  let index = history.length;
  while (index > base) {
    // One step: back to the message that starts it.
    let stepStart = index - 1;
    while (stepStart > base && history[stepStart]?.role === 'tool') stepStart -= 1;
    let stepTokens = 0;
    for (let at = stepStart; at < index; at += 1) {
      stepTokens += sizeOf(history[at] as Message, pruned);
    }
    if (start < history.length && tokens + stepTokens > budget) break;
    tokens += stepTokens;
    start = stepStart;
    index = stepStart;
  }
  // A step cannot start with a result whose call was before `base`.
  while (start < history.length && history[start]?.role === 'tool') start += 1;
  return start;
}

/** A message's size as the model would see it (a pruned result as its stub). */
function sizeOf(message: Message, pruned: ReadonlySet<string>): number {
  if (message.role === 'tool' && pruned.has(message.toolCallId)) return 40;
  return estimateMessageTokens(message);
}

/**
 * The user messages before `upTo` the model keeps verbatim (CMP-2): all of them while they fit
 * in `budget` tokens (~20k), else the first (the task) and the latest ones that fit.
 */
function keptUserMessages(history: readonly Message[], upTo: number, budget: number): number[] {
  const users: number[] = [];
  for (let index = 0; index < upTo; index += 1) {
    if (history[index]?.role === 'user') users.push(index);
  }
  const tokensOf = (index: number): number => estimateMessageTokens(history[index] as Message);
  const total = users.reduce((sum, index) => sum + tokensOf(index), 0);
  if (total <= budget) return users;
  const [first, ...rest] = users;
  if (first === undefined) return [];
  const kept = [first];
  let tokens = tokensOf(first);
  const latest: number[] = [];
  for (const index of rest.reverse()) {
    if (tokens + tokensOf(index) > budget) break;
    tokens += tokensOf(index);
    latest.unshift(index);
  }
  return [...kept, ...latest];
}

function isAtOrAfter(history: readonly Message[], toolCallId: string, start: number): boolean {
  for (let index = start; index < history.length; index += 1) {
    const message = history[index];
    if (message?.role === 'tool' && message.toolCallId === toolCallId) return true;
  }
  return false;
}

const summaryInstructions = `You write hand-off notes for claw, a coding agent. Its \
conversation no longer fits the model's context, so the part shown in the transcript below is \
being replaced by your notes. The agent goes on with the same task from your notes, the user's \
own messages (which it keeps, word for word) and its latest few steps. Nothing needed to finish \
the task may be lost.

Write these sections, in this order, as plain text:
Goal: what the user asked for, in their terms, and every constraint they set.
Done so far: the steps taken and what came of them, in order.
Decisions: what was chosen and why, and what was ruled out.
Files: each file read, created or changed, with what matters about it (names, line numbers, \
what changed and why).
Verified: what was run or checked, and the result.
Errors: error messages that still matter, quoted exactly.
Remaining: what is left to do, the next step first.

Be concrete and brief: names, paths, numbers and exact messages rather than descriptions of \
them. Write only what the transcript shows. Keep it under about 600 words.`;

/**
 * The summary call's request (CMP-2): claw's instructions, the older summary (if any) and the
 * messages being replaced as a transcript, newest kept when it must be cut to fit.
 */
function summaryRequest(
  history: readonly Message[],
  current: Compaction | undefined,
  tailStart: number,
  pruned: ReadonlySet<string>,
  limits: CompactionLimits,
  focus: string | undefined,
): SummaryRequest {
  const system = focus === undefined || focus.trim() === ''
    ? summaryInstructions
    : `${summaryInstructions}\n\nThe user asked the notes to keep in particular: ${focus.trim()}`;
  // Room for the instructions, the reply and the wrapping, out of what a request may be.
  const budget = Math.max(
    1_000,
    limitTokens(limits) - estimateTextTokens(system) -
    Math.floor(limits.contextWindowTokens / 5) - 200,
  );
  // The part being replaced, as the model saw it (pruned results as their stubs).
  const replaced = compactedView(history.slice(current?.upTo ?? 0, tailStart), {
    reason: 'manual',
    upTo: 0,
    kept: [],
    pruned: [...pruned],
    tokensBefore: 0,
    tokensAfter: 0,
    prunedResults: 0,
    summarisedMessages: 0,
  });
  const names = new Map<string, string>();
  const lines: string[] = [];
  for (const message of replaced) {
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) names.set(call.id, call.name);
    lines.push(transcriptLine(message, names));
  }
  const kept: string[] = [];
  let tokens = 0;
  for (const line of lines.reverse()) {
    const size = estimateTextTokens(line);
    if (tokens + size > budget) {
      kept.unshift('[earlier messages left out: the transcript was too long to summarise at once]');
      break;
    }
    tokens += size;
    kept.unshift(line);
  }
  const earlier = current?.summary === undefined
    ? ''
    : `<earlier-summary>\n${current.summary}\n</earlier-summary>\n\n`;
  const users = (current?.kept ?? [])
    .map((index) => history[index])
    .filter((message): message is Message => message !== undefined)
    .map((message) => `[user] ${message.content}`);
  const keptUsers = users.length === 0
    ? ''
    : `<user-messages-kept-verbatim>\n${users.join('\n\n')}\n</user-messages-kept-verbatim>\n\n`;
  return {
    system,
    user: `${keptUsers}${earlier}<transcript>\n${kept.join('\n\n')}\n</transcript>\n\n` +
      'Write the hand-off notes now.',
  };
}

function transcriptLine(message: Message, names: ReadonlyMap<string, string>): string {
  switch (message.role) {
    case 'system':
    case 'user':
      return `[${message.role}] ${message.content}`;
    case 'assistant': {
      const calls = (message.toolCalls ?? []).map((call) => `[tool call ${call.name}] ${call.arguments}`);
      return [message.content === '' ? '' : `[assistant] ${message.content}`, ...calls]
        .filter((line) => line !== '')
        .join('\n');
    }
    case 'tool': {
      const name = names.get(message.toolCallId) ?? 'tool';
      const content = message.content.length > transcriptResultChars
        ? `${message.content.slice(0, transcriptResultChars / 2)}\n[… cut …]\n${message.content.slice(-transcriptResultChars / 2)}`
        : message.content;
      return `[${name} result${message.isError === true ? ', an error' : ''}] ${content}`;
    }
  }
}
