import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

/**
 * True while a process (or, for a negative id, a process group) with this id is alive. A zombie
 * (killed, not yet reaped by its new parent; some container init processes reap late) counts as
 * gone: it runs nothing and holds no resources but its process table entry.
 */
export function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
  if (pid < 0 || process.platform !== 'linux') return true;
  try {
    // The state is the field after the parenthesised command name.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Waits for a killed process to be reaped; returns whether it still exists after `ms`. It returns
 * as soon as the process is gone, so the bound only costs time when something leaked: it is
 * generous because a loaded machine may take a while to reap.
 */
export async function stillExistsAfter(pid: number, ms = 10_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (exists(pid)) {
    if (Date.now() > deadline) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

/**
 * Waits for a command to write a line to `file` (returns at once when it has). The bound is
 * generous: a loaded machine may take seconds to start a shell.
 */
export async function waitForFile(file: string, ms = 15_000): Promise<string> {
  const deadline = Date.now() + ms;
  for (;;) {
    const text = await readFile(file, 'utf8').catch(() => '');
    if (text.endsWith('\n')) return text;
    if (Date.now() > deadline) throw new Error('the command did not write its file in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
