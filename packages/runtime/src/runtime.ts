import type { ApprovalMode } from '@claw/approval';
import type {
  ApprovalDecision,
  ElicitationAction,
  Reporter,
  TextFileAccess,
  SessionEvent,
  SessionRunState,
  TaskToolProgress,
} from '@claw/core';
import type { RunResult } from '@claw/engine';
import type { PersistentSession } from '@claw/session-store';
import { RuntimeClosedError } from './errors.js';
import type { CursorExpiredError, SubscriberBound } from './event-log.js';
import type { ProjectInstructions } from './instructions.js';
import type { SessionHost, SessionView } from './session-host.js';
import type { Task } from './task.js';

/** What a `Runtime` is made of (the factory fills it in): its id and its session's host. */
export interface RuntimeOptions {
  id: string;
  host: SessionHost;
  /** Leaves the host; called once by `close`. */
  detach: () => Promise<void>;
  /** Used by `start` when it is given none. */
  reporter?: Reporter;
  /** The approval mode of this runtime's tasks (default: the settings'). */
  mode?: ApprovalMode;
  /** Called once when the runtime closes (e.g. to release what the factory made for it). */
  onClose?: () => Promise<void> | void;
}

/**
 * One client's handle on a session (RT-1, RT-5): many runtimes (a terminal, channel
 * connections) may attach to the same session; they share its one host, so at most one task
 * runs on the session at a time and histories never interleave. A runtime starts tasks, cancels
 * the session's task, reads the session's events (RT-3, RT-4), answers its approvals, and closes.
 */
export class Runtime {
  readonly id: string;
  readonly sessionId: string;
  readonly workDir: string;
  readonly session: PersistentSession;
  private readonly host: SessionHost;
  private readonly detach: () => Promise<void>;
  private readonly defaultReporter: Reporter | undefined;
  private readonly mode: ApprovalMode | undefined;
  private readonly onClose: (() => Promise<void> | void) | undefined;
  private own: Task | undefined;
  private closing: Promise<void> | undefined;

  constructor(options: RuntimeOptions) {
    this.id = options.id;
    this.host = options.host;
    this.sessionId = options.host.sessionId;
    this.workDir = options.host.workDir;
    this.session = options.host.session;
    this.detach = options.detach;
    this.defaultReporter = options.reporter;
    this.mode = options.mode;
    this.onClose = options.onClose;
  }

  /** The task running on the session, whoever started it. */
  get activeTask(): Task | undefined {
    return this.host.activeTask;
  }

  /** What the session is doing. */
  get state(): SessionRunState {
    return this.host.state;
  }

  /**
   * The project instructions the model is given in this session (REAL-2), and the warnings of
   * reading them (files skipped or cut).
   */
  get instructions(): ProjectInstructions {
    return this.host.context.instructions;
  }

  /**
   * Starts a task at once and returns it; the run goes on in the background. Its events go to
   * the session's event log; `reporter` (else the runtime's) also gets every callback, awaited.
   * `options.files`: the file tools go through this file system (an editor's, ACP-4).
   *
   * @throws SessionBusyError when a task is running on the session; RuntimeClosedError after
   *   `close()`.
   */
  start(prompt: string, reporter?: Reporter, options: { files?: TextFileAccess } = {}): Task {
    if (this.closing !== undefined) throw new RuntimeClosedError(`runtime ${this.id}`);
    const runReporter = reporter ?? this.defaultReporter;
    const task = this.host.start(prompt, {
      ...(runReporter === undefined ? {} : { reporter: runReporter }),
      ...(this.mode === undefined ? {} : { mode: this.mode }),
      ...(options.files === undefined ? {} : { files: options.files }),
    });
    this.own = task;
    return task;
  }

  /**
   * Compacts the session's conversation now (CMP-5: `/compact`), as a task (see `start`); `focus`
   * says what the summary must keep.
   *
   * @throws SessionBusyError when a task is running on the session; RuntimeClosedError after
   *   `close()`.
   */
  compact(options: { focus?: string; reporter?: Reporter } = {}): Task {
    if (this.closing !== undefined) throw new RuntimeClosedError(`runtime ${this.id}`);
    const reporter = options.reporter ?? this.defaultReporter;
    const task = this.host.compact({
      ...(options.focus === undefined ? {} : { focus: options.focus }),
      ...(reporter === undefined ? {} : { reporter }),
    });
    this.own = task;
    return task;
  }

  /** Cancels the session's running task (and its pending approvals), if any. */
  cancel(reason?: unknown): void {
    this.host.cancel(reason);
  }

  /**
   * The session's events after `after` (default: from now), then live ones (RT-3, RT-4).
   *
   * @throws CursorExpiredError when `after` cannot be served.
   */
  events(
    options: { after?: number; signal?: AbortSignal; bound?: SubscriberBound } = {},
  ): AsyncIterableIterator<SessionEvent> {
    return this.host.events.events(options);
  }

  /**
   * Calls `listener` with the progress the running tools of the session report, until the
   * returned function is called. Not an event: nothing of it is kept, and it has no seq.
   */
  onToolProgress(listener: (progress: TaskToolProgress) => void): () => void {
    return this.host.onToolProgress(listener);
  }

  /** Why `events({ after })` would be refused now (`cursor_expired`); undefined when it can. */
  cursorError(after: number): CursorExpiredError | undefined {
    return this.host.events.cursorError(after);
  }

  /** The session now: history, state, pending approvals, and the seq to subscribe after. */
  snapshot(): SessionView {
    return this.host.view();
  }

  /**
   * Answers a pending approval of the session; the first answer wins. `by` names who answered
   * (default: this runtime's id).
   *
   * @throws ApprovalNotPendingError when it is not waiting (any more).
   */
  respond(requestId: string, decision: ApprovalDecision, by?: string): void {
    this.host.approvals.respond(requestId, decision, by ?? this.id);
  }

  /**
   * Answers a pending request for input from an MCP server (MCP-7); the first answer wins. An
   * `accept` is checked against the requested form first. `by` names who answered (default:
   * this runtime's id).
   *
   * @throws ElicitationAnswerError `elicitation_not_pending` when it is not waiting (any more);
   *   `invalid_elicitation_answer` when the content does not fit the form (it stays waiting).
   */
  respondElicitation(
    requestId: string,
    answer: { action: ElicitationAction; content?: Readonly<Record<string, unknown>> },
    by?: string,
  ): void {
    this.host.approvals.respondElicitation(requestId, answer, by ?? this.id);
  }

  /**
   * Leaves the session: by default the task this runtime started is canceled first and awaited
   * (`cancel: false` leaves it running: a task outlives its client, CH-10). The session is
   * flushed; the last runtime to leave a session with no task releases it. Idempotent.
   */
  close(options: { cancel?: boolean } = {}): Promise<void> {
    this.closing ??= (async () => {
      const own = this.own;
      if (options.cancel !== false && own !== undefined && this.host.activeTask === own) {
        this.host.cancel(new Error(`runtime ${this.id} was closed`));
        await own.wait();
      }
      try {
        await this.session.flush();
      } finally {
        try {
          await this.detach();
        } finally {
          await this.onClose?.();
        }
      }
    })();
    return this.closing;
  }

  /** Waits for the session's running task, if any. */
  async idle(): Promise<RunResult | undefined> {
    return this.host.activeTask?.wait();
  }
}
