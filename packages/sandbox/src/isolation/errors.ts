import { SandboxError } from '../errors.js';

/** The codes an `IsolationError` carries. Safe to switch on. */
export type IsolationErrorCode =
  | 'isolation_unavailable'
  | 'isolation_invalid_options'
  | 'isolation_invalid_command'
  | 'isolation_spawn_failed'
  | 'seccomp_assembly_failed';

/**
 * The root of the errors the bash isolation (SBX-4) throws: a `SandboxError`; switch on `code` or
 * use the subclasses.
 */
export class IsolationError extends SandboxError {
  declare readonly code: IsolationErrorCode;

  constructor(
    message: string,
    options: { code: IsolationErrorCode; cause?: unknown; userError?: boolean },
  ) {
    super(message, options);
  }
}

/**
 * Isolation was required (`isolation: 'required'`) but bubblewrap does not work on this machine
 * (`code` is `isolation_unavailable`). `reason` says what failed; the message also says how to fix
 * it.
 */
export class IsolationUnavailableError extends IsolationError {
  /** What failed, as the probe reported it. */
  readonly reason: string;

  constructor(message: string, options: { reason: string; cause?: unknown }) {
    // Fixed by installing bubblewrap or changing the setting: a configuration error.
    super(message, { code: 'isolation_unavailable', cause: options.cause, userError: true });
    this.reason = options.reason;
  }
}

/**
 * An isolation option has a value that cannot work: an unknown `isolation` setting, a process
 * limit that is not a whole number of at least 2, an environment entry that bubblewrap cannot pass
 * (`code` is `isolation_invalid_options`).
 */
export class IsolationOptionsError extends IsolationError {
  constructor(message: string) {
    super(message, { code: 'isolation_invalid_options', userError: true });
  }
}
