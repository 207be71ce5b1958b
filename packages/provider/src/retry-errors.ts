import { ClawError, errorMessage, findError } from '@claw/core';

/**
 * A streamed reply failed after part of it had already been passed on (PRV-4). It is never
 * retried (`classifyError` says `fatal`): a second attempt would show the same text twice. The
 * failure that broke the stream (an `HttpError`, a `NetworkError`, a `ModelTimeoutError`, …) is
 * kept as `cause`, so `findHttpError` and `findError` still reach it.
 *
 * Create one with `PartialResponseError.wrap`, which never wraps a partial response twice; the
 * constructor is public only so that `findError(error, PartialResponseError)` works.
 */
export class PartialResponseError extends ClawError {
  constructor(cause: unknown) {
    super(
      'the model reply broke off after part of it was already shown, so it was not retried ' +
      `(a retry would repeat it): ${errorMessage(cause)}. Ask again to get a complete reply.`,
      { code: 'partial_response', cause },
    );
  }

  /**
   * `cause` as a partial response: a new `PartialResponseError` around it, or, when `cause`
   * already is one or wraps one, that existing error as is (never wrapped twice).
   */
  static wrap(cause: unknown): PartialResponseError {
    return findError(cause, PartialResponseError) ?? new PartialResponseError(cause);
  }
}

/** Which of the model timeouts fired (PRV-5, REAL-3). */
export type ModelTimeoutKind = 'call' | 'first_token' | 'idle';

const timeoutCodes: Record<ModelTimeoutKind, string> = {
  call: 'model_call_timeout',
  first_token: 'model_first_token_timeout',
  idle: 'model_stream_idle_timeout',
};

/**
 * A model call ran out of time (PRV-5): `code` is `model_call_timeout` when one attempt as a whole
 * took longer than the call timeout, `model_first_token_timeout` when a stream sent no content
 * within the first-token timeout, `model_stream_idle_timeout` when the model sent no content for
 * the idle timeout (a stream that went silent, or a non-streaming call with no call timeout that
 * got no reply). Retryable while nothing was passed on; after that it arrives as the `cause` of a
 * `PartialResponseError`. A timeout is never a cancellation: the caller's own abort always wins
 * over it.
 */
export class ModelTimeoutError extends ClawError {
  readonly kind: ModelTimeoutKind;
  /** The limit that was exceeded, in milliseconds. */
  readonly timeoutMs: number;

  constructor(kind: ModelTimeoutKind, timeoutMs: number) {
    super(timeoutMessage(kind, `${Number((timeoutMs / 1000).toFixed(3))}s`), {
      code: timeoutCodes[kind],
    });
    this.kind = kind;
    this.timeoutMs = timeoutMs;
  }
}

function timeoutMessage(kind: ModelTimeoutKind, seconds: string): string {
  switch (kind) {
    case 'call':
      return `model call timed out after ${seconds} (no complete reply in time; retry later, ` +
        'or raise the call timeout if replies are long)';
    case 'first_token':
      return `model first token timed out after ${seconds} (the model sent nothing in time and ` +
        'may be overloaded; retry later, or raise the first-token timeout)';
    case 'idle':
      return `model stream went silent for ${seconds} (no content for that long: the server may ` +
        'be stuck or overloaded; retry later, or raise --stream-idle-timeout-ms)';
  }
}
