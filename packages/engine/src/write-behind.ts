import {
  ClawError,
  errorMessage,
  type AgentSession,
  type Compaction,
  type Message,
  type ToolCall,
  type ToolStartOptions,
  type Usage,
} from '@claw/core';

const settled: Promise<void> = Promise.resolve();

const storageHint =
  "the run was stopped. Check that the session's storage is writable (disk space, " +
  'permissions), then run again';

/** A journal write failed (SES-8): the run stops, since the session can no longer tell what ran. */
export function journalError(
  stage: 'start' | 'end',
  call: Pick<ToolCall, 'id' | 'name'>,
  cause: unknown,
): ClawError {
  return new ClawError(
    `the session could not record the ${stage} of tool call ${call.id} (${call.name}): ` +
    `${errorMessage(cause)}; ${storageHint}`,
    { code: 'tool_journal_failed', cause },
  );
}

/**
 * A write that went on behind the run failed (see `WriteBehindSession`); it stops the run, with
 * the code of what failed (`tool_journal_failed` for the end of a call, else the session's own
 * code, `session_write_failed` when it gave none).
 */
export class WriteBehindError extends ClawError {
  static of(cause: unknown, call?: Pick<ToolCall, 'id' | 'name'>): WriteBehindError {
    if (call !== undefined) {
      const journal = journalError('end', call, cause);
      return new WriteBehindError(journal.message, { code: journal.code, cause });
    }
    if (cause instanceof ClawError) {
      return new WriteBehindError(cause.message, { code: cause.code, cause });
    }
    return new WriteBehindError(
      `the session could not store a change: ${errorMessage(cause)}; ${storageHint}`,
      { code: 'session_write_failed', cause },
    );
  }
}

/**
 * The session as one run uses it, letting its writes run behind the loop (PERF-1) when the
 * session allows it (`AgentSession.changesApplyAtOnce`): appending a message, recording usage and
 * the end of a tool call change the session in memory at once, so the run goes on (builds the
 * next request, calls the model) while they are stored, instead of waiting for each write.
 *
 * Nothing is let through unstored where it matters. Before a tool starts, its intent is recorded
 * as always and every write made before it must have succeeded (`toolStarted` waits for both:
 * the session stores in order, so this costs no extra wait); a failed one stops the tool as a
 * failed intent does. `settle` waits for the rest and throws the first failure; the engine calls
 * it before a run ends, so a run that returns has everything stored, as before. A session without
 * the flag is waited for at each write, as before. A tool wave listens (`onFailure`) so that a
 * failed write stops it at once, as a failed journal write always did.
 */
export class WriteBehindSession implements AgentSession {
  private readonly pending = new Set<Promise<void>>();
  /** The wait of `settle` under way, shared by those who ask meanwhile. */
  private settling: Promise<void> | undefined;
  private failure: WriteBehindError | undefined;
  private readonly listeners = new Set<(error: WriteBehindError) => void>();
  /** Names of the calls whose start was recorded, for the message of a failed end. */
  private readonly callNames = new Map<string, string>();

  /**
   * Stores a compaction once every earlier write is stored (CMP-4): present when the session can
   * store one.
   */
  readonly compact?: (compaction: Compaction) => Promise<void>;

  constructor(private readonly session: AgentSession) {
    const store = session.compact?.bind(session);
    if (store !== undefined) {
      this.compact = async (compaction) => {
        await this.settle();
        await store(compaction);
      };
    }
  }

  compaction(): Compaction | undefined {
    return this.session.compaction?.();
  }

  get id(): string {
    return this.session.id;
  }

  get workDir(): string {
    return this.session.workDir;
  }

  history(): readonly Message[] {
    return this.session.history();
  }

  usage(): Usage {
    return this.session.usage();
  }

  cost(): ReturnType<AgentSession['cost']> {
    return this.session.cost();
  }

  append(...messages: Message[]): Promise<void> {
    return this.behind(() => this.session.append(...messages));
  }

  recordUsage(usage: Usage, costUsd?: number): Promise<void> {
    return this.behind(() => this.session.recordUsage(usage, costUsd));
  }

  beforeRun(): Promise<void> {
    return this.session.beforeRun?.() ?? Promise.resolve();
  }

  /** Rejects with a `WriteBehindError` when an earlier write failed, else as the session's does. */
  async toolStarted(call: ToolCall, options?: ToolStartOptions): Promise<void> {
    this.callNames.set(call.id, call.name);
    const [started, earlier] = await Promise.allSettled([
      this.session.toolStarted?.(call, options),
      this.settle(),
    ]);
    if (earlier.status === 'rejected') throw earlier.reason;
    if (started.status === 'rejected') throw started.reason;
  }

  toolFinished(toolCallId: string): Promise<void> {
    const call = { id: toolCallId, name: this.callNames.get(toolCallId) ?? 'unknown tool' };
    this.callNames.delete(toolCallId);
    return this.behind(() => this.session.toolFinished?.(toolCallId) ?? Promise.resolve(), call);
  }

  /** Calls `listener` with the error of a write that fails from now on; returns the unsubscribe. */
  onFailure(listener: (error: WriteBehindError) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Throws the first write that failed so far, without waiting for those under way. The engine
   * calls it before each model call: a change the session refused at once (a deleted session,
   * say) never leaves a request built from a history that lacks it.
   */
  throwIfFailed(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  /**
   * Waits for every write so far; rejects with the first that failed (and again after). Callers
   * that ask while an earlier call still waits share its wait (the calls of a tool wave each ask
   * before their intent): it ends only once no write is left, theirs included.
   */
  settle(): Promise<void> {
    if (this.pending.size === 0) {
      return this.failure === undefined ? settled : Promise.reject(this.failure);
    }
    this.settling ??= this.waitForPending();
    return this.settling;
  }

  private async waitForPending(): Promise<void> {
    try {
      while (this.pending.size > 0) await Promise.all([...this.pending]);
    } finally {
      this.settling = undefined;
    }
    if (this.failure !== undefined) throw this.failure;
  }

  /** `call`: the write is the end of that tool call. */
  private behind(write: () => Promise<void>, call?: Pick<ToolCall, 'id' | 'name'>): Promise<void> {
    // Waited for at each write: its failure is the caller's, as it always was.
    if (this.session.changesApplyAtOnce !== true) return write();
    const written = write().then(
      () => {
        this.pending.delete(written);
      },
      (cause: unknown) => {
        this.pending.delete(written);
        if (this.failure !== undefined) return;
        const error = WriteBehindError.of(cause, call);
        this.failure = error;
        for (const listener of this.listeners) listener(error);
      },
    );
    this.pending.add(written);
    return Promise.resolve();
  }
}
