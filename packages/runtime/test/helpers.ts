import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SessionEvent, SessionEventBody, Tool } from '@claw/core';
import { plainCommandSpawner } from '@claw/sandbox';
import { ScriptedProvider, type ScriptedStep } from '@claw/testing';
import {
  RuntimeFactory,
  defaultSettings,
  type EventSource,
  type RuntimeFactoryOptions,
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

export async function cleanUp(): Promise<void> {
  await Promise.allSettled([...factories].map((factory) => factory.close()));
  factories.clear();
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

/** Waits (polling every 5 ms, at most 5 s) until `check` holds; fails the test otherwise. */
/**
 * Resolves once the `setImmediate` callbacks that the work of this turn of the event loop scheduled
 * (its microtasks included) ran: the event log checks its subscribers' bounds then, not on every
 * settled write. Two turns, because that work may schedule its own after this one's.
 */
export async function nextTurn(): Promise<void> {
  for (let turn = 0; turn < 2; turn += 1) await new Promise((resolve) => setImmediate(resolve));
}

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

/** An event source whose writes settle as the test says. */
export function heldEventSource(): EventSource & { settle: (error?: Error) => void } {
  let seq = 0;
  const pending: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  return {
    id: 's',
    lastEventSeq: () => seq,
    storedEvents: () => [],
    appendEvent: (body: SessionEventBody) => {
      seq += 1;
      const event = { ...body, session_id: 's', seq, at: new Date(0).toISOString() };
      const written = new Promise<void>((resolve, reject) => pending.push({ resolve, reject }));
      return { event, written };
    },
    settle: (error) => {
      for (const { resolve, reject } of pending.splice(0)) {
        if (error === undefined) resolve();
        else reject(error);
      }
    },
  };
}
