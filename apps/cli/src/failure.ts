import { errorMessage, isUserError } from '@claw/core';
import { SessionLockedError } from '@claw/session-store';
import { exitStatus } from './exit-status.js';
import type { Output } from './output.js';
import type { Style } from './style.js';
import { visible } from './terminal-text.js';

/**
 * Says on stderr why `claw` stops and returns the exit status: 2 for a user's error (usage,
 * configuration, a session in use; the message says what to do), 1 for anything else.
 */
export async function reportFailure(error: unknown, stderr: Output, style: Style): Promise<number> {
  if (isUserError(error)) {
    const hint =
      error instanceof SessionLockedError
        ? ' (claw: run with --session <name> to work in another session meanwhile)'
        : '';
    await stderr.line(`${style.red('claw:')} ${visible(error.message)}${hint}`).catch(() => undefined);
    return exitStatus.usage;
  }
  await stderr.line(`${style.red('claw:')} ${visible(errorMessage(error))}`).catch(() => undefined);
  return exitStatus.failed;
}
