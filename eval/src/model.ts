import {
  ClawError,
  sleep,
  throwIfAborted,
  type CallOptions,
  type Message,
  type ModelRequest,
  type Provider,
  type StreamEvent,
  type ToolCall,
} from '@claw/core';
import { OpenAIProvider, RetryingProvider, toChatMessages, type SetTimer } from '@claw/provider';
import { ScriptedProvider, type ScriptedReply, type ScriptedStep } from '@claw/testing';
import { FakeOpenAIServer, type FakeTurn, type RecordedRequest } from '@claw/testing/node';
import type { HarnessFaults, ModelSpec } from './case.js';
import { cpuWaitMs } from './cpu-wait.js';
import { EvalError } from './errors.js';
import { argumentsText, callId, roundChunks, roundText, type Round } from './script.js';

/** One attempt at a model call, as the scripted model saw it. */
export interface ModelCallRecord {
  /** 1-based, in the order the calls arrived. */
  attempt: number;
  /** The scripted round it consumed (1-based); absent for a call past the script. */
  round?: number;
  /** `reply`: answered; `fault`: a scripted failed attempt; `extra`: past the script. */
  kind: 'reply' | 'fault' | 'extra';
  /** How it ended: answered, failed as scripted or injected, or stopped by an abort. */
  outcome: 'completed' | 'failed' | 'aborted' | 'open';
  /** Milliseconds on the run's clock. */
  startedAt: number;
  endedAt?: number;
  /** The scripted waits this attempt spent (time to first token, chunk gaps), in milliseconds. */
  scriptedMs: number;
  /**
   * How long the process waited for a CPU during those waits (part of `scriptedMs` already: a
   * wait that ended late); absent when not measured.
   */
  cpuWaitInScriptedMs?: number;
  /** The messages the model was sent. */
  messages: Message[];
  /**
   * The messages as they went over the wire, every field included: over HTTP the request body's
   * `messages` as the server received them; in process the request's messages converted as the
   * OpenAI provider converts them (there is no wire).
   */
  wire: unknown[];
  /** Names of the tools the model was offered. */
  tools: string[];
}

export interface ScriptedModel {
  /** What the factory is given as its provider. */
  provider: Provider;
  /** Every attempt, in order. */
  readonly calls: ModelCallRecord[];
  /** The backoff waits the retrying provider asked for (skipped, not slept). */
  readonly retryWaits: number[];
  /** Rounds of the script no call consumed. */
  unusedRounds(): number[];
  close(): Promise<void>;
}

/** How the real model path limits and retries a call (openai-http): the run's settings. */
export interface ModelCallLimits {
  retries: number;
  callTimeoutMs: number;
  firstTokenTimeoutMs: number;
  streamIdleTimeoutMs: number;
}

export interface ScriptedModelOptions {
  rounds: readonly Round[];
  model?: ModelSpec;
  /** The limits of the openai-http transport's retrying provider, as the runtime sets them. */
  limits: ModelCallLimits;
  faults?: HarnessFaults;
  /** The run's clock in milliseconds. */
  now: () => number;
  /** Called when an attempt starts, with its 1-based number (the cancel point). */
  onCall?: (attempt: number) => void;
  /** The model name the provider asks for, and the scripted model answers as. */
  modelName: string;
}

/** Builds the scripted model of a case on the transport it asks for (EVAL-1). */
export async function createScriptedModel(options: ScriptedModelOptions): Promise<ScriptedModel> {
  return (options.model?.transport ?? 'in-process') === 'openai-http'
    ? HttpScriptedModel.start(options)
    : new InProcessScriptedModel(options);
}

function extraCallError(attempt: number, rounds: number): EvalError {
  return new EvalError(
    `claw-eval: model call ${attempt} has no scripted round (the script has ${rounds}): the ` +
    'engine made an extra model call',
    { code: 'harness_failed' },
  );
}

function injectedFailure(attempt: number): ClawError {
  return new ClawError(`injected fault: model call ${attempt} fails`, { code: 'injected_fault' });
}

/** A round's tool calls with the ids the harness assigns. */
function scriptedCalls(round: Round, roundNumber: number): ToolCall[] {
  return (round.toolCalls ?? []).map((call, index) => ({
    id: callId(roundNumber, index),
    name: call.name,
    arguments: argumentsText(call),
  }));
}

/**
 * The in-process transport: a `ScriptedProvider` (from @claw/testing) replays the rounds; the
 * harness times its waits and records every request.
 */
class InProcessScriptedModel implements ScriptedModel {
  readonly provider: Provider;
  readonly calls: ModelCallRecord[] = [];
  readonly retryWaits: number[] = [];
  private readonly options: ScriptedModelOptions;
  private current: ModelCallRecord | undefined;

  constructor(options: ScriptedModelOptions) {
    this.options = options;
    const steps: ScriptedStep[] = options.rounds.map((round, index) =>
      (request: ModelRequest) => this.begin(request, index + 1, round),
    );
    const scripted = new ScriptedProvider(steps, {
      name: 'claw-eval-script',
      record: false,
      then: (request) => this.begin(request, undefined, undefined),
      sleep: (ms, signal) => this.sleep(ms, signal),
    });
    this.provider = this.watch(scripted);
  }

  unusedRounds(): number[] {
    const used = new Set(this.calls.map((call) => call.round));
    return this.options.rounds.map((_, index) => index + 1).filter((round) => !used.has(round));
  }

  async close(): Promise<void> {}

  private begin(
    request: ModelRequest,
    roundNumber: number | undefined,
    round: Round | undefined,
  ): ScriptedReply {
    const attempt = this.calls.length + 1;
    const record: ModelCallRecord = {
      attempt,
      ...(roundNumber === undefined ? {} : { round: roundNumber }),
      kind: round === undefined ? 'extra' : 'reply',
      outcome: 'open',
      startedAt: this.options.now(),
      scriptedMs: 0,
      messages: structuredClone(request.messages),
      wire: structuredClone(toChatMessages(request.messages)),
      tools: (request.tools ?? []).map((tool) => tool.name),
    };
    this.calls.push(record);
    this.current = record;
    this.options.onCall?.(attempt);
    if (round === undefined || roundNumber === undefined) {
      return { error: extraCallError(attempt, this.options.rounds.length) };
    }
    if (this.options.faults?.failModelCall === attempt) return { error: injectedFailure(attempt) };
    const extra = this.options.faults?.misreportUsage === true ? 1 : 0;
    const chunks = roundChunks(round);
    const cached = round.usage?.cachedTokens;
    return {
      ...(chunks.length > 0 ? { textChunks: chunks } : { text: roundText(round) }),
      ...(round.reasoning === undefined ? {} : { reasoning: round.reasoning }),
      toolCalls: scriptedCalls(round, roundNumber),
      usage: {
        promptTokens: (round.usage?.promptTokens ?? 0) + extra,
        completionTokens: round.usage?.completionTokens ?? 0,
        ...(cached === undefined ? {} : { cachedPromptTokens: cached }),
      },
      ...(round.ttfbMs === undefined ? {} : { delayMs: round.ttfbMs }),
      ...(round.chunkGapMs === undefined ? {} : { chunkDelayMs: round.chunkGapMs }),
    };
  }

  /** The scripted waits, timed and counted against the attempt that makes them. */
  private async sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
    const record = this.current;
    const started = this.options.now();
    const waitedBefore = cpuWaitMs();
    try {
      await sleep(ms, signal);
    } finally {
      if (record !== undefined) {
        record.scriptedMs += this.options.now() - started;
        record.cpuWaitInScriptedMs = (record.cpuWaitInScriptedMs ?? 0) + cpuWaitMs() - waitedBefore;
      }
    }
  }

  /**
   * Marks how each attempt ends. The engine sees the replies as scripted, except that they name
   * the model that was asked for, as a server's do (the scripted provider names itself), so that
   * the run's cost is priced by that model.
   */
  private watch(inner: ScriptedProvider): Provider {
    const stream = inner.stream?.bind(inner);
    const answeredAs = (request: ModelRequest): string => request.model ?? this.options.modelName;
    return {
      name: inner.name,
      generate: async (request, callOptions: CallOptions = {}) => {
        try {
          const response = await inner.generate(request, callOptions);
          this.finish(this.current, 'completed');
          return { ...response, model: answeredAs(request) };
        } catch (error) {
          this.finish(this.current, endOf(callOptions.signal));
          throw error;
        }
      },
      ...(stream === undefined
        ? {}
        : {
            stream: (request: ModelRequest, callOptions: CallOptions = {}) =>
              this.watchStream(
                stream(request, callOptions),
                answeredAs(request),
                callOptions.signal,
              ),
          }),
    };
  }

  private async *watchStream(
    events: AsyncIterable<StreamEvent>,
    model: string,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<StreamEvent> {
    let record: ModelCallRecord | undefined;
    let completed = false;
    try {
      for await (const event of events) {
        record ??= this.current;
        if (event.type === 'completed') {
          // The consumer may stop pulling once it has the reply.
          completed = true;
          this.finish(record, 'completed');
          yield { ...event, response: { ...event.response, model } };
          continue;
        }
        yield event;
      }
      this.finish(record ?? this.current, completed ? 'completed' : 'failed');
    } catch (error) {
      this.finish(record ?? this.current, endOf(signal));
      throw error;
    } finally {
      // The consumer stopped early (an abort between events).
      if (!completed) this.finish(record ?? this.current, endOf(signal));
    }
  }

  private finish(record: ModelCallRecord | undefined, outcome: ModelCallRecord['outcome']): void {
    if (record === undefined || record.outcome !== 'open') return;
    record.outcome = outcome;
    record.endedAt = this.options.now();
  }
}

/** How an attempt that did not answer ended: aborted by the signal, or failed. */
function endOf(signal: AbortSignal | undefined): ModelCallRecord['outcome'] {
  return signal?.aborted === true ? 'aborted' : 'failed';
}

/**
 * A SetTimer whose pending timers of one length can be fired at once: when the scripted model
 * hangs, the harness skips the time a first-token timeout would wait instead of sleeping.
 */
export class SkippableTimers {
  private readonly pending = new Set<{ ms: number; fire: () => void; cancel: () => void }>();

  readonly setTimer: SetTimer = (callback, ms) => {
    const entry = {
      ms,
      fire: () => {
        entry.cancel();
        callback();
      },
      cancel: () => {
        clearTimeout(timer);
        this.pending.delete(entry);
      },
    };
    const timer = setTimeout(entry.fire, ms);
    this.pending.add(entry);
    return entry.cancel;
  };

  /** Fires every pending timer of exactly `ms` now, as if that much time had passed. */
  fire(ms: number): number {
    const due = [...this.pending].filter((entry) => entry.ms === ms);
    for (const entry of due) entry.fire();
    return due.length;
  }

  clear(): void {
    for (const entry of [...this.pending]) entry.cancel();
  }
}

/**
 * The openai-http transport (the real path of a model call): the rounds are served by a fake
 * OpenAI-compatible server on 127.0.0.1, read by the real `OpenAIProvider` inside the real
 * `RetryingProvider`, configured as the runtime configures them. Backoff waits are recorded and
 * skipped; a hanging round has its first-token timer fired at once.
 */
class HttpScriptedModel implements ScriptedModel {
  readonly calls: ModelCallRecord[] = [];
  readonly retryWaits: number[] = [];
  readonly provider: Provider;
  private readonly server: FakeOpenAIServer;
  private readonly timers: SkippableTimers;
  private readonly options: ScriptedModelOptions;

  private constructor(
    options: ScriptedModelOptions,
    server: FakeOpenAIServer,
    timers: SkippableTimers,
  ) {
    this.options = options;
    this.server = server;
    this.timers = timers;
    const { limits } = options;
    // Configured as the runtime configures the provider it builds from the settings.
    this.provider = new RetryingProvider(
      new OpenAIProvider({ apiKey: 'claw-eval', model: options.modelName, baseURL: server.baseURL }),
      {
        attempts: limits.retries + 1,
        callTimeoutMs: limits.callTimeoutMs,
        firstTokenTimeoutMs: limits.firstTokenTimeoutMs,
        streamIdleTimeoutMs: limits.streamIdleTimeoutMs,
        setTimer: timers.setTimer,
        sleep: async (ms, signal) => {
          this.retryWaits.push(ms);
          throwIfAborted(signal);
        },
      },
    );
  }

  static async start(options: ScriptedModelOptions): Promise<HttpScriptedModel> {
    const timers = new SkippableTimers();
    const holder: { model?: HttpScriptedModel } = {};
    const server = await FakeOpenAIServer.start({
      model: options.modelName,
      turns: (_body, index) => {
        if (holder.model === undefined) throw new Error('the scripted model is not ready');
        return holder.model.turn(index);
      },
      onRequest: (request) => holder.model?.received(request),
    });
    holder.model = new HttpScriptedModel(options, server, timers);
    return holder.model;
  }

  unusedRounds(): number[] {
    const used = new Set(this.calls.map((call) => call.round));
    return this.options.rounds.map((_, index) => index + 1).filter((round) => !used.has(round));
  }

  async close(): Promise<void> {
    this.timers.clear();
    await this.server.close();
  }

  private received(request: RecordedRequest): void {
    const attempt = this.calls.length + 1;
    const round = this.options.rounds[attempt - 1];
    const body = request.body as {
      messages?: unknown;
      tools?: Array<{ function?: { name?: string } }>;
    };
    const record: ModelCallRecord = {
      attempt,
      ...(round === undefined ? {} : { round: attempt }),
      kind: round === undefined ? 'extra' : round.fault === undefined ? 'reply' : 'fault',
      outcome: 'open',
      startedAt: this.options.now(),
      scriptedMs: round === undefined || round.fault !== undefined ? 0 : plannedMs(round),
      messages: fromWireMessages(body.messages),
      wire: Array.isArray(body.messages) ? (body.messages as unknown[]) : [],
      tools: (body.tools ?? []).map((tool) => tool.function?.name ?? ''),
    };
    this.calls.push(record);
    this.options.onCall?.(attempt);
    void request.closed.then(({ completed }) => {
      record.endedAt = this.options.now();
      record.outcome = record.kind === 'reply' && completed
        ? 'completed'
        : record.kind === 'reply' ? 'aborted' : 'failed';
    });
    if (round?.fault?.type === 'hang') {
      // The attempt's first-token timer is running (it starts before the request is sent).
      setImmediate(() => this.timers.fire(this.options.limits.firstTokenTimeoutMs));
    }
  }

  private turn(index: number): FakeTurn {
    const attempt = index + 1;
    const round = this.options.rounds[index];
    if (round === undefined) {
      return {
        fault: { type: 'status', status: 400, message: extraCallError(attempt, this.options.rounds.length).message },
      };
    }
    if (this.options.faults?.failModelCall === attempt) {
      return { fault: { type: 'status', status: 400, message: injectedFailure(attempt).message } };
    }
    const fault = round.fault;
    if (fault?.type === 'hang') return { fault: { type: 'hang' } };
    if (fault?.type === 'status' && fault.code !== undefined) {
      // The error body as OpenAI sends it, with the code a client may classify by.
      return {
        raw: {
          status: fault.status,
          contentType: 'application/json',
          ...(fault.retryAfterMs === undefined
            ? {}
            : { headers: { 'retry-after-ms': String(fault.retryAfterMs) } }),
          body: JSON.stringify({
            error: {
              message: fault.message ?? `scripted ${fault.status}`,
              type: 'invalid_request_error',
              param: null,
              code: fault.code,
            },
          }),
        },
      };
    }
    if (fault?.type === 'status') {
      return {
        fault: {
          type: 'status',
          status: fault.status,
          ...(fault.message === undefined ? {} : { message: fault.message }),
          ...(fault.retryAfterMs === undefined
            ? {}
            : { headers: { 'retry-after-ms': String(fault.retryAfterMs) } }),
        },
      };
    }
    const extra = this.options.faults?.misreportUsage === true ? 1 : 0;
    const chunks = roundChunks(round);
    const cached = round.usage?.cachedTokens;
    return {
      ...(chunks.length > 0 ? { textChunks: chunks, text: chunks.join('') } : {}),
      ...(round.reasoning === undefined ? {} : { reasoning: round.reasoning }),
      toolCalls: scriptedCalls(round, attempt).map((call) => ({
        id: call.id,
        name: call.name,
        arguments: call.arguments,
      })),
      usage: {
        promptTokens: (round.usage?.promptTokens ?? 0) + extra,
        completionTokens: round.usage?.completionTokens ?? 0,
        ...(cached === undefined ? {} : { cachedTokens: cached }),
      },
      ...(round.ttfbMs === undefined ? {} : { delayMs: round.ttfbMs }),
      ...(round.chunkGapMs === undefined ? {} : { chunkDelayMs: round.chunkGapMs }),
    };
  }
}

/**
 * The scripted waits of a round served over HTTP: the delay before the response, and a gap
 * before each data chunk after the first (role, reasoning and text pieces, tool calls, finish,
 * usage).
 */
function plannedMs(round: Round): number {
  const chunks = 1 + (round.reasoning?.length ?? 0) + roundChunks(round).length +
    (round.toolCalls?.length ?? 0) + 2;
  return (round.ttfbMs ?? 0) + (round.chunkGapMs ?? 0) * (chunks - 1);
}

/** Chat Completions messages (as sent on the wire) → claw messages. */
export function fromWireMessages(value: unknown): Message[] {
  if (!Array.isArray(value)) return [];
  return value.map((raw): Message => {
    const message = raw as {
      role?: string;
      content?: unknown;
      tool_call_id?: string;
      tool_calls?: Array<{ id?: string; function?: { name?: string; arguments?: string } }>;
    };
    const content = typeof message.content === 'string' ? message.content : '';
    switch (message.role) {
      case 'assistant':
        return {
          role: 'assistant',
          content,
          ...(message.tool_calls === undefined
            ? {}
            : {
                toolCalls: message.tool_calls.map((call) => ({
                  id: call.id ?? '',
                  name: call.function?.name ?? '',
                  arguments: call.function?.arguments ?? '',
                })),
              }),
        };
      case 'tool':
        return { role: 'tool', toolCallId: message.tool_call_id ?? '', content };
      case 'system':
        return { role: 'system', content };
      case 'user':
      case undefined:
      default:
        return { role: 'user', content };
    }
  });
}

/** How the message that stands for a compacted part of the conversation begins (CMP-2). */
export const compactionMarker = '[claw: the earlier part of this conversation was ';

/**
 * Seeded faults in what claw sends (`driftingSystemPrompt`, `echoReasoning`, `dropSummary`): a
 * provider that changes each request before passing it on, as an engine or provider with that
 * regression would. `provider` itself when no such fault is set.
 */
export function withRequestFaults(provider: Provider, faults: HarnessFaults): Provider {
  if (
    faults.driftingSystemPrompt !== true &&
    faults.echoReasoning !== true &&
    faults.dropSummary !== true
  ) {
    return provider;
  }
  let calls = 0;
  const change = (request: ModelRequest): ModelRequest => {
    calls += 1;
    const call = calls;
    const kept = faults.dropSummary === true
      ? request.messages.filter((message) =>
          message.role !== 'user' || !message.content.startsWith(compactionMarker))
      : request.messages;
    const messages = kept.map((message, index): Message => {
      if (faults.driftingSystemPrompt === true && index === 0 && message.role === 'system' && call > 1) {
        return { ...message, content: `${message.content}\n(request ${call})` };
      }
      if (faults.echoReasoning === true && message.role === 'assistant' && message.reasoning !== undefined) {
        return { ...message, content: `${message.reasoning}${message.content}` };
      }
      return message;
    });
    return { ...request, messages };
  };
  const stream = provider.stream?.bind(provider);
  return {
    name: provider.name,
    generate: (request, callOptions) => provider.generate(change(request), callOptions),
    ...(stream === undefined
      ? {}
      : {
          stream: (request: ModelRequest, callOptions?: CallOptions) =>
            stream(change(request), callOptions),
        }),
  };
}
