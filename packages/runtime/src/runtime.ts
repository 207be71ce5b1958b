import type { AgentSession, Reporter } from '@claw/core';
import type { Engine, RunResult } from '@claw/engine';
import { RuntimeBusyError, RuntimeClosedError } from './errors.js';
import { Task } from './task.js';

export interface RuntimeOptions {
  id: string;
  engine: Engine;
  session: AgentSession;
  /** Used by `start` when it is given none. */
  reporter?: Reporter;
  /** Called once when the runtime closes (e.g. to release what the factory made for it). */
  onClose?: () => Promise<void> | void;
}

/**
 * One conversation's agent (RT-1): an engine on a session, running at most one task at a time.
 */
export class Runtime {
  readonly id: string;
  readonly session: AgentSession;
  readonly engine: Engine;
  private readonly defaultReporter: Reporter | undefined;
  private readonly onClose: (() => Promise<void> | void) | undefined;
  private active: Task | undefined;
  private taskCount = 0;
  private closing: Promise<void> | undefined;

  constructor(options: RuntimeOptions) {
    this.id = options.id;
    this.engine = options.engine;
    this.session = options.session;
    this.defaultReporter = options.reporter;
    this.onClose = options.onClose;
  }

  /** The running task, if any. */
  get activeTask(): Task | undefined {
    return this.active;
  }

  /**
   * Starts a task at once and returns it; the run goes on in the background.
   *
   * @throws RuntimeBusyError when a task is still running; RuntimeClosedError after `close()`.
   */
  start(prompt: string, reporter?: Reporter): Task {
    if (this.closing !== undefined) throw new RuntimeClosedError(`runtime ${this.id}`);
    if (this.active !== undefined) throw new RuntimeBusyError(this.id);
    this.taskCount += 1;
    const runReporter = reporter ?? this.defaultReporter;
    const task = new Task(`${this.id}-task-${this.taskCount}`, (signal) =>
      this.engine.run(prompt, {
        session: this.session,
        signal,
        ...(runReporter === undefined ? {} : { reporter: runReporter }),
      }),
    );
    this.active = task;
    void task.wait().then(() => {
      if (this.active === task) this.active = undefined;
    });
    return task;
  }

  /** Cancels the running task, if any. */
  cancel(reason?: unknown): void {
    this.active?.cancel(reason);
  }

  /** Cancels the running task, waits for it to end, and releases the runtime. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const task = this.active;
      task?.cancel(new Error(`runtime ${this.id} was closed`));
      if (task !== undefined) await task.wait();
      await this.onClose?.();
    })();
    return this.closing;
  }

  /** Waits for the running task, if any. */
  async idle(): Promise<RunResult | undefined> {
    return this.active?.wait();
  }
}
