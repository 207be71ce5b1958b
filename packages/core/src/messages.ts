import { z } from 'zod';

/** One tool call the model asked for (CORE-1). `arguments` is the raw JSON text the model sent. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface SystemMessage {
  role: 'system';
  content: string;
}

export interface UserMessage {
  role: 'user';
  content: string;
}

export interface AssistantMessage {
  role: 'assistant';
  /** The text of the reply; empty when the reply is only tool calls. */
  content: string;
  toolCalls?: ToolCall[];
  /**
   * What the model reasoned before this reply, as the server streamed it apart from the answer
   * (`reasoning_content`, `reasoning`; REAL-4). Kept in the session for people to read; never
   * sent back to the model.
   */
  reasoning?: string;
}

/** The Observation for one tool call: the tool's output (or error) paired by `toolCallId`. */
export interface ToolMessage {
  role: 'tool';
  toolCallId: string;
  content: string;
  /** True when the content reports a failure (denied, invalid arguments, tool error, canceled). */
  isError?: boolean;
}

export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage;
export type Role = Message['role'];

export const toolCallSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
});

export const messageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string() }),
  z.object({ role: z.literal('user'), content: z.string() }),
  z.object({
    role: z.literal('assistant'),
    content: z.string(),
    toolCalls: z.array(toolCallSchema).optional(),
    reasoning: z.string().optional(),
  }),
  z.object({
    role: z.literal('tool'),
    toolCallId: z.string().min(1),
    content: z.string(),
    isError: z.boolean().optional(),
  }),
]);

// Compile-time proof that the schema and the interfaces describe the same data.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const messageSchemaMatches: Same<z.infer<typeof messageSchema>, Message> = true;
void messageSchemaMatches;

/** Token counts of one model call, or the sum of several. */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /**
   * Of `promptTokens`, those the server read from its prompt cache (REAL-5), priced at the cached
   * input price. Absent when the server did not say (then none are counted as cached).
   */
  cachedPromptTokens?: number;
}

export const emptyUsage: Readonly<Usage> = Object.freeze({
  promptTokens: 0,
  completionTokens: 0,
  totalTokens: 0,
});

export function addUsage(a: Usage, b: Usage | undefined): Usage {
  if (b === undefined) return { ...a };
  const sum: Usage = {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
  // Only where a server said so: a sum of calls that never reported cached tokens has none.
  if (a.cachedPromptTokens !== undefined || b.cachedPromptTokens !== undefined) {
    sum.cachedPromptTokens = (a.cachedPromptTokens ?? 0) + (b.cachedPromptTokens ?? 0);
  }
  return sum;
}

/** Tool calls of one assistant message that have no Observation (see {@link findUnpairedCalls}). */
export interface UnpairedCalls {
  /** Index of the assistant message that made the calls. */
  assistantIndex: number;
  /**
   * Where their Observations belong: right after the assistant message and the Observations
   * directly following it (the index of the next message that is not an Observation).
   */
  before: number;
  /** The calls without an Observation, in call order. */
  calls: ToolCall[];
}

/**
 * Every assistant tool call that has no Observation, grouped by the assistant message that made
 * it, oldest first. A call's Observation is looked for between its assistant message and the next
 * assistant message (providers may reuse ids across turns). Both the engine (pairing calls of a
 * run that stopped, ENG-5) and the session store's repair (SES-7) use this one definition.
 */
export function findUnpairedCalls(history: readonly Message[]): UnpairedCalls[] {
  const gaps: UnpairedCalls[] = [];
  let index = 0;
  while (index < history.length) {
    const assistantIndex = index;
    const message = history[index];
    index += 1;
    if (message?.role !== 'assistant' || message.toolCalls === undefined) continue;
    let end = index;
    while (end < history.length && history[end]?.role !== 'assistant') end += 1;
    const answered = new Set<string>();
    for (let at = index; at < end; at += 1) {
      const later = history[at];
      if (later?.role === 'tool') answered.add(later.toolCallId);
    }
    let before = index;
    while (before < end && history[before]?.role === 'tool') before += 1;
    const calls: ToolCall[] = [];
    for (const call of message.toolCalls) {
      if (answered.has(call.id)) continue;
      answered.add(call.id);
      calls.push(call);
    }
    if (calls.length > 0) gaps.push({ assistantIndex, before, calls });
    index = end;
  }
  return gaps;
}

/** The longest title {@link promptTitle} gives, in characters. */
export const maxTitleChars = 80;

/**
 * A title for what a prompt asks: its first line that is not blank, trimmed, cut to
 * {@link maxTitleChars} (with `…`); undefined when the prompt is blank.
 */
export function promptTitle(prompt: string): string | undefined {
  const line = prompt.split('\n').map((each) => each.trim()).find((each) => each !== '');
  if (line === undefined) return undefined;
  const chars = [...line];
  return chars.length <= maxTitleChars ? line : `${chars.slice(0, maxTitleChars - 1).join('')}…`;
}

/** A session's title: that of its first prompt (the first user message); undefined when none. */
export function sessionTitle(messages: readonly (Message | undefined)[]): string | undefined {
  for (const message of messages) {
    if (message?.role === 'user') return promptTitle(message.content);
  }
  return undefined;
}
