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
}

export const emptyUsage: Readonly<Usage> = Object.freeze({
  promptTokens: 0,
  completionTokens: 0,
  totalTokens: 0,
});

export function addUsage(a: Usage, b: Usage | undefined): Usage {
  if (b === undefined) return { ...a };
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
}
