import { TaskState, type ListTasksRequest, type ListTasksResponse, type Task } from '@a2a-js/sdk';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';

/** How long a finished inbound task stays answerable by default (24 h, TRUST-6). */
export const defaultTaskRetentionMs = 24 * 60 * 60_000;

/** How many finished inbound tasks are remembered at most by default. */
export const defaultMaxFinishedTasks = 10_000;

/** How much memory (roughly, in bytes) finished inbound tasks may take by default (64 MiB). */
export const defaultMaxFinishedTaskBytes = 64 * 1024 * 1024;

/** The time of an {@link InboundTaskStore} (tests drive it). */
export interface InboundTaskClock {
  now(): number;
  /** Calls `callback` after `ms`; the returned function cancels it. */
  setTimer(callback: () => void, ms: number): () => void;
}

export interface InboundTaskStoreOptions {
  /** How long a finished task stays answerable (`GetTask`); default 24 h. 0: not at all. */
  retentionMs?: number;
  /** The most finished tasks remembered; beyond it the oldest is forgotten. Default 10,000. */
  maxFinished?: number;
  /**
   * The most memory finished tasks may take, as the length of their JSON (a user message may be
   * up to the request size); beyond it the oldest is forgotten. Default 64 MiB.
   */
  maxFinishedBytes?: number;
  /** Default: `Date.now` and `setTimeout` (unreferenced: it never keeps the process alive). */
  clock?: InboundTaskClock;
}

interface Kept {
  task: Task;
  scope: string;
}

interface Finished extends Kept {
  expiresAt: number;
  size: number;
}

// A task in one of these states runs no more: completed, failed, canceled, input required,
// rejected, auth required. claw ends its tasks completed, failed or canceled.
const settledStates = new Set<number>([3, 4, 5, 6, 7, 8]);

// The longest delay `setTimeout` keeps (about 24.8 days); a longer one fires at once.
const longestTimerMs = 2 ** 31 - 1;

const defaultClock: InboundTaskClock = {
  now: () => Date.now(),
  setTimer: (callback, ms) => {
    const timer = setTimeout(callback, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/**
 * The SDK's `TaskStore` for claw's inbound tasks (TRUST-6), one for the whole server. A claw
 * session (`a2a-<task id>`) is the lasting record of an inbound task; the A2A `Task` here is only
 * what the protocol answers with. A running task is kept while it runs (the limit on inbound
 * tasks bounds how many do); a finished one stays answerable by `GetTask` for `retentionMs`
 * (default 24 h), then is forgotten and `GetTask` answers task-not-found. Within that window at
 * most `maxFinished` finished tasks (default 10,000) of at most `maxFinishedBytes` in all
 * (default 64 MiB) are remembered, the oldest forgotten first, so memory stays bounded under any
 * load. One timer, set for the oldest finished task, forgets what expired.
 *
 * Tasks are scoped like the SDK's `InMemoryTaskStore` (tenant, then the caller's user name). They
 * live in memory only: after a restart their sessions remain, but `GetTask` no longer knows them.
 */
export class InboundTaskStore implements TaskStore {
  private readonly retentionMs: number;
  private readonly maxFinished: number;
  private readonly maxFinishedBytes: number;
  private readonly clock: InboundTaskClock;
  private readonly running = new Map<string, Kept>();
  // In the order they finished, so the first is the oldest (and the first to expire).
  private readonly finished = new Map<string, Finished>();
  private finishedBytes = 0;
  private timer: { at: number; cancel: () => void } | undefined;
  private closed = false;

  /** @throws RangeError for a negative retention or a cap below 1. */
  constructor(options: InboundTaskStoreOptions = {}) {
    this.retentionMs = options.retentionMs ?? defaultTaskRetentionMs;
    this.maxFinished = options.maxFinished ?? defaultMaxFinishedTasks;
    this.maxFinishedBytes = options.maxFinishedBytes ?? defaultMaxFinishedTaskBytes;
    this.clock = options.clock ?? defaultClock;
    if (!(this.retentionMs >= 0)) {
      throw new RangeError(`the task retention must be 0 ms or more, got ${this.retentionMs}`);
    }
    if (!(this.maxFinished >= 1) || !(this.maxFinishedBytes >= 1)) {
      throw new RangeError('the caps on finished tasks must be at least 1');
    }
  }

  /** How many tasks are kept now: running, and finished (still answerable). */
  get size(): { running: number; finished: number } {
    return { running: this.running.size, finished: this.finished.size };
  }

  async save(task: Task, context: ServerCallContext): Promise<void> {
    if (this.closed) return;
    const scope = scopeOf(context);
    const key = keyOf(scope, task.id);
    const copy = structuredClone(task);
    this.forgetFinished(key);
    if (!settledStates.has(task.status?.state ?? 0)) {
      this.running.set(key, { task: copy, scope });
      return;
    }
    this.running.delete(key);
    this.finished.set(key, {
      task: copy,
      scope,
      expiresAt: this.clock.now() + this.retentionMs,
      size: sizeOf(copy),
    });
    this.finishedBytes += this.finished.get(key)?.size ?? 0;
    this.evictOverCaps();
    this.forgetExpired();
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const key = keyOf(scopeOf(context), taskId);
    const running = this.running.get(key);
    if (running !== undefined) return structuredClone(running.task);
    // A timer may not have fired yet (a busy loop, a clock that jumped): expiry is checked here.
    this.forgetExpired();
    const finished = this.finished.get(key);
    return finished === undefined ? undefined : structuredClone(finished.task);
  }

  /** `ListTasks`, with the filters and paging of the SDK's `InMemoryTaskStore`. */
  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    this.forgetExpired();
    const scope = scopeOf(context);
    const pageSize = params.pageSize ?? 50;
    const after = params.statusTimestampAfter === undefined || params.statusTimestampAfter === ''
      ? undefined
      : new Date(params.statusTimestampAfter).getTime();
    let tasks = [...this.running.values(), ...this.finished.values()]
      .filter((kept) => kept.scope === scope)
      .map((kept) => kept.task)
      .filter((task) => params.contextId === '' || task.contextId === params.contextId)
      .filter((task) =>
        params.status === TaskState.TASK_STATE_UNSPECIFIED || task.status?.state === params.status)
      .filter((task) => after === undefined || timeOf(task) > after)
      .sort((a, b) => {
        const byTime = (b.status?.timestamp ?? '').localeCompare(a.status?.timestamp ?? '');
        return byTime !== 0 ? byTime : b.id.localeCompare(a.id);
      });
    const totalSize = tasks.length;
    if (params.pageToken !== '') {
      const cursor = await decodePageToken(params.pageToken);
      const index = tasks.findIndex((task) =>
        (task.status?.timestamp ?? '') === cursor.timestamp && task.id === cursor.id);
      tasks = index === -1 ? [] : tasks.slice(index + 1);
    }
    const page = tasks.slice(0, pageSize);
    const last = page.at(-1);
    return {
      tasks: page.map((task) => {
        const copy = structuredClone(task);
        if (params.includeArtifacts !== true) copy.artifacts = [];
        return copy;
      }),
      nextPageToken: last !== undefined && tasks.length > page.length
        ? Buffer.from(`${last.status?.timestamp ?? ''}|${last.id}`).toString('base64')
        : '',
      pageSize,
      totalSize,
    };
  }

  /** Forgets every task and stops the timer (the server stops); later saves are ignored. */
  close(): void {
    this.closed = true;
    this.timer?.cancel();
    this.timer = undefined;
    this.running.clear();
    this.finished.clear();
    this.finishedBytes = 0;
  }

  private forgetFinished(key: string): void {
    const entry = this.finished.get(key);
    if (entry === undefined) return;
    this.finished.delete(key);
    this.finishedBytes -= entry.size;
  }

  private evictOverCaps(): void {
    for (const key of this.finished.keys()) {
      if (this.finished.size <= this.maxFinished && this.finishedBytes <= this.maxFinishedBytes) {
        break;
      }
      this.forgetFinished(key);
    }
  }

  /** Forgets what expired, then sets the timer for the oldest finished task left. */
  private forgetExpired(): void {
    const now = this.clock.now();
    for (const [key, entry] of this.finished) {
      if (entry.expiresAt > now) break;
      this.forgetFinished(key);
    }
    const oldest = this.finished.values().next().value;
    if (this.timer !== undefined && this.timer.at === oldest?.expiresAt) return;
    this.timer?.cancel();
    this.timer = undefined;
    if (oldest === undefined || this.closed) return;
    const cancel = this.clock.setTimer(() => {
      this.timer = undefined;
      this.forgetExpired();
    }, Math.min(Math.max(oldest.expiresAt - now, 0), longestTimerMs));
    this.timer = { at: oldest.expiresAt, cancel };
  }
}

function scopeOf(context: ServerCallContext): string {
  // As the SDK's `resolveUserScope`: the tenant, then the caller's user name.
  return `${context.tenant ?? ''}\u0000${context.user?.userName || 'unknown'}`;
}

function keyOf(scope: string, taskId: string): string {
  return `${scope}\u0000${taskId}`;
}

function timeOf(task: Task): number {
  const stamp = task.status?.timestamp;
  return stamp === undefined ? Number.NaN : new Date(stamp).getTime();
}

/** The length of the task's JSON, as a measure of its memory; big when it cannot be measured. */
function sizeOf(task: Task): number {
  try {
    return JSON.stringify(task).length;
  } catch {
    return 1024 * 1024;
  }
}

async function decodePageToken(token: string): Promise<{ timestamp: string; id: string }> {
  const [timestamp, ...id] = Buffer.from(token, 'base64').toString('utf8').split('|');
  if (timestamp === undefined || id.length === 0) {
    const { RequestMalformedError } = await import('@a2a-js/sdk/errors');
    throw new RequestMalformedError('the page token is not one this server gave: list again without it');
  }
  return { timestamp, id: id.join('|') };
}
