import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClawError, type SessionEvent, type SessionEventBody, type Tool } from '@claw/core';
import { plainCommandSpawner } from '@claw/sandbox';
import {
  MemoryRelay,
  MemorySessionLog,
  SessionStore,
  type AppendResult,
  type LogRecord,
  type SessionLog,
  type SessionSnapshot,
  type StoredLog,
} from '@claw/session-store';
import { ScriptedProvider, type ScriptedStep } from '@claw/testing';
import {
  RemoteSession,
  RuntimeFactory,
  defaultSettings,
  type EventSource,
  type RuntimeFactoryOptions,
  type SessionSource,
  type Settings,
} from '../src/index.js';

export const settings = (overrides: Partial<Settings> = {}): Settings => ({
  ...defaultSettings,
  apiKey: undefined,
  baseUrl: undefined,
  approval: 'allow',
  ...overrides,
});

const folders = new Set<string>();
const factories = new Set<RuntimeFactory>();
const stores = new Set<SessionStore>();

export async function tempWorkspace(prefix = 'claw-runtime-'): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), prefix));
  folders.add(folder);
  return folder;
}

/** A factory on a scripted model with plain (not isolated) bash; closed by `cleanUp`. */
export function scriptedFactory(
  steps: ScriptedStep[],
  options: Partial<RuntimeFactoryOptions> = {},
): { factory: RuntimeFactory; provider: ScriptedProvider } {
  const provider = new ScriptedProvider(steps);
  const factory = new RuntimeFactory({
    settings: settings(),
    provider,
    spawner: plainCommandSpawner(),
    ...options,
  });
  factories.add(factory);
  return { factory, provider };
}

/**
 * The sessions of one process, stored in `log` (its own, or its instance of a shared one), for
 * `RuntimeFactoryOptions.sessions`; its store is closed by `cleanUp`, after the factories.
 */
export function sessionsIn(log: SessionLog): SessionSource {
  const store = new SessionStore({ log });
  stores.add(store);
  return { open: (id, options) => store.open(id, options), list: () => store.list() };
}

export async function cleanUp(): Promise<void> {
  await Promise.allSettled([...factories].map((factory) => factory.close()));
  factories.clear();
  await Promise.allSettled([...stores].map((store) => store.close()));
  stores.clear();
  await Promise.all([...folders].map((folder) => rm(folder, { recursive: true, force: true })));
  folders.clear();
}

/** Reads `count` events from an iterator. */
export async function take(
  events: AsyncIterator<SessionEvent>,
  count: number,
): Promise<SessionEvent[]> {
  const taken: SessionEvent[] = [];
  while (taken.length < count) {
    const next = await events.next();
    if (next.done === true) break;
    taken.push(next.value);
  }
  return taken;
}

/** Reads events until (and including) the first one `stop` accepts. */
export async function until(
  events: AsyncIterator<SessionEvent>,
  stop: (event: SessionEvent) => boolean,
): Promise<SessionEvent[]> {
  const taken: SessionEvent[] = [];
  for (;;) {
    const next = await events.next();
    if (next.done === true) return taken;
    taken.push(next.value);
    if (stop(next.value)) return taken;
  }
}

export const isTaskEnd = (event: SessionEvent): boolean =>
  event.type === 'task_completed' || event.type === 'task_canceled' || event.type === 'task_failed';

/**
 * Resolves once the `setImmediate` callbacks that the work of this turn of the event loop scheduled
 * (its microtasks included) ran: the event log checks its subscribers' bounds then, not on every
 * settled write. Two turns, because that work may schedule its own after this one's.
 */
export async function nextTurn(): Promise<void> {
  for (let turn = 0; turn < 2; turn += 1) await new Promise((resolve) => setImmediate(resolve));
}

/** Waits (polling every 5 ms, at most 5 s) until `check` holds; fails the test otherwise. */
export async function eventually(check: () => boolean, what = 'the condition'): Promise<void> {
  for (let waited = 0; waited < 5000; waited += 5) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A tool `steps` that reports `count` steps of progress (`step 1` … of `count`), then returns. */
export function progressSteps(count: number): Tool {
  return {
    definition: { name: 'steps', description: `Reports ${count} steps.`, parameters: { type: 'object', properties: {} } },
    risk: 'safe',
    execute: async (_args, context) => {
      for (let step = 1; step <= count; step += 1) context.onProgress?.({ progress: step, total: count, message: `step ${step}` });
      return { content: 'stepped' };
    },
  };
}

/** A promise and what settles it. */
export interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export function deferred(): Deferred {
  let resolve: () => void = () => undefined;
  let reject: (error: unknown) => void = () => undefined;
  const promise = new Promise<void>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  return { promise, resolve, reject };
}

/** A `text_delta` event of task `t`. */
export const delta = (content: string): SessionEventBody => ({ type: 'text_delta', task_id: 't', content });

/** A store that cannot be reached, as it says so. */
export const storeDown = (): ClawError => new ClawError('connection refused', { code: 'store_unavailable' });

/**
 * An event source (session `s`) whose writes settle as the test says, one by one (`writes[seq]`),
 * and whose `flush` calls wait for the test too (`flushes`, oldest first). Stored in order, as a
 * session is: a write that succeeds after a failed one stores that one too.
 */
export function scriptedSource(): EventSource & { writes: Map<number, Deferred>; flushes: Deferred[] } {
  let seq = 0;
  const writes = new Map<number, Deferred>();
  const flushes: Deferred[] = [];
  return {
    id: 's',
    writes,
    flushes,
    lastEventSeq: () => seq,
    storedEvents: () => [],
    appendEvent: (body: SessionEventBody) => {
      seq += 1;
      const event = { ...body, session_id: 's', seq, at: new Date(0).toISOString() };
      const write = deferred();
      writes.set(seq, write);
      return { event, written: write.promise };
    },
    flush: () => {
      const flush = deferred();
      flushes.push(flush);
      return flush.promise;
    },
  };
}

/**
 * An event source whose writes settle as the test says, all those waiting at once (`settle`). It
 * has no `flush`: a failed write waits for a later one, never for a retry.
 */
export function heldEventSource(): EventSource & { settle: (error?: Error) => void } {
  const { flush: _flush, flushes: _flushes, writes, ...source } = scriptedSource();
  return {
    ...source,
    settle: (error) => {
      for (const write of writes.values()) {
        if (error === undefined) write.resolve();
        else write.reject(error);
      }
      writes.clear();
    },
  };
}

/** Reads an iteration to its end: what it yielded, and what it ended with (`undefined`: done). */
export async function drain(
  events: AsyncIterator<SessionEvent>,
): Promise<{ seen: SessionEvent[]; ended: unknown }> {
  const seen: SessionEvent[] = [];
  try {
    for (;;) {
      const next = await events.next();
      if (next.done === true) return { seen, ended: undefined };
      seen.push(next.value);
    }
  } catch (error) {
    return { seen, ended: error };
  }
}

/** A memory log that refuses every write while `down` (a store that cannot be reached). */
export class FlakyLog extends MemorySessionLog {
  down = false;
  /** The writes refused so far. */
  refused = 0;

  override async append(
    id: string,
    records: readonly LogRecord[],
    options: { sync: boolean },
  ): Promise<AppendResult> {
    this.refuse();
    return super.append(id, records, options);
  }

  override async compact(id: string, snapshot: SessionSnapshot): Promise<void> {
    this.refuse();
    await super.compact(id, snapshot);
  }

  private refuse(): void {
    if (!this.down) return;
    this.refused += 1;
    throw storeDown();
  }
}

/**
 * A shared log whose readers find nothing new while `held` (a store that lags behind);
 * `nextLoad` resolves once a load of it returned.
 */
export class HeldRelay extends MemoryRelay {
  held = false;
  private loaded: Array<() => void> = [];

  override readSince(
    id: string,
    afterSeq: number,
    options?: { limit?: number },
  ): ReturnType<MemoryRelay['readSince']> {
    if (this.held) return Promise.resolve({ records: [], oldestSeq: afterSeq + 1 });
    return super.readSince(id, afterSeq, options);
  }

  override async load(id: string): Promise<StoredLog | undefined> {
    const stored = await super.load(id);
    for (const done of this.loaded.splice(0)) done();
    return stored;
  }

  nextLoad(): Promise<void> {
    return new Promise((resolve) => this.loaded.push(resolve));
  }
}

/**
 * Follows session `s` through `relay` (read every 10 ms), as a process that does not own it
 * would; its owner going away is left to the test.
 */
export function followSession(relay: MemoryRelay, workDir: string): Promise<RemoteSession> {
  return RemoteSession.open({
    log: relay,
    relay: relay.relayParts(),
    sessionId: 's',
    workDir,
    pollMs: 10,
    onOwnerGone: () => Promise.resolve(),
  });
}
