import type { ApprovalHandler, ApprovalMode } from '@claw/approval';
import {
  errorMessage,
  Listeners,
  type Message,
  type Reporter,
  type Compaction,
  type SessionEventOf,
  type TextFileAccess,
  type SessionRunState,
  type TaskToolProgress,
  type ToolCall,
  type ToolMessage,
} from '@claw/core';
import type { RunResult } from '@claw/engine';
import {
  describeRepair,
  toolCallIncompleteText,
  type OpenTask,
  type PersistentSession,
  type RepairedCall,
  type SessionLease,
} from '@claw/session-store';
import type { SessionEnvironment } from '@claw/engine';
import { SessionBusyError } from './errors.js';
import type { ProjectInstructions } from './instructions.js';
import {
  SessionEventLog,
  sessionEndOf,
  type EventRetention,
  type SubscriberBound,
} from './event-log.js';
import { createTaskReporter, type TaskReporter } from './event-reporter.js';
import { SessionApprovals } from './session-approvals.js';
import { Task } from './task.js';

/** What a task needs from the factory: run the engine on this session with this handler. */
export type TaskRunner = (options: {
  prompt: string;
  session: PersistentSession;
  reporter: Reporter;
  approvals: ApprovalHandler;
  /** The approval mode of the runtime that started the task (default: the settings'). */
  mode: ApprovalMode | undefined;
  signal: AbortSignal;
  /** Calls to make again instead of starting from the prompt (see `RunOptions.resumeCalls`). */
  resumeCalls?: readonly ToolCall[];
  /** Compact the conversation instead of running the prompt (`Runtime.compact`, CMP-5). */
  compact?: { focus?: string };
  /** The file system of the client that started the task (an editor's, ACP-4). */
  files?: TextFileAccess;
}) => Promise<RunResult>;

/** Options of `SessionHost.start`. */
export interface StartOptions {
  /** A library user's reporter: awaited, its failure stops the run (ENG-7). */
  reporter?: Reporter;
  /** Overrides the settings' approval mode for this task. */
  mode?: ApprovalMode;
  /**
   * The file tools read and write through this instead of the local disk (an editor's file
   * system, ACP-4), after their usual checks.
   */
  files?: TextFileAccess;
}

/** A session as a client that (re)attaches sees it (RT-4). */
export interface SessionView {
  sessionId: string;
  workDir: string;
  state: SessionRunState;
  /** The seq of the last event this view includes: subscribe with `after: seq` to go on. */
  seq: number;
  /** The history (messages) so far. */
  history: readonly Message[];
  /** The questions waiting for an answer, as their `approval_request` events. */
  pendingApprovals: Array<SessionEventOf<'approval_request'>>;
  /**
   * The requests for input from MCP servers waiting for an answer (MCP-7), as their events (a
   * session another instance runs: as its stored events say).
   */
  pendingElicitations?: Array<SessionEventOf<'elicitation_request'>>;
  /** The running task, if any. */
  task?: { id: string; prompt: string };
  /** The conversation's latest compaction (CMP-4), if any. */
  compaction?: Compaction;
  /**
   * The project instruction files the model is given (REAL-2), in order; absent when this process
   * does not know them (a session another instance runs).
   */
  instructions?: ReadonlyArray<{ path: string; bytes: number; truncated?: boolean }>;
}

/**
 * What the model is told about where a session works (REAL-1, REAL-2), collected once when the
 * session's host is made and the same for every request of its tasks.
 */
export interface SessionContext {
  /** The environment block's facts; absent: none is sent. */
  environment?: SessionEnvironment;
  instructions: ProjectInstructions;
}

/** What a `SessionHost` owns and runs: the session's lease, workspace and task runner. */
export interface SessionHostOptions {
  lease: SessionLease;
  workDir: string;
  runTask: TaskRunner;
  retention?: EventRetention;
  subscriberBound?: SubscriberBound;
  /**
   * Takes one use of the host for a task while it runs (its users are its runtimes and its
   * running task: a host is not let go while a task runs); the returned function gives it up,
   * and rejects with what letting the host go then failed with. Default: nothing to take.
   */
  hold?: () => () => Promise<void>;
  /** Called once the host let its session go (`release`). Default: nothing. */
  onReleased?: () => void;
  /**
   * A task the previous process left waiting for approvals goes on here: its questions are
   * asked again (SCALE-3). Default false: it is ended as interrupted.
   */
  resumeInterrupted?: boolean;
  /** What the model is told about where the session works. Default: nothing. */
  context?: SessionContext;
  /**
   * Told of a failure in the host's background work, which has nobody to throw to: ending a
   * task (its last events, storing and releasing the session after it). Default: ignored — the
   * host goes on either way; nothing of it becomes an unhandled rejection.
   */
  onError?: (error: unknown, what: string) => void;
}

/**
 * The one owner of a session in a process (RT-5): it holds the session (and through its lease
 * the lock against other processes), its event log, its approvals and its run lock — at most one
 * task at a time, whoever starts it. Runtimes and channel clients use it, and so does its running
 * task (`hold`): whoever counts the uses (the factory) lets the session go (`release`) when the
 * last one ended (a task outlives its clients, CH-10).
 */
export class SessionHost {
  readonly sessionId: string;
  readonly workDir: string;
  readonly session: PersistentSession;
  readonly events: SessionEventLog;
  readonly approvals: SessionApprovals;
  /** What the model is told about where the session works (REAL-1, REAL-2). */
  readonly context: SessionContext;
  private readonly lease: SessionLease;
  private readonly runTask: TaskRunner;
  private readonly hold: () => () => Promise<void>;
  private readonly onReleased: () => void;
  private readonly onError: (error: unknown, what: string) => void;
  private runState: SessionRunState = 'idle';
  private active: { task: Task; prompt: string } | undefined;
  /** The end of the last task started (its last events, and giving its use back). */
  private ending: Promise<void> | undefined;
  private releasing: Promise<void> | undefined;
  /**
   * Why `close` let the session go, whoever was attached: set once it began (`undefined` until
   * then, and only then).
   */
  private closeReason: unknown;
  /** Who hears the progress of the tools of the session's tasks (see `onToolProgress`). */
  private readonly progressListeners = new Listeners<TaskToolProgress>();

  constructor(options: SessionHostOptions) {
    this.lease = options.lease;
    this.session = options.lease.session;
    this.sessionId = this.session.id;
    this.workDir = options.workDir;
    this.runTask = options.runTask;
    this.hold = options.hold ?? (() => async () => undefined);
    this.onReleased = options.onReleased ?? (() => undefined);
    this.onError = options.onError ?? (() => undefined);
    this.context = options.context ?? { instructions: { files: [], warnings: [] } };
    this.events = new SessionEventLog({
      session: this.session,
      // A retry of a failed write that fails too has nobody to throw to: reported like the rest.
      onError: (error, what) => this.onError(error, what),
      ...(options.retention === undefined ? {} : { retention: options.retention }),
      ...(options.subscriberBound === undefined
        ? {}
        : { subscriberBound: options.subscriberBound }),
    });
    this.approvals = new SessionApprovals({
      log: this.events,
      sessionId: this.sessionId,
      workDir: this.workDir,
      onChange: (pending) => {
        if (this.active !== undefined) this.setState(pending > 0 ? 'awaiting_approval' : 'running');
      },
    });
    this.endInterruptedTask(options.resumeInterrupted === true);
  }

  /**
   * A task the session's previous process left running (it stopped, or lost the session to this
   * one, SES-7, SCALE-3) never ends by itself: its events end it here, so that whoever follows the
   * session sees how it ended. Its open questions (and requests for input) are closed, each of
   * its calls without a stored `tool_result` event gets one (what its Observation tells the model
   * since repair: never started, started with an unknown outcome, or the result it stored; no
   * tool runs again), then `task_failed` (`task_interrupted`) and the `idle` state. With
   * `resume`, a task that was waiting for approvals goes on instead: the calls it asked about
   * (which never ran) are made again under new ids, so their questions are raised again.
   */
  private endInterruptedTask(resume: boolean): void {
    const open = this.session.openTask();
    if (open === undefined) return;
    const { taskId } = open;
    const repaired = this.session.lastRepair();
    const asked = resume ? resumableCalls(open.approvals, repaired) : [];
    for (const request of open.approvals) {
      this.events.append({
        type: 'approval_resolved',
        task_id: taskId,
        request_id: request.request_id,
        decision: 'deny',
        by: 'canceled',
      });
    }
    // A request for input lives only as long as the process that asked (its MCP server waits on
    // it): it is withdrawn, also when the task goes on.
    for (const request of open.elicitations ?? []) {
      this.events.append({
        type: 'elicitation_resolved',
        task_id: taskId,
        request_id: request.request_id,
        action: 'cancel',
        by: 'canceled',
      });
    }
    for (const result of unansweredResults(open, repaired, this.session.history())) {
      this.events.append({ type: 'tool_result', task_id: taskId, ...result });
    }
    if (asked.length > 0) {
      this.begin(taskId, open.prompt, {}, asked);
      return;
    }
    this.events.append({
      type: 'task_failed',
      task_id: taskId,
      error:
        'the task was interrupted: the claw process that ran it stopped (or lost the session) ' +
        `before it ended${repaired.length === 0 ? '' : `; ${describeRepair(repaired).join('; ')} (no tool was run again)`}`,
      code: 'task_interrupted',
    });
    if (open.state !== 'idle') this.events.append({ type: 'state', state: 'idle' });
  }

  get state(): SessionRunState {
    return this.runState;
  }

  /** The running task, if any. */
  get activeTask(): Task | undefined {
    return this.active?.task;
  }

  /** True once the host let its session go; use a new host then. */
  get released(): boolean {
    return this.releasing !== undefined;
  }

  /**
   * Starts a task at once and returns it (RT-1); its events go to the session's event log, and
   * to `reporter` too when one is given (awaited: its failure stops the run, ENG-7).
   *
   * @throws SessionBusyError when a task is running on this session; SessionEndedError (or the
   *   store's `lease_lost` error) once the host let the session go or lost it.
   */
  start(prompt: string, options: StartOptions = {}): Task {
    const running = this.active;
    if (running !== undefined) throw new SessionBusyError(this.sessionId, running.task.id);
    this.checkOpen();
    const taskId = `task-${this.session.lastEventSeq() + 1}`;
    this.events.append({ type: 'task_started', task_id: taskId, content: prompt });
    return this.begin(taskId, prompt, options);
  }

  /**
   * Compacts the conversation now (CMP-5), as a task of its own (`/compact` is what it started
   * with): one at a time with the session's other tasks, its summary call counted and its events
   * (`context_compacted`, `usage`) logged like a task's. The task ends with what was done, or
   * `nothing to compact`.
   *
   * @throws SessionBusyError when a task is running on this session.
   */
  compact(options: StartOptions & { focus?: string } = {}): Task {
    const running = this.active;
    if (running !== undefined) throw new SessionBusyError(this.sessionId, running.task.id);
    this.checkOpen();
    const taskId = `task-${this.session.lastEventSeq() + 1}`;
    const focus = options.focus?.trim() ?? '';
    const command = focus === '' ? '/compact' : `/compact ${focus}`;
    this.events.append({ type: 'task_started', task_id: taskId, content: command });
    return this.begin(taskId, command, options, undefined, focus === '' ? {} : { focus });
  }

  /**
   * Calls `listener` with the progress the tools of the session's tasks report, from now until
   * the returned function is called. Progress is not a session event: it is not kept or
   * numbered, and nobody who was not listening when it came gets it. A listener that throws
   * misses that report; the others still get it.
   */
  onToolProgress(listener: (progress: TaskToolProgress) => void): () => void {
    return this.progressListeners.add(listener);
  }

  /** Runs the task `taskId` (its `task_started` is already in the events). */
  private begin(
    taskId: string,
    prompt: string,
    options: StartOptions,
    resumeCalls?: readonly ToolCall[],
    compact?: { focus?: string },
  ): Task {
    const taskReporter = createTaskReporter(this.events, taskId, options.reporter, (report) => {
      this.progressListeners.emit({ ...report, taskId });
    });
    this.approvals.setTask(taskId);
    // The task is a user of the host until it ended: the host is not let go under it.
    const giveBack = this.hold();
    const task = new Task(taskId, (signal) =>
      this.runTask({
        prompt,
        session: this.session,
        reporter: taskReporter.reporter,
        approvals: this.approvals,
        mode: options.mode,
        signal,
        ...(resumeCalls === undefined ? {} : { resumeCalls }),
        ...(compact === undefined ? {} : { compact }),
        ...(options.files === undefined ? {} : { files: options.files }),
      }),
    );
    this.active = { task, prompt };
    this.setState('running', taskId);
    this.ending = task.wait()
      .then((result) => this.end(task, result, taskReporter, giveBack))
      .catch((error: unknown) => {
        // A session that could not be stored on release (its store is down, or its lease was
        // lost): said, and never an unhandled rejection that would end the process.
        this.onError(error, `ending task ${taskId} of session ${JSON.stringify(this.sessionId)}`);
      });
    return task;
  }

  /**
   * The task ended: its last events, then the session is idle again — also when an event cannot
   * be numbered (a store that was closed), so that the host is never left busy (RT-7) — and the
   * task gives its use of the host back (the last use lets the session go).
   */
  private async end(
    task: Task,
    result: RunResult,
    taskReporter: TaskReporter,
    giveBack: () => Promise<void>,
  ): Promise<void> {
    try {
      try {
        // Questions still open (a run that failed while asking) are settled before the end.
        this.approvals.cancelAll(new Error('the task ended'));
        taskReporter.closeOpenCalls('tool call canceled');
        this.events.append(endEvent(task.id, result, task.signal));
      } finally {
        this.active = undefined;
        this.approvals.setTask(undefined);
      }
      // The state changes before its event is numbered: idle even if that fails.
      this.setState('idle');
    } finally {
      await giveBack();
    }
  }

  /** @throws why the session can no longer be used here, once it was let go or lost. */
  private checkOpen(): void {
    const ended = this.events.ended;
    if (ended !== undefined) throw ended;
    if (this.closeReason !== undefined || this.releasing !== undefined) {
      throw sessionEndOf(this.closeReason, this.sessionId);
    }
  }

  /** Cancels the running task (and its questions), if any. */
  cancel(reason: unknown = new Error('the task was canceled')): void {
    const task = this.active?.task;
    if (task === undefined) return;
    task.cancel(reason);
    this.approvals.cancelAll(reason instanceof Error ? reason : new Error(errorMessage(reason)));
  }

  /** The session as a client that attaches now sees it (RT-4). */
  view(): SessionView {
    const active = this.active;
    return {
      sessionId: this.sessionId,
      workDir: this.workDir,
      state: this.runState,
      seq: this.events.assignedSeq,
      history: [...this.session.history()],
      pendingApprovals: this.approvals.pending(),
      pendingElicitations: this.approvals.pendingElicitations(),
      ...(active === undefined ? {} : { task: { id: active.task.id, prompt: active.prompt } }),
      ...(this.session.compaction() === undefined ? {} : { compaction: this.session.compaction() }),
      instructions: this.context.instructions.files.map((file) => ({
        path: file.path,
        bytes: file.bytes,
        ...(file.truncated === true ? { truncated: true } : {}),
      })),
    };
  }

  /**
   * Cancels the task, waits for it, stores the session and lets it go, whoever is attached
   * (shutdown, a lost lease). Its event log's subscribers end with why (`SessionEndedError`:
   * `lease_lost`, `store_unavailable` or `session_dropped`, after the events stored before), and
   * so do the starts of the runtimes still attached: their clients open the session again.
   *
   * @throws what storing or releasing the session threw.
   */
  async close(reason: unknown = new Error('the session was closed')): Promise<void> {
    this.closeReason ??= reason;
    const task = this.active?.task;
    if (task !== undefined) {
      this.cancel(reason);
      await task.wait();
    }
    // The task's last events are in before the log ends.
    await this.ending;
    await this.release();
  }

  /**
   * Lets the session go: its event log ends (with `close`'s reason, if it was closed), the
   * session is stored and released, and `onReleased` is told. For when nothing uses the host any
   * more (no runtime, no task); idempotent.
   *
   * @throws what storing or releasing the session threw.
   */
  release(): Promise<void> {
    this.releasing ??= (async () => {
      // A host closed with a reason ends its followers with it; one nobody uses just ends.
      this.events.close(this.closeReason);
      try {
        await this.lease.release();
      } finally {
        this.onReleased();
      }
    })();
    return this.releasing;
  }

  private setState(state: SessionRunState, taskId?: string): void {
    if (state === this.runState) return;
    this.runState = state;
    const task = taskId ?? this.active?.task.id;
    this.events.append(task === undefined ? { type: 'state', state } : { type: 'state', state, task_id: task });
  }
}

function endEvent(
  taskId: string,
  result: RunResult,
  signal: AbortSignal,
): Parameters<SessionEventLog['append']>[0] {
  switch (result.status) {
    case 'completed':
      return { type: 'task_completed', task_id: taskId, content: result.finalText };
    case 'canceled': {
      const reason: unknown = signal.reason;
      return {
        type: 'task_canceled',
        task_id: taskId,
        ...(reason === undefined ? {} : { reason: errorMessage(reason) }),
      };
    }
    case 'failed':
    case 'max_turns':
      return {
        type: 'task_failed',
        task_id: taskId,
        error: result.error?.message ?? `the task ended with status ${result.status}`,
        code: result.error?.code ?? result.status,
      };
  }
}

/**
 * The calls of an interrupted task that were waiting for an answer and never ran, with new
 * ids, to be asked about again. Matched to the questions by tool and arguments.
 */
function resumableCalls(
  approvals: ReadonlyArray<SessionEventOf<'approval_request'>>,
  repaired: readonly RepairedCall[],
): ToolCall[] {
  const waiting = [...approvals];
  const calls: ToolCall[] = [];
  for (const { call, state } of repaired) {
    // Waiting for an answer means it never ran (the gate comes first), also when no journal
    // could tell ("incomplete": the session's first call).
    if (state !== 'never_started' && state !== 'incomplete') continue;
    const index = waiting.findIndex(
      (asked) => asked.tool_name === call.name && asked.arguments === call.arguments,
    );
    if (index < 0) continue;
    waiting.splice(index, 1);
    calls.push({ ...call, id: `${call.id}-resumed` });
  }
  return calls;
}

/**
 * The `tool_result` events an interrupted task still owes, with what each call's Observation
 * says: one for each of its calls whose own is not stored (`OpenTask.calls`), whichever process
 * repaired the history (a process that repaired it and stopped before it ended the task leaves
 * this one nothing in `lastRepair`), and one for each call this process's repair paired without a
 * stored result (one asked about before its `tool_call` event). A call whose result event was
 * stored gets none: never two.
 */
function unansweredResults(
  open: OpenTask,
  repaired: readonly RepairedCall[],
  history: readonly Message[],
): Array<{ tool_call_id: string; tool_name: string; result: string; is_error: boolean }> {
  const calls = new Map((open.calls ?? []).map((call) => [call.id, call.name]));
  for (const { call, state } of repaired) {
    if (state !== 'recovered' && !calls.has(call.id)) calls.set(call.id, call.name);
  }
  return [...calls].map(([id, name]) => {
    const observation = history.findLast(
      (message): message is ToolMessage => message.role === 'tool' && message.toolCallId === id,
    );
    return {
      tool_call_id: id,
      tool_name: name,
      result: observation?.content ?? toolCallIncompleteText,
      is_error: observation === undefined ? true : observation.isError === true,
    };
  });
}
