import { ClawError } from '@claw/core';

/** The command line is wrong; the message says what is wrong and what to do (exit status 2). */
export class UsageError extends ClawError {
  constructor(message: string) {
    super(message, { code: 'usage' });
  }
}

/** Codes of errors that mean "fix the setup and run again", not "the task failed". */
const configurationCodes = new Set([
  'usage',
  'config_invalid',
  'config_unreadable',
  'config_missing',
  'isolation_unavailable',
  'isolation_invalid_options',
  'invalid_session_id',
  'session_corrupt',
  'session_version_unsupported',
  'session_read_failed',
  'session_workdir_conflict',
]);

/** True for errors that exit with status 2: usage and configuration errors. */
export function isConfigurationError(error: unknown): error is ClawError {
  return error instanceof ClawError && configurationCodes.has(error.code);
}
