import { ClawError } from '@claw/core';

/**
 * `.claw/a2a.json` cannot be used: not JSON, a peer that breaks the rules, or a `${VAR}` that is
 * not set. The user fixes it (`userError`). Code `a2a_config_invalid`.
 */
export class A2aConfigError extends ClawError {
  readonly file: string;
  /** The peer the problem is in, when it is in one. */
  readonly peer: string | undefined;

  constructor(message: string, options: { file: string; peer?: string; cause?: unknown }) {
    super(message, { code: 'a2a_config_invalid', cause: options.cause, userError: true });
    this.file = options.file;
    this.peer = options.peer;
  }
}

/**
 * A remote agent could not be reached or used: no agent card, a refused request, a broken
 * answer. Codes: `a2a_unreachable`, `a2a_auth_failed`, `a2a_request_failed`.
 */
export class A2aRemoteError extends ClawError {
  /** The agent card URL or endpoint that was used. */
  readonly url: string;

  constructor(message: string, options: { code: string; url: string; cause?: unknown }) {
    super(message, { code: options.code, cause: options.cause });
    this.url = options.url;
  }
}
