import type { RunResult } from '@claw/engine';
import { exitStatus, statusForSignal } from './exit-status.js';
import type { Style } from './style.js';
import { visible } from './terminal-text.js';

/** The exit status of a one-shot task: 0 completed, 1 failed or max turns, 130/143 canceled. */
export function exitStatusOf(result: RunResult, stopSignal: NodeJS.Signals | undefined): number {
  switch (result.status) {
    case 'completed':
      return exitStatus.completed;
    case 'canceled':
      return statusForSignal(stopSignal ?? 'SIGINT');
    case 'failed':
    case 'max_turns':
      return exitStatus.failed;
  }
}

/** One line saying how a task ended, or undefined when it simply completed. */
export function outcomeLine(result: RunResult, style: Style): string | undefined {
  switch (result.status) {
    case 'completed':
      return undefined;
    case 'canceled':
      return style.yellow('✗ canceled');
    case 'failed':
    case 'max_turns':
      return style.red(`✗ failed: ${visible(result.error?.message ?? result.status)}`);
  }
}
