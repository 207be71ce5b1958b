import { ClawError } from '@claw/core';

/** The session already has a running task (RT-1, RT-5: one at a time per session). */
export class SessionBusyError extends ClawError {
  readonly sessionId: string;
  /** The task that is running. */
  readonly taskId: string;

  constructor(sessionId: string, taskId: string) {
    super(
      `session ${JSON.stringify(sessionId)} is already running a task (${taskId}); wait for it ` +
      'to end or interrupt it first',
      { code: 'session_busy' },
    );
    this.sessionId = sessionId;
    this.taskId = taskId;
  }
}

/** No runtime has this id (it was never created, or was destroyed). */
export class UnknownRuntimeError extends ClawError {
  readonly runtimeId: string;

  constructor(runtimeId: string) {
    super(`no runtime with id ${JSON.stringify(runtimeId)}`, { code: 'unknown_runtime' });
    this.runtimeId = runtimeId;
  }
}

/** The runtime or factory was closed; nothing more can be started on it. */
export class RuntimeClosedError extends ClawError {
  constructor(what: string) {
    super(`${what} is closed; create a new one`, { code: 'runtime_closed' });
  }
}
