import { ClawError, errorMessage } from '@claw/core';

/**
 * A client message that could not be carried out; it becomes an `error` event with this `code`
 * and the connection stays usable (CH-1).
 */
export class ChannelError extends ClawError {
  readonly sessionId: string | undefined;
  readonly requestId: string | undefined;
  readonly oldestSeq: number | undefined;

  constructor(
    message: string,
    options: {
      code: string;
      sessionId?: string;
      requestId?: string;
      oldestSeq?: number;
      cause?: unknown;
      /** True when it stems from a usage or configuration error (see `isUserError`). */
      userError?: boolean;
    },
  ) {
    super(message, {
      code: options.code,
      cause: options.cause,
      ...(options.userError === undefined ? {} : { userError: options.userError }),
    });
    this.sessionId = options.sessionId;
    this.requestId = options.requestId;
    this.oldestSeq = options.oldestSeq;
  }
}

/** Any failure as a `ChannelError` (a `ClawError` keeps its code and `userError`). */
export function toChannelError(error: unknown, sessionId?: string): ChannelError {
  if (error instanceof ChannelError) return error;
  if (error instanceof ClawError) {
    return new ChannelError(error.message, {
      code: error.code,
      ...(sessionId === undefined ? {} : { sessionId }),
      cause: error,
      userError: error.userError,
    });
  }
  return new ChannelError(`internal error: ${errorMessage(error)}`, {
    code: 'internal_error',
    ...(sessionId === undefined ? {} : { sessionId }),
    cause: error,
  });
}
