import type { ApprovalHandler, ApprovalMode } from '@claw/approval';
import { errorMessage, isTaskEndEvent, type SessionEventOf } from '@claw/core';
import { ChannelConnection, type RuntimeSource } from './connection.js';
import type { ChannelError } from './errors.js';
import type { CloseReason } from './outbound-queue.js';
import type { ServerEvent } from './protocol.js';

/** The event that ended a task. */
export type TaskEndEvent = SessionEventOf<'task_completed' | 'task_canceled' | 'task_failed'>;

/**
 * One task for `streamTask`: the session and prompt, where its events go, who answers approvals.
 */
export interface StreamTaskOptions {
  runtimes: RuntimeSource;
  workDir: string;
  sessionId: string;
  prompt: string;
  /**
   * Writes output: one or more whole lines, each a JSON event and its newline (the events that
   * waited for the output go out in one write); rejects when it cannot.
   */
  write: (line: string) => Promise<void>;
  /** Told of each event as it is written (up to the task's end), e.g. to count what it did. */
  onEvent?: (event: ServerEvent) => void;
  /** Who answers approvals (a terminal, or an unattended denial). */
  approvalHandler?: ApprovalHandler;
  approval?: ApprovalMode;
  /** Aborting cancels the task (Ctrl-C); the stream still ends with `task_canceled`. */
  signal?: AbortSignal;
  /** A name for the connection (the `by` of approval answers). Default `stdio`. */
  name?: string;
}

/** How a streamed task went. */
export type StreamTaskResult =
  | { ok: true; end: TaskEndEvent }
  /** The session could not be opened or the task not started (the error was streamed too). */
  | { ok: false; error: ChannelError }
  /** The output broke (a closed pipe): the task was canceled. */
  | { ok: false; closed: CloseReason };

/**
 * Runs one task and streams its events as JSON lines (CLI-7): the stdio transport of the
 * channel protocol, the same `ChannelConnection` and events a server sends. The stream starts
 * with `session_opened` (the session's new events only, no history) and ends with the task's
 * `task_completed`, `task_canceled` or `task_failed`.
 */
export async function streamTask(options: StreamTaskOptions): Promise<StreamTaskResult> {
  let taskId: string | undefined;
  let ending = false;
  let resolveEnd!: (end: TaskEndEvent) => void;
  const ended = new Promise<TaskEndEvent>((resolve) => {
    resolveEnd = resolve;
  });
  const connection = new ChannelConnection({
    runtimes: options.runtimes,
    name: options.name ?? 'stdio',
    // Nobody can reconnect to a one-shot stream: its task must not run on unseen.
    endTasksOnClose: true,
    workspaces: [options.workDir],
    ...(options.approvalHandler === undefined ? {} : { approvalHandler: options.approvalHandler }),
    ...(options.approval === undefined ? {} : { approval: options.approval }),
    writer: {
      write: (json: string, event: ServerEvent) => writeLines([{ json, event }]),
      // Everything waiting goes out in one write: one system call for the events of a turn.
      writeBatch: (items) => writeLines(items),
      close: () => undefined,
    },
  });
  /** Writes events up to and including the task's end; nothing after it. */
  async function writeLines(
    items: ReadonlyArray<{ json: string; event: ServerEvent }>,
  ): Promise<void> {
    if (ending) return;
    let text = '';
    let end: TaskEndEvent | undefined;
    for (const { json, event } of items) {
      text += `${json}\n`;
      options.onEvent?.(event);
      if (isTaskEndEvent(event) && 'task_id' in event && event.task_id === taskId) {
        end = event;
        break;
      }
    }
    if (end !== undefined) ending = true;
    await options.write(text);
    if (end !== undefined) resolveEnd(end);
  }
  const onAbort = (): void => {
    if (taskId !== undefined) connection.interrupt(errorMessage(options.signal?.reason));
  };
  try {
    const opened = await connection.open({ sessionId: options.sessionId, after: 'latest' });
    if (!opened.ok) {
      await connection.flush();
      return { ok: false, error: opened.error };
    }
    try {
      taskId = await connection.prompt(options.prompt, opened.sessionId);
    } catch (error) {
      await connection.flush();
      return { ok: false, error: error as ChannelError };
    }
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted === true) onAbort();
    return await Promise.race([
      ended.then((end) => ({ ok: true as const, end })),
      connection.closed.then((closed) => ({ ok: false as const, closed })),
    ]);
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    await connection.close();
  }
}
