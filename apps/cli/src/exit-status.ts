/**
 * The exit statuses of `claw` (CLI-6). Scripts depend on them: keep them stable.
 */
export const exitStatus = {
  /** The task completed; in the REPL, `/exit` or the end of input. */
  completed: 0,
  /** The task failed: a model or tool error, a budget, or the turn limit. */
  failed: 1,
  /** Bad command line or configuration (config file, missing API key, required isolation). */
  usage: 2,
  /** Canceled by Ctrl-C (SIGINT); in the REPL, Ctrl-C when no task runs. */
  canceled: 130,
  /** Stopped by SIGTERM (the running task is canceled first). */
  terminated: 143,
} as const;

/** The status for a stop by `signal`: 143 for SIGTERM, else 130. */
export function statusForSignal(signal: NodeJS.Signals): number {
  return signal === 'SIGTERM' ? exitStatus.terminated : exitStatus.canceled;
}
