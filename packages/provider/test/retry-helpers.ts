import type {
  CallOptions,
  ModelRequest,
  ModelResponse,
  Provider,
  StreamEvent,
} from '@claw/core';
import { HttpError } from '../src/index.js';

export const request: ModelRequest = { messages: [{ role: 'user', content: 'hi' }] };

export function http(status: number, retryAfterMs?: number): HttpError {
  return new HttpError(`model API returned HTTP ${status}`, { status, retryAfterMs });
}

/** Runs a stream to its end; returns what it yielded and what it failed with (if it did). */
export async function drain(
  stream: AsyncIterable<StreamEvent>,
): Promise<{ events: StreamEvent[]; error: unknown }> {
  const events: StreamEvent[] = [];
  try {
    for await (const event of stream) events.push(event);
  } catch (error) {
    return { events, error };
  }
  return { events, error: undefined };
}

/** The text deltas of `events`, joined. */
export function textOf(events: StreamEvent[]): string {
  return events.map((event) => (event.type === 'text_delta' ? event.delta : '')).join('');
}

/** A backoff sleep that returns at once and records the delays it was asked for. */
export function recordingSleep(): {
  delays: number[];
  sleep: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
} {
  const delays: number[] = [];
  return {
    delays,
    sleep: async (ms) => {
      delays.push(ms);
    },
  };
}

export function response(text: string): ModelResponse {
  return { message: { role: 'assistant', content: text }, finishReason: 'stop' };
}

export const completed = (text: string): StreamEvent => ({ type: 'completed', response: response(text) });

type StreamScript = (signal: AbortSignal) => AsyncGenerator<StreamEvent, void, undefined>;

/**
 * A streaming provider whose calls run the given generator functions in order. It records the
 * signal of every call and counts how often an inner stream was closed (its `finally` ran).
 */
export class FunctionProvider implements Provider {
  readonly name = 'functions';
  readonly signals: AbortSignal[] = [];
  closed = 0;

  constructor(private readonly scripts: StreamScript[]) {}

  get calls(): number {
    return this.signals.length;
  }

  async generate(): Promise<ModelResponse> {
    throw new Error('FunctionProvider only streams');
  }

  stream(_request: ModelRequest, options: CallOptions = {}): AsyncIterable<StreamEvent> {
    const signal = options.signal ?? new AbortController().signal;
    const script = this.scripts[this.signals.length];
    this.signals.push(signal);
    if (script === undefined) throw new Error(`no script for call ${this.signals.length}`);
    const onClose = (): void => {
      this.closed += 1;
    };
    return (async function* () {
      try {
        yield* script(signal);
      } finally {
        onClose();
      }
    })();
  }
}

/** Resolves when `signal` aborts (with its reason as the rejection), for inner fakes that wait. */
export function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise<never>((_resolve, reject) => {
    const fail = () => reject(signal.reason as Error);
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
}
