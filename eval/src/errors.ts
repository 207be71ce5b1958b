import { ClawError } from '@claw/core';

/** Codes of the errors claw-eval throws. */
export type EvalErrorCode =
  | 'case_invalid'
  | 'case_duplicate'
  | 'cases_unreadable'
  | 'usage'
  | 'results_invalid'
  | 'baseline_missing'
  | 'baseline_invalid'
  | 'script_invalid'
  | 'config_missing'
  | 'harness_failed';

/** An error of claw-eval itself (a bad case, a bad command line, a file it cannot use). */
export class EvalError extends ClawError {
  declare readonly code: EvalErrorCode;

  constructor(
    message: string,
    options: { code: EvalErrorCode; cause?: unknown; userError?: boolean },
  ) {
    super(message, options);
  }
}
