import { ClawError } from '@claw/core';

/** A runtime already has an active task (RT-1: one at a time). */
export class RuntimeBusyError extends ClawError {
  constructor(runtimeId: string) {
    super(
      `runtime ${runtimeId} is already running a task; wait for it or cancel it first`,
      { code: 'runtime_busy' },
    );
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
