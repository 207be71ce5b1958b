import {
  errorMessage,
  type ApprovalDecision,
  type ElicitationAction,
  type SessionEvent,
  type SessionRunState,
  type TaskToolProgress,
} from '@claw/core';
import type { CursorExpiredError, SubscriberBound } from './event-log.js';
import type { RemoteSession } from './remote-session.js';
import type { SessionView } from './session-host.js';

/**
 * What a client (a channel connection) needs of its handle on a session: a {@link Runtime} when
 * this process owns the session, a {@link RemoteRuntime} when another one does (SCALE-4). Starting,
 * canceling and answering may then take a round trip to the owner.
 */
export interface RuntimeHandle {
  readonly id: string;
  readonly sessionId: string;
  readonly workDir: string;
  readonly activeTask: { readonly id: string } | undefined;
  readonly state: SessionRunState;
  snapshot(): SessionView;
  cursorError(after: number): CursorExpiredError | undefined;
  events(options?: {
    after?: number;
    signal?: AbortSignal;
    bound?: SubscriberBound;
  }): AsyncIterableIterator<SessionEvent>;
  /** The progress of the session's running tools, as it comes; returns the unsubscribe. */
  onToolProgress(listener: (progress: TaskToolProgress) => void): () => void;
  /** @throws SessionBusyError when a task runs on the session. */
  start(prompt: string): { readonly id: string } | Promise<{ readonly id: string }>;
  /**
   * Compacts the conversation as a task (CMP-5); absent where it cannot be done (a session
   * another instance runs).
   *
   * @throws SessionBusyError when a task runs on the session.
   */
  compact?(options?: { focus?: string }): { readonly id: string };
  cancel(reason?: unknown): void | Promise<void>;
  /** @throws ApprovalNotPendingError when it is not waiting (any more): the first answer won. */
  respond(requestId: string, decision: ApprovalDecision, by?: string): void | Promise<void>;
  /**
   * Answers a request for input from an MCP server (MCP-7), through the owner when another
   * instance runs the session; absent where it cannot be done.
   *
   * @throws ElicitationAnswerError when it is not waiting (any more) or does not fit the form.
   */
  respondElicitation?(
    requestId: string,
    answer: { action: ElicitationAction; content?: Readonly<Record<string, unknown>> },
    by?: string,
  ): void | Promise<void>;
  close(options?: { cancel?: boolean }): Promise<void>;
}

/**
 * One client's handle on a session another process owns (SCALE-4): events from the
 * {@link RemoteSession} this process keeps of it, requests handed to the owner.
 */
export class RemoteRuntime implements RuntimeHandle {
  readonly id: string;
  readonly sessionId: string;
  readonly workDir: string;
  private readonly remote: RemoteSession;
  private readonly onClose: () => Promise<void> | void;
  private closing: Promise<void> | undefined;

  constructor(options: { id: string; remote: RemoteSession; onClose: () => Promise<void> | void }) {
    this.id = options.id;
    this.remote = options.remote;
    this.sessionId = options.remote.sessionId;
    this.workDir = options.remote.workDir;
    this.onClose = options.onClose;
  }

  get activeTask(): { readonly id: string } | undefined {
    return this.remote.activeTask;
  }

  get state(): SessionRunState {
    return this.remote.state;
  }

  snapshot(): SessionView {
    return this.remote.view();
  }

  cursorError(after: number): CursorExpiredError | undefined {
    return this.remote.cursorError(after);
  }

  events(
    options: { after?: number; signal?: AbortSignal; bound?: SubscriberBound } = {},
  ): AsyncIterableIterator<SessionEvent> {
    return this.remote.events.events(options);
  }

  /**
   * The progress of the session's running tools as the owner relays it: best effort (the relay
   * may drop reports, or relay none); the task itself is followed by its events.
   */
  onToolProgress(listener: (progress: TaskToolProgress) => void): () => void {
    return this.remote.onToolProgress(listener);
  }

  start(prompt: string): Promise<{ readonly id: string }> {
    return this.remote.start(prompt, this.id);
  }

  cancel(reason?: unknown): Promise<void> {
    return this.remote.cancel(reason === undefined ? 'the task was canceled' : errorMessage(reason), this.id);
  }

  respond(requestId: string, decision: ApprovalDecision, by?: string): Promise<void> {
    return this.remote.respond(requestId, decision, by ?? this.id);
  }

  /** @throws ElicitationAnswerError when the owner does not take the answer. */
  respondElicitation(
    requestId: string,
    answer: { action: ElicitationAction; content?: Readonly<Record<string, unknown>> },
    by?: string,
  ): Promise<void> {
    return this.remote.respondElicitation(requestId, answer, by ?? this.id);
  }

  /** Leaves the session (a remote task is never canceled by a client leaving). Idempotent. */
  close(): Promise<void> {
    this.closing ??= Promise.resolve(this.onClose());
    return this.closing;
  }
}
