import type { Message } from '@claw/core';

/** Default model context, in tokens (ENG-8). */
export const defaultContextWindowTokens = 128_000;
/** Tokens kept free for the model's reply. */
export const defaultReservedOutputTokens = 8_192;
/** Default cap on the number of messages in the window. */
export const defaultMaxWindowMessages = 2_000;

const perMessageOverhead = 4;
const estimates = new WeakMap<Message, number>();

/**
 * A cheap token estimate (about four characters per token, plus per-message overhead). It only
 * has to be conservative enough to keep requests inside the context; exact counts come back as
 * usage from the model.
 */
export function estimateMessageTokens(message: Message): number {
  const cached = estimates.get(message);
  if (cached !== undefined) return cached;
  let characters = message.content.length;
  if (message.role === 'assistant') {
    for (const call of message.toolCalls ?? []) {
      characters += call.name.length + call.arguments.length + call.id.length;
    }
  }
  const estimate = Math.ceil(characters / 4) + perMessageOverhead;
  estimates.set(message, estimate);
  return estimate;
}

export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The limits of `selectWindow`: the part of the history a request may carry. */
export interface WindowOptions {
  /** Token budget for the history part of the request. */
  maxTokens: number;
  maxMessages: number;
}

/**
 * The most recent part of `history` that fits the budget (ENG-8). It never starts with a tool
 * result whose assistant call was cut off, so the model never sees an orphan Observation. The
 * newest exchange (the last user or assistant message and the Observations after it) is always
 * kept, even when it alone is over budget: the model must see the results of its last calls.
 */
export function selectWindow(history: readonly Message[], options: WindowOptions): Message[] {
  let start = history.length;
  let tokens = 0;
  // The newest exchange, whatever it costs.
  while (start > 0) {
    start -= 1;
    tokens += estimateMessageTokens(history[start] as Message);
    if (history[start]?.role !== 'tool') break;
  }
  while (start > 0) {
    const cost = estimateMessageTokens(history[start - 1] as Message);
    if (history.length - start >= options.maxMessages || tokens + cost > options.maxTokens) break;
    tokens += cost;
    start -= 1;
  }
  while (start < history.length && history[start]?.role === 'tool') start += 1;
  return history.slice(start);
}
