import { ClawError, abortReason, findError, hasErrorCode } from '@claw/core';
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  OpenAIError,
} from 'openai';
import { cameAsErrorReply } from './fetch-guard.js';
import {
  describeServerCode,
  isContextLengthError,
  isRetryableServerError,
  readServerError,
  type ServerErrorInfo,
} from './server-errors.js';

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
    options: {
      status: number;
      retryAfterMs?: number | undefined;
      cause?: unknown;
      /** For subclasses; default `http_error`. */
      code?: string;
    },
  ) {
    super(message, { code: options.code ?? 'http_error', cause: options.cause });
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** Where a server's error came from: an HTTP error status, an SSE event, or a 200 reply body. */
export type ServerErrorSource = 'http' | 'stream' | 'reply';

/**
 * The request no longer fits the model's context window (REAL-6): the server answered HTTP 400
 * or 413 with code `context_length_exceeded` or words to that effect, or sent such an error in
 * the stream or as a 200 reply. `code` is `context_length_exceeded`. It is an `HttpError`, so
 * `findHttpError` still finds it: `status` is the HTTP status, or for an error reported in the
 * stream or a 200 reply the error's own numeric 4xx code (400 when it gave none). Never retried
 * as it is (`classifyError` says `fatal`): the conversation has to shrink first. Test for it
 * with `isContextLengthExceeded`.
 */
export class ContextLengthExceededError extends HttpError {
  /** What the server said, in its own words. */
  readonly serverMessage: string;

  constructor(options: {
    status: number;
    serverMessage: string;
    source: ServerErrorSource;
    retryAfterMs?: number | undefined;
    cause?: unknown;
  }) {
    const said = options.serverMessage === '' ? '' : `: the server said "${options.serverMessage}"`;
    const where = { http: `HTTP ${options.status}`, stream: 'in the stream', reply: 'in its reply' }[
      options.source
    ];
    super(
      `the conversation no longer fits the model's context window${said} (${where}). Start a ` +
      'new session or shorten the conversation (fewer or smaller files and tool outputs), or ' +
      'use a model or server setting with a larger context window.',
      {
        status: options.status,
        retryAfterMs: options.retryAfterMs,
        cause: options.cause,
        code: 'context_length_exceeded',
      },
    );
    this.serverMessage = options.serverMessage;
  }
}

/**
 * True when `error`, or anything in its cause chain, says the request no longer fits the
 * model's context window (a `ContextLengthExceededError`, or any `ClawError` with code
 * `context_length_exceeded`).
 */
export function isContextLengthExceeded(error: unknown): boolean {
  return hasErrorCode(error, 'context_length_exceeded');
}

/**
 * The model server reported an error instead of (the rest of) a reply, with HTTP status 200: an
 * `error` object sent as an SSE `data:` event mid-stream (OpenRouter, vLLM, llama.cpp, OpenAI),
 * a `finish_reason: "error"` chunk, or a 200 reply whose body is an error object (some gateways).
 * `code` is `model_stream_error`; `retryable` says what `classifyError` makes of it: true for
 * numeric codes 408/409/429/5xx and for names of transient failures (`server_error`,
 * `rate_limit_exceeded`, `overloaded`, `timeout`, `service_unavailable`, …), false otherwise.
 */
export class ModelServerError extends ClawError {
  readonly retryable: boolean;
  /** The server's `error.code`, when it sent one. */
  readonly serverCode: string | number | undefined;
  /** The server's `error.type`, when it sent one. */
  readonly serverType: string | undefined;
  /** What the server said, in its own words (empty when it said nothing). */
  readonly serverMessage: string;

  constructor(
    info: ServerErrorInfo,
    options: {
      source: 'stream' | 'reply';
      cause?: unknown;
      /** Overrides what the code says (for an error that came without one). */
      retryable?: boolean;
    },
  ) {
    const retryable = options.retryable ?? isRetryableServerError(info);
    const what =
      options.source === 'stream'
        ? 'the model server reported an error in the stream'
        : 'the model server answered with an error instead of a reply';
    const said = info.message === '' ? ' (no message)' : `: ${info.message}`;
    const hint = retryable
      ? 'it failed on its side; retry later'
      : "it will not accept this request as it is; check the model name, the request and the server's log";
    super(`${what}${said}${describeServerCode(info)}; ${hint}`, {
      code: 'model_stream_error',
      cause: options.cause,
    });
    this.retryable = retryable;
    this.serverCode = info.code;
    this.serverType = info.type;
    this.serverMessage = info.message;
  }
}

/**
 * The error for an `error` payload a server sent with status 200 (in the stream, or as the reply
 * body): a `ContextLengthExceededError` when it says the request does not fit, otherwise a
 * `ModelServerError` classified by its code.
 */
export function serverReportedError(
  payload: unknown,
  options: { source: 'stream' | 'reply'; cause?: unknown },
): ContextLengthExceededError | ModelServerError {
  const info = readServerError(payload);
  if (isContextLengthError(info)) {
    const status = typeof info.code === 'number' && info.code >= 400 && info.code <= 499 ? info.code : 400;
    return new ContextLengthExceededError({
      status,
      serverMessage: info.message,
      source: options.source,
      cause: options.cause,
    });
  }
  return new ModelServerError(info, options);
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
 * API's address, is named when it cannot be reached. An HTTP status becomes an `HttpError`
 * (a `ContextLengthExceededError` for a 400/413 that says the request does not fit); an `error`
 * object in the stream (or in a 200 reply) becomes a `ModelServerError` or a
 * `ContextLengthExceededError` (REAL-6).
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
      const retryAfterMs = parseRetryAfter(error.headers as Headers | undefined);
      const info = readServerError(error.error);
      if ((error.status === 400 || error.status === 413) && isContextLengthError(info)) {
        return new ContextLengthExceededError({
          status: error.status,
          serverMessage: info.message,
          source: 'http',
          retryAfterMs,
          cause: error,
        });
      }
      const hint = statusHint(error.status);
      return new HttpError(
        `model API returned HTTP ${error.status}: ${error.message}${hint ? ` (${hint})` : ''}`,
        { status: error.status, retryAfterMs, cause: error },
      );
    }
    // No status: the SDK found an `error` object in an SSE event of a 200 response (or in the
    // 200 reply that `guardFetch` turned into one).
    return serverReportedError(error.error ?? error.message, {
      source: cameAsErrorReply(error.headers) ? 'reply' : 'stream',
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
