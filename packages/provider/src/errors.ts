import { ClawError, abortReason, findError } from '@claw/core';
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  OpenAIError,
} from 'openai';

/**
 * The model API answered with an HTTP error status. The SDK's own error is kept as `cause`; find
 * an `HttpError` anywhere in a wrapped chain with `findHttpError`.
 */
export class HttpError extends ClawError {
  readonly status: number;
  /** How long the server asked us to wait before retrying (`retry-after`), when it said. */
  readonly retryAfterMs: number | undefined;

  constructor(
    message: string,
    options: { status: number; retryAfterMs?: number | undefined; cause?: unknown },
  ) {
    super(message, { code: 'http_error', cause: options.cause });
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * The model API could not be reached, the connection broke, or a stream ended before the reply
 * was complete (`code` is `network_error`, `network_timeout` or `stream_incomplete`).
 */
export class NetworkError extends ClawError {
  constructor(
    message: string,
    options: { code?: 'network_error' | 'network_timeout' | 'stream_incomplete'; cause?: unknown },
  ) {
    super(message, { code: options.code ?? 'network_error', cause: options.cause });
  }
}

/** The first `HttpError` in `error`'s cause chain, however deeply it was wrapped. */
export function findHttpError(error: unknown): HttpError | undefined {
  return findError(error, HttpError);
}

const statusHints: Record<number, string> = {
  400: 'the server rejected the request; check the model name and the request parameters',
  401: 'check the API key',
  403: 'the API key is not allowed to use this model or endpoint',
  404: 'check the model name and the base URL',
  429: 'rate limited or out of quota; wait and retry, or check the account',
};

function statusHint(status: number): string {
  return statusHints[status] ?? (status >= 500 ? 'the model server failed; retry later' : '');
}

/** Parses `retry-after-ms` or `retry-after` (seconds or an HTTP date) into milliseconds. */
export function parseRetryAfter(
  headers: Headers | undefined,
  now = Date.now(),
): number | undefined {
  if (headers === undefined) return undefined;
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  const seconds = Number.parseFloat(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Translates anything the `openai` SDK (or `fetch` under it) throws into claw's own errors, so
 * that nothing above this package needs to know the SDK (PRV-1, PRV-2). An aborted `signal` wins
 * over whatever error the abort produced: the caller gets the signal's reason. `baseURL`, the
 * API's address, is named when it cannot be reached.
 */
export function translateError(
  error: unknown,
  signal: AbortSignal | undefined,
  baseURL?: string,
): Error {
  if (signal?.aborted === true) return abortReason(signal);
  if (error instanceof ClawError) return error;
  if (error instanceof APIUserAbortError) {
    return new ClawError('model request aborted', { code: 'aborted', cause: error });
  }
  if (error instanceof APIConnectionTimeoutError) {
    return new NetworkError('model request timed out at the network level', {
      code: 'network_timeout',
      cause: error,
    });
  }
  if (error instanceof APIConnectionError) {
    const where = baseURL === undefined ? '' : ` at ${baseURL}`;
    return new NetworkError(
      `could not reach the model API${where}: ${describeCause(error)} (is the server up, and is ` +
      'that its address?)',
      { cause: error },
    );
  }
  if (error instanceof APIError) {
    if (typeof error.status === 'number') {
      const hint = statusHint(error.status);
      return new HttpError(
        `model API returned HTTP ${error.status}: ${error.message}${hint ? ` (${hint})` : ''}`,
        {
          status: error.status,
          retryAfterMs: parseRetryAfter(error.headers as Headers | undefined),
          cause: error,
        },
      );
    }
    return new ClawError(`model API reported an error in the stream: ${error.message}`, {
      code: 'model_stream_error',
      cause: error,
    });
  }
  if (error instanceof OpenAIError) {
    return new ClawError(`model client error: ${error.message}`, {
      code: 'provider_error',
      cause: error,
    });
  }
  // undici rejects a body read on a broken connection with a TypeError ("terminated").
  if (error instanceof TypeError) {
    return new NetworkError(`connection to the model API failed: ${describeCause(error)}`, {
      cause: error,
    });
  }
  if (error instanceof SyntaxError) {
    return new ClawError(`model API sent malformed data: ${error.message}`, {
      code: 'invalid_response',
      cause: error,
    });
  }
  return new ClawError(`model call failed: ${String(error)}`, {
    code: 'provider_error',
    cause: error,
  });
}

/** An error's message and its causes' (those that say more), joined: `a: b: c`. */
function describeCause(error: Error): string {
  // The SDK's "Connection error." would read "Connection error.: fetch failed".
  const text = (message: string) => message.replace(/\.$/, '');
  const parts = [text(error.message)];
  let cause: unknown = error.cause;
  for (let depth = 0; cause instanceof Error && depth < 4; depth += 1) {
    if (!parts.includes(text(cause.message))) parts.push(text(cause.message));
    cause = cause.cause;
  }
  return parts.join(': ');
}
