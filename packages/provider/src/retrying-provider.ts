import {
  closeIterator,
  raceAbort,
  ClawError,
  abortReason,
  sleep as abortableSleep,
  throwIfAborted,
  type CallOptions,
  type ModelRequest,
  type ModelResponse,
  type ModelRetry,
  type Provider,
  type StreamEvent,
} from '@claw/core';
import { AttemptScope, defaultSetTimer, type SetTimer } from './attempt-scope.js';
import { classifyError } from './classify.js';
import { NetworkError, findHttpError } from './errors.js';
import { PartialResponseError } from './retry-errors.js';

/**
 * What `onRetry` is told before the provider waits and tries again: what the call's own
 * `CallOptions.onRetry` is told (its `error` always classified `retryable`), and the mode.
 */
export interface RetryInfo extends ModelRetry {
  /** Whether a `generate` or a `stream` call is being retried. */
  mode: 'generate' | 'stream';
}

export interface RetryingProviderOptions {
  /** Attempts in all, the first one included; 1 turns retrying off. Default 3. */
  attempts?: number;
  /**
   * Wait after the first failure, in milliseconds; it doubles after each further failure
   * (200 → 400 → 800 …). 0 retries at once and ignores `retry-after` hints. Default 200.
   */
  backoffMs?: number;
  /** Upper bound of every wait, `retry-after` hints included. Default 2000. */
  maxBackoffMs?: number;
  /**
   * Limit for each attempt as a whole, in milliseconds; 0 = none. Default 0: a long reply that
   * keeps coming is never cut off; the idle and first-token timeouts catch a stuck server.
   */
  callTimeoutMs?: number;
  /**
   * Streams only: limit for the first content (text, reasoning, a tool-call piece, or the final
   * message) of each attempt, in milliseconds; it stops as soon as content arrives and never ends
   * a stream that has started. 0 = none. Default 120 000.
   */
  firstTokenTimeoutMs?: number;
  /**
   * Limit for a silence of the model, in milliseconds; 0 = none. Default 120 000.
   *
   * Streams: an attempt that delivers no content (text, reasoning, a tool-call piece with
   * something in it, or the final message) for this long is aborted with a
   * `model_stream_idle_timeout`. Keep-alive comments and empty pieces do not count. The timer
   * starts at the first content and restarts at each; it counts while waiting for the server, not
   * while the consumer holds an event. Before the first content the first-token timeout governs,
   * unless `firstTokenTimeoutMs` is 0: then this timer runs from the start of the attempt, so
   * that a stream hangs forever only when both are 0.
   *
   * `generate` (nothing arrives before the whole reply): when `callTimeoutMs` is 0, this is the
   * limit of each attempt, so that it cannot hang either.
   */
  streamIdleTimeoutMs?: number;
  /** Called before each wait, e.g. to log the retry. An error thrown here ends the call. */
  onRetry?: (info: RetryInfo) => void;
  /**
   * Waits between attempts; must reject when `signal` aborts (the provider also stops waiting on
   * an abort by itself). Default: a timer.
   */
  sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
  /** Starts the timeout timers. Default: the global `setTimeout`. */
  setTimer?: SetTimer;
}

/** The defaults of `RetryingProviderOptions`. */
export const retryingProviderDefaults = {
  attempts: 3,
  backoffMs: 200,
  maxBackoffMs: 2000,
  /** None (REAL-3): the idle timeout replaces a whole-call limit, which stays available. */
  callTimeoutMs: 0,
  firstTokenTimeoutMs: 120_000,
  streamIdleTimeoutMs: 120_000,
} as const;

type AttemptOutcome = { type: 'completed' } | { type: 'failed'; error: unknown };

/**
 * Wraps any provider with retries and timeouts (PRV-3, PRV-4, PRV-5). The app wraps it around
 * its model provider; the engine and the tools never retry, so a retry repeats one model call
 * and nothing else.
 *
 * - A failed attempt is retried only when `classifyError` says `retryable` (HTTP 408, 409, 429,
 *   5xx, network failures, the two model timeouts) and attempts are left; the last error is
 *   thrown as it is. `canceled` and `fatal` are never retried.
 * - Between attempts it waits `backoffMs · 2^(failures-1)`, or the server's `retry-after` hint if
 *   that is longer, never more than `maxBackoffMs`. Aborting the caller's signal ends the wait at
 *   once.
 * - Each attempt has its own timers: a call timeout (off by default), and for a stream a
 *   first-token timeout and an idle timeout (`generate` uses the idle timeout as its limit when
 *   there is no call timeout). A timer aborts the signal the inner provider got, so its HTTP
 *   request ends.
 * - A stream is retried only while nothing has been passed on. Once content was forwarded, a
 *   failure (or an end without the `completed` event) is thrown as a `PartialResponseError`.
 * - Whenever the caller's signal is aborted, the call rejects with its reason, even when a timer
 *   fired at the same moment.
 *
 * `stream` exists only when the inner provider has one.
 *
 * @throws ClawError `config_invalid` from the constructor when an option is out of range.
 */
export class RetryingProvider implements Provider {
  readonly name: string;
  declare readonly stream?: (
    request: ModelRequest,
    options?: CallOptions,
  ) => AsyncIterable<StreamEvent>;

  private readonly attempts: number;
  private readonly backoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly callTimeoutMs: number;
  private readonly firstTokenTimeoutMs: number;
  private readonly streamIdleTimeoutMs: number;
  private readonly onRetry: ((info: RetryInfo) => void) | undefined;
  private readonly sleep: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
  private readonly setTimer: SetTimer;

  constructor(
    private readonly inner: Provider,
    options: RetryingProviderOptions = {},
  ) {
    this.name = inner.name;
    this.attempts = options.attempts ?? retryingProviderDefaults.attempts;
    this.backoffMs = options.backoffMs ?? retryingProviderDefaults.backoffMs;
    this.maxBackoffMs = options.maxBackoffMs ?? retryingProviderDefaults.maxBackoffMs;
    this.callTimeoutMs = options.callTimeoutMs ?? retryingProviderDefaults.callTimeoutMs;
    this.firstTokenTimeoutMs =
      options.firstTokenTimeoutMs ?? retryingProviderDefaults.firstTokenTimeoutMs;
    this.streamIdleTimeoutMs =
      options.streamIdleTimeoutMs ?? retryingProviderDefaults.streamIdleTimeoutMs;
    if (!Number.isInteger(this.attempts) || this.attempts < 1) {
      throw invalidOption('attempts', this.attempts, 'a whole number of at least 1');
    }
    const timings = [
      'backoffMs',
      'maxBackoffMs',
      'callTimeoutMs',
      'firstTokenTimeoutMs',
      'streamIdleTimeoutMs',
    ] as const;
    for (const key of timings) {
      if (!Number.isFinite(this[key]) || this[key] < 0) {
        throw invalidOption(key, this[key], 'a number of milliseconds, 0 or more');
      }
    }
    this.onRetry = options.onRetry;
    this.sleep = options.sleep ?? defaultSleep;
    this.setTimer = options.setTimer ?? defaultSetTimer;
    if (inner.stream !== undefined) {
      this.stream = (request, callOptions) => this.streamWithRetries(request, callOptions ?? {});
    }
  }

  /**
   * One model call with retries. Each attempt is limited by `callTimeoutMs`, or when that is 0 by
   * `streamIdleTimeoutMs` (nothing arrives before the whole reply, so a silent server is one
   * that does not answer). Rejects with the caller's abort reason when its signal aborts, with a
   * `ModelTimeoutError` (`model_call_timeout`, or `model_stream_idle_timeout` for the idle limit)
   * when the last attempt ran out of time, and otherwise with the error of the last attempt.
   */
  async generate(request: ModelRequest, options: CallOptions = {}): Promise<ModelResponse> {
    const { signal } = options;
    for (let attempt = 1; ; attempt += 1) {
      throwIfAborted(signal);
      const scope = new AttemptScope(signal, this.setTimer);
      if (this.callTimeoutMs > 0) scope.startTimer('call', this.callTimeoutMs);
      else scope.startTimer('idle', this.streamIdleTimeoutMs);
      let failure: unknown;
      try {
        return await scope.race(this.inner.generate(request, { signal: scope.signal }));
      } catch (error) {
        failure = scope.failure(error);
      } finally {
        scope.close();
      }
      await this.beforeRetry('generate', attempt, failure, options);
    }
  }

  private async *streamWithRetries(
    request: ModelRequest,
    options: CallOptions,
  ): AsyncGenerator<StreamEvent, void, undefined> {
    const { signal } = options;
    for (let attempt = 1; ; attempt += 1) {
      throwIfAborted(signal);
      const outcome = yield* this.streamAttempt(request, signal);
      if (outcome.type === 'completed') return;
      await this.beforeRetry('stream', attempt, outcome.error, options);
    }
  }

  /**
   * One stream attempt. Forwards events as they come; returns `failed` only when nothing was
   * forwarded yet (the caller may retry), and throws when retrying is out of the question.
   */
  private async *streamAttempt(
    request: ModelRequest,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<StreamEvent, AttemptOutcome, undefined> {
    const scope = new AttemptScope(signal, this.setTimer);
    scope.startTimer('call', this.callTimeoutMs);
    scope.startTimer('first_token', this.firstTokenTimeoutMs);
    // Without a first-token limit the idle limit covers the wait for the first content too.
    if (this.firstTokenTimeoutMs <= 0) scope.startTimer('idle', this.streamIdleTimeoutMs);
    let iterator: AsyncIterator<StreamEvent> | undefined;
    let nextPending = false;
    let forwarded = false;
    let completed = false;
    try {
      iterator = this.openInnerStream(request, scope.signal)[Symbol.asyncIterator]();
      while (!completed) {
        // Aborted (or timed out) while the consumer held the last event: ask for nothing more.
        if (scope.signal.aborted) throw scope.signal.reason;
        nextPending = true;
        const result = await scope.race(iterator.next());
        nextPending = false;
        if (result.done === true) break;
        const event = result.value;
        // Before any content, empty pieces carry nothing; dropping them keeps a retry from
        // repeating them, and they must not stop the first-token timer (keep-alive in disguise).
        // Nor do they restart the idle timer, before or after the first content.
        const content = hasContent(event);
        if (!forwarded && !content) continue;
        if (content) {
          scope.stopTimer('first_token');
          // The silence is measured while waiting for the server, not while the consumer holds
          // the event (a slow reporter is not a silent model).
          scope.stopTimer('idle');
        }
        forwarded = true;
        if (event.type === 'completed') completed = true;
        yield event;
        if (content && !completed) scope.startTimer('idle', this.streamIdleTimeoutMs);
      }
      if (!completed) {
        throw new NetworkError('the model stream ended before the reply was complete', {
          code: 'stream_incomplete',
        });
      }
      return { type: 'completed' };
    } catch (error) {
      const failure = scope.failure(error);
      if (signal?.aborted === true) throw abortReason(signal);
      if (forwarded) throw PartialResponseError.wrap(failure);
      return { type: 'failed', error: failure };
    } finally {
      // Reached on every exit, the consumer breaking out included: end the inner stream.
      scope.close(
        completed ? undefined : new ClawError('model stream closed', { code: 'aborted' }),
      );
      await closeIterator(iterator, nextPending);
    }
  }

  private openInnerStream(request: ModelRequest, signal: AbortSignal): AsyncIterable<StreamEvent> {
    if (this.inner.stream === undefined) {
      throw new ClawError(`provider "${this.inner.name}" can no longer stream`, {
        code: 'provider_error',
      });
    }
    return this.inner.stream(request, { signal });
  }

  /**
   * Decides what follows a failed attempt: throws when the call is over (aborted, not retryable,
   * no attempts left), otherwise reports the retry (to `onRetry`, then to the call's own) and
   * waits out the backoff.
   */
  private async beforeRetry(
    mode: RetryInfo['mode'],
    attempt: number,
    failure: unknown,
    options: CallOptions,
  ): Promise<void> {
    const { signal } = options;
    if (signal?.aborted === true) throw abortReason(signal);
    if (attempt >= this.attempts || classifyError(failure, { signal }) !== 'retryable') {
      throw failure;
    }
    const delayMs = this.delayAfter(attempt, failure);
    const info: RetryInfo = { mode, attempt, attempts: this.attempts, delayMs, error: failure };
    this.onRetry?.(info);
    options.onRetry?.(info);
    try {
      await raceAbort(this.sleep(delayMs, signal), signal);
    } catch (error) {
      throwIfAborted(signal);
      throw error;
    }
  }

  /** Backoff after the `failures`-th failure, the `retry-after` hint considered, capped. */
  private delayAfter(failures: number, failure: unknown): number {
    if (this.backoffMs === 0) return 0;
    const backoff = this.backoffMs * 2 ** (failures - 1);
    const hint = findHttpError(failure)?.retryAfterMs ?? 0;
    return Math.min(this.maxBackoffMs, Math.max(backoff, hint));
  }
}

/** A timer for real waits; a wait of 0 retries at once, without a trip through the timers. */
function defaultSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return ms > 0 ? abortableSleep(ms, signal) : Promise.resolve();
}

/** True when a stream event carries something a consumer would see. */
function hasContent(event: StreamEvent): boolean {
  switch (event.type) {
    case 'text_delta':
    case 'reasoning_delta':
      return event.delta !== '';
    case 'tool_call_delta':
      return event.argumentsDelta !== '' || Boolean(event.id) || Boolean(event.name);
    case 'completed':
      return true;
  }
}

function invalidOption(key: string, value: number, expected: string): ClawError {
  return new ClawError(
    `RetryingProvider: ${key} must be ${expected}, not ${value}; fix the option or leave it out`,
    { code: 'config_invalid' },
  );
}
