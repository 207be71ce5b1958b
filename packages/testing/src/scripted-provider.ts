import {
  ClawError,
  sleep,
  throwIfAborted,
  type CallOptions,
  type ModelRequest,
  type ModelResponse,
  type Provider,
  type StreamEvent,
  type ToolCall,
  type Usage,
} from '@claw/core';

/** One scripted model reply. */
export interface ScriptedReply {
  /** The reply text. Streamed in `textChunks` when given, else in one piece. */
  text?: string;
  textChunks?: string[];
  /**
   * The model's reasoning (REAL-4), streamed as `reasoning_delta` events before the text, one per
   * piece, and kept in the reply's `message.reasoning`.
   */
  reasoning?: string[];
  /** Tool calls; `arguments` may be an object (serialised as JSON) or the raw text. */
  toolCalls?: Array<{ id?: string; name: string; arguments?: string | Record<string, unknown> }>;
  usage?: Partial<Usage>;
  /** Wait this long before the reply (or before the first stream event). Honours the signal. */
  delayMs?: number;
  /** Wait this long between stream events. Honours the signal. */
  chunkDelayMs?: number;
  /** Fail with this error instead of replying (after `failAfterEvents` stream events, if set). */
  error?: Error;
  failAfterEvents?: number;
}

/** A step is a reply, or a function that builds one from the request (e.g. to echo a file). */
export type ScriptedStep =
  | ScriptedReply
  | ((request: ModelRequest, callIndex: number) => ScriptedReply | Promise<ScriptedReply>);

export interface ScriptedCall {
  mode: 'generate' | 'stream';
  /** A deep copy of the request as it was at call time. */
  request: ModelRequest;
}

export interface ScriptedProviderOptions {
  /** When false the provider has no `stream` method, like a provider that cannot stream. */
  streaming?: boolean;
  name?: string;
  /**
   * The step for every call after the script (an endless model, e.g. a demo server's). Default:
   * none, so a call past the script fails with `script_exhausted`.
   */
  then?: ScriptedStep;
  /** Keep a copy of every request in `calls` (default true; off for a long-lived model). */
  record?: boolean;
  /**
   * Waits `delayMs` and `chunkDelayMs`; must reject with the signal's reason when it aborts.
   * Default: a timer (`sleep` of @claw/core). Injected to time the waits or to control time.
   */
  sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
}

/**
 * A provider that replays a fixed script: one step per call, in order (EVAL-1). It records every
 * call, honours the abort signal during its delays and between stream events, and fails with
 * `script_exhausted` when called more often than scripted.
 */
export class ScriptedProvider implements Provider {
  readonly name: string;
  readonly calls: ScriptedCall[] = [];
  readonly stream?: (request: ModelRequest, options?: CallOptions) => AsyncIterable<StreamEvent>;
  private readonly steps: ScriptedStep[];
  private readonly then: ScriptedStep | undefined;
  private readonly record: boolean;
  private readonly sleep: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
  private callCount = 0;

  constructor(steps: ScriptedStep[], options: ScriptedProviderOptions = {}) {
    this.steps = [...steps];
    this.name = options.name ?? 'scripted';
    this.then = options.then;
    this.record = options.record ?? true;
    this.sleep = options.sleep ?? sleep;
    if (options.streaming !== false) {
      this.stream = (request, callOptions) => this.streamReply(request, callOptions ?? {});
    }
  }

  /** Steps of the script not yet used (an endless provider has `then` after them). */
  get remaining(): number {
    return Math.max(0, this.steps.length - this.callCount);
  }

  async generate(request: ModelRequest, options: CallOptions = {}): Promise<ModelResponse> {
    const [reply, callIndex] = await this.next('generate', request, options.signal);
    if (reply.delayMs !== undefined) await this.sleep(reply.delayMs, options.signal);
    if (reply.error !== undefined) throw reply.error;
    return toResponse(reply, callIndex);
  }

  private async *streamReply(
    request: ModelRequest,
    options: CallOptions,
  ): AsyncGenerator<StreamEvent> {
    const { signal } = options;
    const [reply, callIndex] = await this.next('stream', request, signal);
    if (reply.delayMs !== undefined) await this.sleep(reply.delayMs, signal);
    const response = toResponse(reply, callIndex);
    const events: StreamEvent[] = [];
    for (const delta of reply.reasoning ?? []) events.push({ type: 'reasoning_delta', delta });
    for (const delta of reply.textChunks ?? (reply.text ? [reply.text] : [])) {
      events.push({ type: 'text_delta', delta });
    }
    for (const [index, call] of (response.message.toolCalls ?? []).entries()) {
      events.push({
        type: 'tool_call_delta',
        index,
        id: call.id,
        name: call.name,
        argumentsDelta: call.arguments,
      });
    }
    events.push({ type: 'completed', response });
    for (const [count, event] of events.entries()) {
      if (reply.error !== undefined && count === (reply.failAfterEvents ?? 0)) throw reply.error;
      if (count > 0 && reply.chunkDelayMs !== undefined) {
        await this.sleep(reply.chunkDelayMs, signal);
      }
      throwIfAborted(signal);
      yield event;
    }
  }

  private async next(
    mode: ScriptedCall['mode'],
    request: ModelRequest,
    signal: AbortSignal | undefined,
  ): Promise<[ScriptedReply, number]> {
    throwIfAborted(signal);
    const index = this.callCount;
    this.callCount += 1;
    if (this.record) this.calls.push({ mode, request: structuredClone(request) });
    const step = this.steps[index] ?? this.then;
    if (step === undefined) {
      throw new ClawError(
        `scripted provider: call ${index + 1} has no scripted step (the script has ${this.steps.length})`,
        { code: 'script_exhausted' },
      );
    }
    return [typeof step === 'function' ? await step(request, index) : step, index];
  }
}

function toResponse(reply: ScriptedReply, callIndex: number): ModelResponse {
  const text = reply.text ?? reply.textChunks?.join('') ?? '';
  const toolCalls: ToolCall[] = (reply.toolCalls ?? []).map((call, index) => ({
    id: call.id ?? `call_${callIndex + 1}_${index + 1}`,
    name: call.name,
    arguments:
      typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}),
  }));
  const promptTokens = reply.usage?.promptTokens ?? 0;
  const completionTokens = reply.usage?.completionTokens ?? 0;
  const reasoning = reply.reasoning?.join('') ?? '';
  const cached = reply.usage?.cachedPromptTokens;
  return {
    message: {
      role: 'assistant',
      content: text,
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
      ...(reasoning === '' ? {} : { reasoning }),
    },
    usage: {
      promptTokens,
      completionTokens,
      totalTokens: reply.usage?.totalTokens ?? promptTokens + completionTokens,
      ...(cached === undefined ? {} : { cachedPromptTokens: cached }),
    },
    finishReason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
    model: 'scripted',
  };
}
