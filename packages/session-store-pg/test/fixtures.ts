import type { SessionSnapshot } from '@claw/session-store';
import { emptySnapshot as emptyConformanceSnapshot } from '@claw/session-store/testing';
import { afterAll } from 'vitest';
import { PgSessionLog, type PgSessionLogOpenOptions } from '../src/index.js';
import { startCluster, type TestCluster } from '../src/testing/index.js';

/**
 * One throwaway cluster per test file, started on first use and removed after the file's tests;
 * each `freshDatabase` is a new, empty database on it.
 */
export function sharedCluster(): { cluster: () => Promise<TestCluster>; freshDatabase: () => Promise<string> } {
  let started: Promise<TestCluster> | undefined;
  afterAll(async () => {
    const cluster = await started?.catch(() => undefined);
    await cluster?.destroy();
  });
  const cluster = () => (started ??= startCluster());
  return { cluster, freshDatabase: async () => (await cluster()).createDatabase() };
}

/** Logs opened by a test, closed by {@link closeLogs}. */
const opened: PgSessionLog[] = [];

export async function openLog(
  connectionString: string,
  options: Omit<PgSessionLogOpenOptions, 'connectionString'> = {},
): Promise<PgSessionLog> {
  const log = await PgSessionLog.open({ connectionString, ...options });
  opened.push(log);
  return log;
}

export async function closeLogs(): Promise<void> {
  await Promise.allSettled(opened.splice(0).map((log) => log.close()));
}

/** Timers under the test's control (SetTimer): nothing fires until `advance`. */
export class ManualTimers {
  private now = 0;
  private timers: Array<{ at: number; callback: () => void; cancelled: boolean }> = [];

  readonly setTimer = (callback: () => void, ms: number): (() => void) => {
    const timer = { at: this.now + ms, callback, cancelled: false };
    this.timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  };

  /** Moves the clock on by `ms`, firing every timer that falls due, in order. */
  advance(ms: number): void {
    const until = this.now + ms;
    for (;;) {
      const due = this.timers
        .filter((timer) => !timer.cancelled && timer.at <= until)
        .sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      due.cancelled = true;
      this.now = due.at;
      due.callback();
    }
    this.now = until;
    this.timers = this.timers.filter((timer) => !timer.cancelled);
  }

  /** Timers still waiting. */
  get pending(): number {
    return this.timers.filter((timer) => !timer.cancelled).length;
  }
}

/** A stored session with nothing in it yet, in a workspace every instance shares. */
export function emptySnapshot(id: string, workDir = '/shared/workspace'): SessionSnapshot {
  return emptyConformanceSnapshot(id, { workDir });
}
