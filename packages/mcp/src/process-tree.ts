import { existsSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

/**
 * The pids of every process below `pid` (children, grandchildren…), read from `/proc` on Linux;
 * empty elsewhere or when `/proc` cannot be read. Used to kill what a launcher such as `npx`
 * started, which otherwise outlives it.
 */
export async function descendantPids(pid: number): Promise<number[]> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  await Promise.all(entries.filter((entry) => /^\d+$/.test(entry)).map(async (entry) => {
    const parent = await parentPid(Number(entry));
    if (parent === undefined) return;
    const list = children.get(parent) ?? [];
    list.push(Number(entry));
    children.set(parent, list);
  }));
  const found: number[] = [];
  const pending = [pid];
  while (pending.length > 0) {
    const current = pending.shift() as number;
    for (const child of children.get(current) ?? []) {
      if (found.includes(child)) continue;
      found.push(child);
      pending.push(child);
    }
  }
  return found;
}

async function parentPid(pid: number): Promise<number | undefined> {
  let stat: string;
  try {
    stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const parent = Number(fields[1]);
  return Number.isInteger(parent) ? parent : undefined;
}

/**
 * True while a process with this pid runs. A zombie (ended, waiting for its parent to collect
 * it) does not count: on Linux its state in `/proc` says so.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    // On Linux a pid whose stat cannot be read has just gone; elsewhere there is no /proc.
    return !existsSync('/proc/self');
  }
}

/** SIGKILL to each pid still there; a pid already gone is skipped. */
export function killAll(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // ESRCH: already gone.
    }
  }
}

/**
 * Waits until none of `pids` runs (a kill takes effect a moment after it is sent), checking every
 * 10 ms for at most `ms`; returns the pids still running then.
 */
export async function waitUntilGone(pids: readonly number[], ms = 2000): Promise<number[]> {
  const deadline = Date.now() + ms;
  let running = pids.filter(isAlive);
  while (running.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    running = running.filter(isAlive);
  }
  return running;
}
