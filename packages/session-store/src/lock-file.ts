import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { errnoCode, errorMessage } from '@claw/core';
import { SessionLockedError, SessionLogError, type SessionLockHolder } from './errors.js';
import type { SessionFileSystem } from './file-system.js';
import type { SessionLogLock } from './session-log.js';

/** What a lock file holds. */
interface LockContent extends SessionLockHolder {
  /** Unique per acquisition: release removes only its own lock. */
  token: string;
  /** The kernel's start time of the process (Linux), to tell a reused pid from the holder. */
  processStart?: string;
}

const processStartedAt = new Date(Date.now() - process.uptime() * 1000).toISOString();

/** Field 22 of `/proc/<pid>/stat` (start time in clock ticks since boot); undefined off Linux. */
function kernelStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

const ownStart = kernelStartTime(process.pid);

function isAlive(holder: LockContent): boolean {
  // Another machine's processes cannot be checked from here: count them as alive.
  if (holder.host !== os.hostname()) return true;
  if (holder.pid === process.pid) {
    return holder.processStart === undefined || holder.processStart === ownStart;
  }
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return errnoCode(error) === 'EPERM';
  }
  if (holder.processStart === undefined) return true;
  const start = kernelStartTime(holder.pid);
  // A different start time: the pid was reused by a process that is not the holder.
  return start === undefined || start === holder.processStart;
}

function parse(text: string): LockContent | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockContent>;
    if (
      typeof value.pid === 'number' &&
      typeof value.host === 'string' &&
      typeof value.startedAt === 'string' &&
      typeof value.token === 'string'
    ) {
      return value as LockContent;
    }
  } catch {
    // Not a lock claw wrote.
  }
  return undefined;
}

function holderOf(content: LockContent): SessionLockHolder {
  return { pid: content.pid, host: content.host, startedAt: content.startedAt };
}

export interface LockFileOptions {
  /** The lock file, e.g. `<sessions>/<id>.lock`. */
  file: string;
  sessionId: string;
  fileSystem: SessionFileSystem;
}

/**
 * Takes the lock file of one session (RT-5): created with the holder's pid, host and start time
 * as one atomic step (a hard link of a complete file, so nobody ever reads a half-written lock).
 * A lock held by a live process — this one included — is refused with `SessionLockedError`
 * naming it. A lock whose process is gone (same host, no such pid, or the pid now belongs to
 * another process) is taken over; two processes taking over at once are serialised by a second,
 * short-lived `.takeover` lock, so exactly one wins.
 *
 * @throws SessionLockedError; SessionLogError `session_write_failed` when the lock cannot be
 * written (a read-only folder).
 */
export async function acquireLockFile(options: LockFileOptions): Promise<SessionLogLock> {
  const { file, fileSystem } = options;
  const content: LockContent = {
    pid: process.pid,
    host: os.hostname(),
    startedAt: processStartedAt,
    token: randomUUID(),
    ...(ownStart === undefined ? {} : { processStart: ownStart }),
  };
  const text = `${JSON.stringify(content)}\n`;
  const temporary = `${file}.${content.token}.tmp`;
  await writeTemporary(fileSystem, temporary, text, file);
  try {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      if (await linkOnce(fileSystem, temporary, file)) return fileLock(options, content);
      const current = await readLock(fileSystem, file);
      if (current === 'missing') continue;
      if (current !== undefined && isAlive(current)) throw locked(options, current);
      // The holder is gone: take over, one process at a time.
      const takeover = `${file}.takeover`;
      if (!(await linkOnce(fileSystem, temporary, takeover))) {
        const other = await readLock(fileSystem, takeover);
        if (other !== 'missing' && other !== undefined && isAlive(other)) {
          throw locked(options, other, 'is taking the session over');
        }
        await fileSystem.unlink(takeover).catch(() => undefined);
        continue;
      }
      try {
        const again = await readLock(fileSystem, file);
        if (again !== 'missing' && again !== undefined && isAlive(again)) throw locked(options, again);
        if (again === 'missing') {
          if (await linkOnce(fileSystem, temporary, file)) return fileLock(options, content);
          continue;
        }
        // Still the dead holder's (or unreadable): replace it in one step.
        await fileSystem.rename(temporary, file);
        return fileLock(options, content);
      } finally {
        await fileSystem.unlink(takeover).catch(() => undefined);
      }
    }
    throw locked(options, undefined);
  } finally {
    await fileSystem.unlink(temporary).catch(() => undefined);
  }
}

async function writeTemporary(
  fileSystem: SessionFileSystem,
  temporary: string,
  text: string,
  file: string,
): Promise<void> {
  try {
    const handle = await fileSystem.open(temporary, 'wx', 0o600);
    try {
      await handle.writeFile(text, 'utf8');
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw new SessionLogError(
      `Could not create the session lock ${file}: ${errorMessage(error)}. Check that the .claw ` +
      'folder is writable.',
      { code: 'session_write_failed', location: file, cause: error },
    );
  }
}

async function linkOnce(fileSystem: SessionFileSystem, from: string, to: string): Promise<boolean> {
  try {
    await fileSystem.link(from, to);
    return true;
  } catch (error) {
    if (errnoCode(error) === 'EEXIST') return false;
    throw new SessionLogError(
      `Could not create the session lock ${to}: ${errorMessage(error)}. Check that the .claw ` +
      'folder is writable.',
      { code: 'session_write_failed', location: to, cause: error },
    );
  }
}

/** The lock's content; `'missing'` when there is no lock; `undefined` when it is not readable. */
async function readLock(
  fileSystem: SessionFileSystem,
  file: string,
): Promise<LockContent | 'missing' | undefined> {
  try {
    return parse(await fileSystem.readFile(file, 'utf8'));
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return 'missing';
    return undefined;
  }
}

function locked(
  options: LockFileOptions,
  holder: LockContent | undefined,
  doing = 'has it open',
): SessionLockedError {
  const id = JSON.stringify(options.sessionId);
  if (holder === undefined) {
    return new SessionLockedError(
      `Session ${id} is locked (${options.file}) and the lock could not be taken over. Try again, ` +
      'or use another session id.',
      { sessionId: options.sessionId },
    );
  }
  const who =
    holder.pid === process.pid && holder.host === os.hostname()
      ? `this process (pid ${holder.pid}) already ${doing} elsewhere`
      : `process ${holder.pid} on ${holder.host} (running since ${holder.startedAt}) ${doing}`;
  return new SessionLockedError(
    `Session ${id} is in use: ${who}. Wait until it is done, or use another session id. If no ` +
    `such process is running, remove the lock file ${options.file}.`,
    { sessionId: options.sessionId, holder: holderOf(holder) },
  );
}

function fileLock(options: LockFileOptions, content: LockContent): SessionLogLock {
  let released: Promise<void> | undefined;
  return {
    holder: holderOf(content),
    release: () => {
      released ??= (async () => {
        const current = await readLock(options.fileSystem, options.file);
        // Someone took it over (we were thought dead): it is theirs now.
        if (current === 'missing' || current?.token !== content.token) return;
        await options.fileSystem.unlink(options.file).catch(() => undefined);
      })();
      return released;
    },
  };
}
