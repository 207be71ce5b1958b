import { ClawUserError } from '@claw/core';

/** The command line is wrong; the message says what is wrong and what to do (exit status 2). */
export class UsageError extends ClawUserError {
  constructor(message: string) {
    super(message, { code: 'usage' });
  }
}
