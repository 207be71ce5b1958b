import type { AssistantMessage, Message, Usage } from './messages.js';
import type { ToolDefinition } from './tools.js';

/** One model call (CORE-3). */
export interface ModelRequest {
  messages: Message[];
  tools?: ToolDefinition[];
  /** Overrides the provider's configured model for this call. */
  model?: string;
  temperature?: number;
  maxOutputTokens?: number;
}

export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'other';

export interface ModelResponse {
  message: AssistantMessage;
  /** Absent when the server did not report usage. */
  usage?: Usage;
  finishReason?: FinishReason;
  /** The model that answered, as the server named it. */
  model?: string;
}

/**
 * What a streaming call yields. A failure is not an event: the iterator rejects with the error
 * (CORE-3's "error event"), so a consumer handles failure in exactly one place.
 */
export type StreamEvent =
  | { type: 'text_delta'; delta: string }
  /**
   * A piece of the model's reasoning, streamed apart from the answer (REAL-4); it is not part of
   * the answer's text.
   */
  | { type: 'reasoning_delta'; delta: string }
  /** A piece of a tool call; `id` and `name` come with the first piece of each index. */
  | { type: 'tool_call_delta'; index: number; id?: string; name?: string; argumentsDelta: string }
  /** The last event: the whole assistant message with its tool calls and usage. */
  | { type: 'completed'; response: ModelResponse };

export interface CallOptions {
  /** Aborting ends the call at once; the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * A provider that tries a failed call again tells this before it waits, so that the caller can
   * say so: a model that fails or stalls is otherwise silence for as long as the attempts take.
   */
  onRetry?: (retry: ModelRetry) => void;
}

/** A failed attempt of a model call that is tried again (`CallOptions.onRetry`). */
export interface ModelRetry {
  /** The attempt that failed, counting from 1; the next one is `attempt + 1`. */
  attempt: number;
  /** Attempts in all, the first one included. */
  attempts: number;
  /** How long the provider waits before the next attempt, in milliseconds. */
  delayMs: number;
  /** Why the attempt failed. */
  error: unknown;
}

/**
 * A chat model (CORE-3). `generate` is required; `stream` is optional, and a provider without it
 * still works (the engine falls back to `generate`). Breaking out of a stream's iteration, or
 * aborting its signal, must end the underlying request.
 */
export interface Provider {
  /** Short name for logs and spans, e.g. `"openai"`. */
  readonly name: string;
  generate(request: ModelRequest, options?: CallOptions): Promise<ModelResponse>;
  stream?(request: ModelRequest, options?: CallOptions): AsyncIterable<StreamEvent>;
}
