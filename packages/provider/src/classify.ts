import { ClawError } from '@claw/core';
import { ContextLengthExceededError, HttpError, ModelServerError, NetworkError } from './errors.js';
import { ModelTimeoutError, PartialResponseError } from './retry-errors.js';

/**
 * What to do about a failed model call (PRV-2): `canceled` — the caller stopped it, never retry;
 * `retryable` — a transient failure, another attempt may succeed; `fatal` — retrying cannot help.
 */
export type ErrorClassification = 'canceled' | 'retryable' | 'fatal';

export interface ClassifyErrorOptions {
  /** The caller's signal: when it is aborted, every error is `canceled`. */
  signal?: AbortSignal | undefined;
}

/**
 * HTTP statuses worth another attempt: 408 (request timeout), 409 (conflict: the API's lock
 * timeouts), 429 (rate limit) and every 5xx. This is the set the official OpenAI and Anthropic
 * clients retry. Everything else (400, 401, 403, 404, 422, …) is a problem with the request or
 * the account that the same request will hit again.
 */
function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || (status >= 500 && status <= 599);
}

/** An abort (`AbortError`), a deadline (`TimeoutError` from `AbortSignal.timeout`), or claw's. */
function isAbort(error: unknown): boolean {
  if (error instanceof ClawError) return error.code === 'aborted';
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');
}

const maxCauseDepth = 32;

/** Every error in `error`'s cause chain (and `AggregateError` members), outermost first. */
function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  const pending: unknown[] = [error];
  while (pending.length > 0 && chain.length < maxCauseDepth) {
    const current = pending.shift();
    if (current === undefined || current === null || chain.includes(current)) continue;
    chain.push(current);
    if (current instanceof AggregateError) pending.push(...(current.errors as unknown[]));
    if (current instanceof Error) pending.push(current.cause);
  }
  return chain;
}

/**
 * Classifies a failed model call (PRV-2). It knows no SDK: it reads claw's own errors anywhere in
 * the cause chain, so wrapping (`new ClawError('turn 3: …', { cause })`) keeps the class. In order:
 *
 * 1. `canceled` when `options.signal` is aborted, or the chain holds an abort: an error named
 *    `AbortError` (or `TimeoutError`, a caller's deadline) or a `ClawError` with code `aborted`.
 * 2. `fatal` when the chain holds a `PartialResponseError`: part of the reply was shown already.
 * 3. The outermost `HttpError`, `NetworkError`, `ModelTimeoutError` or `ModelServerError`
 *    decides: `retryable` for HTTP 408, 409, 429 and 5xx, for every `NetworkError`
 *    (`network_error`, `network_timeout`, `stream_incomplete`), for every model timeout and for
 *    a `ModelServerError` whose code names a transient failure (its `retryable`); `fatal` for any
 *    other HTTP status and server error, and always for a `ContextLengthExceededError` (the same
 *    request would not fit again, whatever status it came with).
 * 4. `fatal` for everything else, local errors above all (a request that could not be built,
 *    invalid tool JSON): sending the same thing again cannot help.
 */
export function classifyError(
  error: unknown,
  options: ClassifyErrorOptions = {},
): ErrorClassification {
  if (options.signal?.aborted === true) return 'canceled';
  const chain = causeChain(error);
  if (chain.some(isAbort)) return 'canceled';
  if (chain.some((item) => item instanceof PartialResponseError)) return 'fatal';
  for (const item of chain) {
    if (item instanceof ContextLengthExceededError) return 'fatal';
    if (item instanceof HttpError) return isRetryableStatus(item.status) ? 'retryable' : 'fatal';
    if (item instanceof ModelServerError) return item.retryable ? 'retryable' : 'fatal';
    if (item instanceof NetworkError || item instanceof ModelTimeoutError) return 'retryable';
  }
  return 'fatal';
}
