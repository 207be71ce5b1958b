import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startCluster, type TestCluster } from '@claw/session-store-pg/testing';
import pg from 'pg';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { cleanUp as cleanUpClients } from './helpers.js';
import { killServers, processesRunning, processesWith, type ServerProcess } from './process.js';

// What the tests of claw-server on PostgreSQL share: a throwaway cluster per file, folders,
// database clients and tool processes made by a test and removed after it.

export const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns something other than `undefined`, or fails after `ms`. */
export async function until<T>(check: () => Promise<T | undefined>, what: string, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = await check();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms`);
    await delay(50);
  }
}

/** The instance id a server printed at start (`store: … (instance <id>)`). */
export function instanceOf(server: ServerProcess): string {
  const id = /\(instance ([0-9a-f-]{36});/.exec(server.stderr)?.[1];
  if (id === undefined) throw new Error(`no instance id in the output:\n${server.stderr}`);
  return id;
}

/** Waits until no `sleep <tag>` of a tool runs any more. */
export async function sleepGone(tag: string, ms = 10_000): Promise<void> {
  await until(async () => ((await processesWith(`sleep ${tag}`)).length === 0 ? true : undefined), 'the sleep to be killed', ms);
}

/**
 * What each test of a file makes, and the file's throwaway cluster: `inSuite` (called in the
 * `describe`) starts the cluster before its tests and destroys it after them, and after each
 * test stops the clients and servers, kills the tool processes by pid, ends the database
 * clients and removes the folders (then runs `after`).
 */
export function pgServerTests(prefix: string) {
  let started: TestCluster | undefined;
  const folders: string[] = [];
  const databases: pg.Client[] = [];
  /** Tool processes the tests' servers started: killed afterwards if a server left one behind. */
  const toolPids: number[] = [];
  const cleanUp = async (): Promise<void> => {
    await cleanUpClients();
    await killServers();
    for (const pid of toolPids.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    await Promise.allSettled(databases.splice(0).map((db) => db.end()));
    for (const made of folders.splice(0)) await rm(made, { recursive: true, force: true });
  };
  return {
    toolPids,
    /**
     * Waits until the tool's `sleep <tag>` runs; its pids (killed after the test if still there).
     * The `sleep` itself, not the sandbox or shell whose command line holds it: those start
     * before the command's first part (`echo ran >> ran.txt`) has run, and on a busy machine a
     * kill then could come before the marker was written.
     */
    sleepStarted: async (tag: string): Promise<number[]> => {
      const found = await until(async () => {
        const pids = await processesRunning(['sleep', tag]);
        return pids.length > 0 ? pids : undefined;
      }, 'the tool\'s sleep to start');
      toolPids.push(...found);
      return found;
    },
    inSuite: (after: () => Promise<void> = async () => undefined): { cluster: () => TestCluster } => {
      beforeAll(async () => {
        started = await startCluster();
      }, 60_000);
      afterAll(async () => {
        await started?.destroy();
        started = undefined;
      });
      afterEach(async () => {
        await cleanUp();
        await after();
      });
      return {
        cluster: () => {
          if (started === undefined) throw new Error('the cluster starts before the suite\'s tests');
          return started;
        },
      };
    },
    folder: async (): Promise<string> => {
      const made = await mkdtemp(path.join(tmpdir(), prefix));
      folders.push(made);
      return made;
    },
    database: async (url: string): Promise<pg.Client> => {
      const client = new pg.Client({ connectionString: url });
      client.on('error', () => undefined);
      await client.connect();
      databases.push(client);
      return client;
    },
  };
}
