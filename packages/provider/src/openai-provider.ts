import {
  ClawError,
  abortReason,
  linkAbortSignal,
  throwIfAborted,
  type CallOptions,
  type ModelRequest,
  type ModelResponse,
  type Provider,
  type StreamEvent,
} from '@claw/core';
import OpenAI from 'openai';
import { fromFinishReason, fromToolCalls, fromUsage, requestBody } from './convert.js';
import { NetworkError, serverReportedError, translateError } from './errors.js';
import { guardFetch } from './fetch-guard.js';
import { reasoningOf } from './reasoning.js';
import { StreamAssembler } from './stream-assembler.js';

export interface OpenAIProviderOptions {
  /** API key. Required; local servers that need none accept any non-empty string. */
  apiKey: string;
  /** Model used when a request names none. */
  model: string;
  /** Base URL of an OpenAI-compatible API, e.g. `http://127.0.0.1:8000/v1`. Default: OpenAI's. */
  baseURL?: string;
  /** Extra HTTP headers sent with every request. */
  headers?: Record<string, string>;
  /**
   * A `fetch` implementation for the client (proxies, tests). Default: the global `fetch`. It is
   * used as given, wrapped only to read error replies that real servers send (see
   * `OpenAIProvider`).
   */
  fetch?: typeof globalThis.fetch;
}

const openAIBaseURL = 'https://api.openai.com/v1';

/**
 * A provider for any OpenAI-compatible Chat Completions API (PRV-1), on the official `openai`
 * client. The client's own retries are off: retrying is the job of `RetryingProvider`, which the
 * app wraps around this one. Every failure is translated into claw's errors (`HttpError`,
 * `ContextLengthExceededError`, `NetworkError`, `ModelServerError`, `ClawError`); an abort
 * rejects with the signal's reason.
 *
 * It reads what real servers send (REAL-4, REAL-5, REAL-6): reasoning under any of its field
 * names (as `reasoning_delta` events and `message.reasoning`), cached prompt tokens, an `error`
 * object sent mid-stream or as a 200 reply, and tool-call pieces without an index.
 */
export class OpenAIProvider implements Provider {
  readonly name = 'openai';
  readonly model: string;
  /** For non-streaming calls. */
  private readonly client: OpenAI;
  /** For streams: its `fetch` also turns a 200 JSON error reply into an SSE error event. */
  private readonly streamClient: OpenAI;

  /** @throws ClawError `config_invalid` when the API key or the model is empty. */
  constructor(options: OpenAIProviderOptions) {
    if (options.apiKey.trim() === '') {
      throw new ClawError('the OpenAI provider needs an API key; none was given', {
        code: 'config_invalid',
      });
    }
    if (options.model.trim() === '') {
      throw new ClawError('the OpenAI provider needs a model name; none was given', {
        code: 'config_invalid',
      });
    }
    this.model = options.model;
    const clientOptions = {
      apiKey: options.apiKey,
      // Always explicit: the SDK would otherwise read OPENAI_BASE_URL itself, and only the app
      // edge may read the environment.
      baseURL: options.baseURL ?? openAIBaseURL,
      organization: null,
      project: null,
      maxRetries: 0,
      // Timeouts are claw's (PRV-5); the SDK's 10-minute default must never fire first.
      timeout: 24 * 60 * 60 * 1000,
      ...(options.headers === undefined ? {} : { defaultHeaders: options.headers }),
    };
    this.client = new OpenAI({ ...clientOptions, fetch: guardFetch(options.fetch, 'json') });
    this.streamClient = new OpenAI({ ...clientOptions, fetch: guardFetch(options.fetch, 'stream') });
  }

  /**
   * One whole reply, without streaming; `message.reasoning` holds the reasoning when the server
   * sent any (`reasoning_content` or `reasoning`).
   *
   * @throws ModelServerError or ContextLengthExceededError when the server answers 200 with an
   * `error` object instead of a completion.
   * @throws ClawError `invalid_response` when the completion has no choices.
   */
  async generate(request: ModelRequest, options: CallOptions = {}): Promise<ModelResponse> {
    const { signal } = options;
    throwIfAborted(signal);
    let completion: OpenAI.Chat.Completions.ChatCompletion;
    // The SDK never removes the listener it adds to a signal: give it one that lives per call.
    const link = linkAbortSignal(signal);
    try {
      completion = await this.client.chat.completions.create(
        { ...requestBody(request, this.model), stream: false },
        { signal: link.signal },
      );
    } catch (error) {
      throw translateError(error, signal, this.client.baseURL);
    } finally {
      link.dispose();
    }
    // Some gateways answer 200 with `{"error": …}` and no completion at all.
    const body = completion as { error?: unknown; choices?: unknown };
    if (body.error !== undefined && body.error !== null && body.error !== false) {
      throw serverReportedError(body.error, { source: 'reply' });
    }
    const choice = Array.isArray(body.choices) ? completion.choices[0] : undefined;
    if (choice === undefined) {
      throw new ClawError(
        'model API returned a completion without choices (is the base URL an OpenAI-compatible ' +
        'Chat Completions API?)',
        { code: 'invalid_response' },
      );
    }
    const toolCalls = fromToolCalls(choice.message.tool_calls);
    const usage = fromUsage(completion.usage);
    const finishReason = fromFinishReason(choice.finish_reason);
    const reasoning = reasoningOf(choice.message);
    return {
      message: {
        role: 'assistant',
        content: choice.message.content ?? '',
        ...(toolCalls.length > 0 ? { toolCalls } : {}),
        ...(reasoning === '' ? {} : { reasoning }),
      },
      ...(usage === undefined ? {} : { usage }),
      ...(finishReason === undefined ? {} : { finishReason }),
      model: completion.model,
    };
  }

  /**
   * Streams one reply: `reasoning_delta`, `text_delta` and `tool_call_delta` events as the server
   * sends them, then one `completed` event with the whole message and the usage of the stream.
   *
   * @throws NetworkError `stream_incomplete` when the stream ends before the server finished the
   * reply (no finish reason): a cut connection must never pass for a whole answer.
   * @throws ModelServerError or ContextLengthExceededError when the server sends an `error`
   * object (mid-stream, or as a 200 JSON reply), or ends with `finish_reason: "error"`.
   */
  async *stream(request: ModelRequest, options: CallOptions = {}): AsyncGenerator<StreamEvent> {
    const { signal } = options;
    throwIfAborted(signal);
    const assembler = new StreamAssembler();
    const link = linkAbortSignal(signal);
    try {
      const chunks = await this.streamClient.chat.completions.create(
        {
          ...requestBody(request, this.model),
          stream: true,
          stream_options: { include_usage: true },
        },
        { signal: link.signal },
      );
      // Leaving this loop by any path (return, throw, the consumer breaking out) makes the SDK
      // abort the HTTP request, so no producer outlives the call.
      for await (const chunk of chunks) {
        // The SDK ends iteration quietly on abort; never hand out an event after one.
        if (signal?.aborted === true) throw abortReason(signal);
        for (const event of assembler.push(chunk)) yield event;
      }
    } catch (error) {
      throw translateError(error, signal, this.client.baseURL);
    } finally {
      link.dispose();
    }
    if (signal?.aborted === true) throw abortReason(signal);
    if (!assembler.finished) {
      throw new NetworkError('the model stream ended before the reply was complete', {
        code: 'stream_incomplete',
      });
    }
    yield { type: 'completed', response: assembler.response() };
  }
}
