import type { RunResult } from '@claw/engine';

export type TaskStatus = 'running' | RunResult['status'];

/**
 * One run started by `Runtime.start` (RT-1): it runs in the background from the moment it is
 * created; `wait()` gives its result (never rejects), `cancel()` stops it (ENG-5).
 */
export class Task {
  readonly id: string;
  private readonly controller = new AbortController();
  private readonly result: Promise<RunResult>;
  private finalStatus: RunResult['status'] | undefined;

  constructor(id: string, run: (signal: AbortSignal) => Promise<RunResult>) {
    this.id = id;
    this.result = run(this.controller.signal).then((result) => {
      this.finalStatus = result.status;
      return result;
    });
  }

  get status(): TaskStatus {
    return this.finalStatus ?? 'running';
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
