import type { Message, ToolCall, ToolMessage, Usage } from './messages.js';

/** Why a conversation was compacted (CMP-5). */
export const compactionReasons = ['threshold', 'overflow', 'manual'] as const;
export type CompactionReason = (typeof compactionReasons)[number];

/**
 * How the model sees a session's conversation once it was compacted (CMP-2, CMP-4). The whole
 * history stays stored; the model is sent {@link compactedView} of it: the user messages listed
 * in `kept` verbatim, then `summary` in place of everything else before `upTo`, then the history
 * from `upTo` on, where the results of the `pruned` calls are a short stub. Each compaction holds
 * the whole view (it is not a change to the one before), so the latest one is all a reader needs.
 */
export interface Compaction {
  reason: CompactionReason;
  /** History messages before this index are replaced (0: none, only results were pruned). */
  upTo: number;
  /** Indices (before `upTo`) of the user messages the model still sees, verbatim, in order. */
  kept: number[];
  /**
   * What the replaced messages did, as a model summarised them. Absent when nothing was
   * summarised, or the summary could not be made (the messages are then simply left out).
   */
  summary?: string;
  /** Ids of the tool calls (from `upTo` on) whose results the model sees as a stub. */
  pruned: string[];
  /** The request's size before and after, in tokens (estimated). */
  tokensBefore: number;
  tokensAfter: number;
  /** Results this compaction pruned (not those pruned before it). */
  prunedResults: number;
  /** Messages this compaction summarised (or left out when the summary failed). */
  summarisedMessages: number;
  /** Why the summary could not be made, when it was tried and failed. */
  summaryError?: string;
  /** The summary call's tokens, when one was made. */
  usage?: Usage;
}

const utf8 = new TextEncoder();

/** The text the model sees in place of a pruned tool result (CMP-2). */
export function prunedResultText(call: ToolCall | undefined, result: ToolMessage): string {
  const size = formatSize(utf8.encode(result.content).length);
  const what = call === undefined ? 'a tool call' : `${call.name}${describeArguments(call)}`;
  return `[output of ${what} (${size}) removed to save context; run it again if needed]`;
}

/** The message that stands for the replaced part of the conversation (CMP-2). */
export function summaryMessage(compaction: Compaction): Message {
  if (compaction.summary === undefined) {
    return {
      role: 'user',
      content:
        "[claw: the earlier part of this conversation was left out to fit the model's context " +
        "(it could not be summarised). The user's own messages above are kept verbatim. Read " +
        'again whatever files you need.]',
    };
  }
  return {
    role: 'user',
    content:
      '[claw: the earlier part of this conversation was replaced by this summary to fit the ' +
      "model's context. The user's own messages above are kept verbatim; the work so far is " +
      'summarised below. Read again whatever files you need.]\n\n' +
      `<summary>\n${compaction.summary.trim()}\n</summary>`,
  };
}

/**
 * What the model is sent of `history` under `compaction` (CMP-2): the kept user messages, the
 * summary, then the messages from `upTo` on with pruned results stubbed. Without a compaction,
 * the history itself. Pure: the same inputs always give equal messages.
 */
export function compactedView(
  history: readonly Message[],
  compaction: Compaction | undefined,
): Message[] {
  if (compaction === undefined) return [...history];
  const view: Message[] = [];
  if (compaction.upTo > 0) {
    for (const index of compaction.kept) {
      const message = history[index];
      if (message !== undefined && index < compaction.upTo) view.push(message);
    }
    view.push(summaryMessage(compaction));
  }
  const pruned = prunedIds(compaction);
  const calls = new Map<string, ToolCall>();
  for (let index = compaction.upTo; index < history.length; index++) {
    const message = history[index] as Message;
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) calls.set(call.id, call);
    if (message.role === 'tool' && pruned.has(message.toolCallId)) {
      view.push(prunedResult(calls.get(message.toolCallId), message));
    } else {
      view.push(message);
    }
  }
  return view;
}

/** The ids of a compaction's pruned calls, as a set made once per compaction. */
const prunedSets = new WeakMap<Compaction, ReadonlySet<string>>();

function prunedIds(compaction: Compaction): ReadonlySet<string> {
  let set = prunedSets.get(compaction);
  if (set === undefined) {
    set = new Set(compaction.pruned);
    prunedSets.set(compaction, set);
  }
  return set;
}

/**
 * The stub of each pruned result, made once: every request of a long session sends the view
 * again, and the same message object each time keeps the per-message token estimate cached too.
 */
const stubs = new WeakMap<ToolMessage, { call: ToolCall | undefined; stub: ToolMessage }>();

function prunedResult(call: ToolCall | undefined, result: ToolMessage): ToolMessage {
  const known = stubs.get(result);
  if (known !== undefined && known.call === call) return known.stub;
  const stub: ToolMessage = { ...result, content: prunedResultText(call, result) };
  stubs.set(result, { call, stub });
  return stub;
}

/**
 * The compaction after `count` messages were inserted at `index` of the history (orphan repair):
 * the indices it holds move with the messages they name.
 */
export function shiftCompaction(compaction: Compaction, index: number, count: number): Compaction {
  if (index >= compaction.upTo) return compaction;
  return {
    ...compaction,
    upTo: compaction.upTo + count,
    kept: compaction.kept.map((kept) => (kept >= index ? kept + count : kept)),
  };
}

/** ` "npm test"`, ` src/main.ts`: what a call was about, briefly. */
function describeArguments(call: ToolCall): string {
  let args: unknown;
  try {
    args = JSON.parse(call.arguments);
  } catch {
    return '';
  }
  if (typeof args !== 'object' || args === null) return '';
  const record = args as Record<string, unknown>;
  const value = record.command ?? record.path ?? record.url ?? record.query;
  if (typeof value !== 'string' || value === '') return '';
  const short = value.length > 80 ? `${value.slice(0, 79)}…` : value;
  return ` ${JSON.stringify(short)}`;
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const kb = bytes / 1024;
  return `${kb < 10 ? kb.toFixed(1) : Math.round(kb)} KB`;
}
