import { ClawError, emptyUsage, errorMessage } from '@claw/core';
import type { RunResult } from '@claw/engine';

/** Where a `Task` is: still running, or how its run ended. */
export type TaskStatus = 'running' | RunResult['status'];

/**
 * One run started by `Runtime.start` (RT-1): it runs in the background from the moment it is
 * created; `wait()` gives its result and never rejects (a run that rejects is a failed task,
 * RT-7), `cancel()` stops it (ENG-5).
 */
export class Task {
  readonly id: string;
  private readonly controller = new AbortController();
  private readonly result: Promise<RunResult>;
  private finalStatus: RunResult['status'] | undefined;

  constructor(id: string, run: (signal: AbortSignal) => Promise<RunResult>) {
    this.id = id;
    let started: Promise<RunResult>;
    try {
      started = run(this.controller.signal);
    } catch (error) {
      // A run that throws at once is a failed task too.
      started = Promise.reject(error instanceof Error ? error : new Error(errorMessage(error)));
    }
    this.result = started
      .catch((error: unknown): RunResult => failedResult(error))
      .then((result) => {
        this.finalStatus = result.status;
        return result;
      });
  }

  get status(): TaskStatus {
    return this.finalStatus ?? 'running';
  }

  /** The signal the run listens to (aborted by `cancel`). */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The run's result, once it ended (completed, canceled, failed or max_turns). */
  wait(): Promise<RunResult> {
    return this.result;
  }

  /** Cancels the run; a no-op once it ended. */
  cancel(reason: unknown = new Error('the task was canceled')): void {
    this.controller.abort(reason);
  }
}

function failedResult(error: unknown): RunResult {
  return {
    status: 'failed',
    finalText: '',
    error:
      error instanceof ClawError
        ? error
        : new ClawError(`the task failed: ${errorMessage(error)}`, { code: 'run_failed', cause: error }),
    turns: 0,
    usage: { ...emptyUsage },
    cost: { usd: 0, unpricedCalls: 0 },
    toolWallMs: 0,
    subagents: 0,
  };
}
