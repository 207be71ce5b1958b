import type {
  FinishReason,
  Message,
  ModelRequest,
  ToolCall,
  ToolDefinition,
  Usage,
} from '@claw/core';
import type {
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';

/** The wire form of a message, with what it was made from (to see a message changed since). */
interface Converted {
  content: string;
  toolCalls: readonly ToolCall[] | undefined;
  toolCallCount: number;
  wire: ChatCompletionMessageParam;
}

const converted = new WeakMap<Message, Converted>();

/**
 * claw messages → Chat Completions messages. A message is converted once and its wire form
 * reused by every later request that sends it (a run sends its whole history each turn); one
 * whose content or tool calls were changed since is converted again.
 */
export function toChatMessages(messages: readonly Message[]): ChatCompletionMessageParam[] {
  return messages.map((message): ChatCompletionMessageParam => {
    const toolCalls = message.role === 'assistant' ? message.toolCalls : undefined;
    const toolCallCount = toolCalls?.length ?? 0;
    const known = converted.get(message);
    if (
      known !== undefined &&
      known.content === message.content &&
      known.toolCalls === toolCalls &&
      known.toolCallCount === toolCallCount
    ) {
      return known.wire;
    }
    const wire = toChatMessage(message);
    converted.set(message, { content: message.content, toolCalls, toolCallCount, wire });
    return wire;
  });
}

/**
 * One message on the wire. Only the fields named here are sent: an assistant message's
 * `reasoning` (REAL-4) stays in the session and never goes back to the server (DeepSeek rejects a
 * request whose history carries `reasoning_content`).
 */
function toChatMessage(message: Message): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'assistant': {
      const toolCalls = message.toolCalls ?? [];
      if (toolCalls.length === 0) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        // Some servers reject an empty string next to tool calls; null is what the API sends.
        content: message.content === '' ? null : message.content,
        tool_calls: toolCalls.map((call) => ({
          id: call.id,
          type: 'function' as const,
          function: { name: call.name, arguments: call.arguments },
        })),
      };
    }
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}

export function toChatTools(tools: readonly ToolDefinition[] | undefined): ChatCompletionTool[] {
  return (tools ?? []).map((tool) => ({
    type: 'function' as const,
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
}

/** The body fields shared by streaming and non-streaming calls. */
export function requestBody(request: ModelRequest, defaultModel: string) {
  const tools = toChatTools(request.tools);
  return {
    model: request.model ?? defaultModel,
    messages: toChatMessages(request.messages),
    ...(tools.length > 0 ? { tools } : {}),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.maxOutputTokens === undefined
      ? {}
      : { max_completion_tokens: request.maxOutputTokens }),
  };
}

/**
 * Usage fields some servers add (REAL-5) that the SDK's type does not declare, or declares
 * narrower than servers send them: OpenAI's `prompt_tokens_details` (vLLM sends `null`) and
 * DeepSeek's top-level `prompt_cache_hit_tokens`.
 */
interface UsageExtras {
  prompt_tokens_details?: { cached_tokens?: unknown } | null;
  prompt_cache_hit_tokens?: unknown;
}

function tokenCount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/**
 * A server's usage in claw's terms. `cachedPromptTokens` (the part of the prompt read from the
 * server's prompt cache) comes from `prompt_tokens_details.cached_tokens`, else from DeepSeek's
 * `prompt_cache_hit_tokens`; it is absent when the server reported neither.
 */
export function fromUsage(usage: CompletionUsage | null | undefined): Usage | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const extras = usage as UsageExtras;
  const promptTokens = tokenCount(usage.prompt_tokens) ?? 0;
  const completionTokens = tokenCount(usage.completion_tokens) ?? 0;
  const cached =
    tokenCount(extras.prompt_tokens_details?.cached_tokens) ??
    tokenCount(extras.prompt_cache_hit_tokens);
  return {
    promptTokens,
    completionTokens,
    totalTokens: tokenCount(usage.total_tokens) ?? promptTokens + completionTokens,
    ...(cached === undefined ? {} : { cachedPromptTokens: cached }),
  };
}

export function fromFinishReason(reason: string | null | undefined): FinishReason | undefined {
  switch (reason) {
    case null:
    case undefined:
      return undefined;
    case 'stop':
    case 'tool_calls':
    case 'length':
    case 'content_filter':
      return reason;
    default:
      return 'other';
  }
}

/** Function tool calls of a non-streaming reply (other kinds are not claw tools). */
export function fromToolCalls(
  calls: readonly ChatCompletionMessageToolCall[] | undefined,
): ToolCall[] {
  const result: ToolCall[] = [];
  for (const call of calls ?? []) {
    if (call.type !== 'function') continue;
    result.push({ id: call.id, name: call.function.name, arguments: call.function.arguments });
  }
  return result;
}
