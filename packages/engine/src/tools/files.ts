import { randomBytes } from 'node:crypto';
import { type Stats } from 'node:fs';
import { chmod, lstat, open, realpath, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { ClawError, throwIfAborted } from '@claw/core';

/**
 * The workspace-relative form of an absolute path inside the workspace, for messages. Tool output
 * never shows host paths outside the workspace.
 */
export function displayPath(workDir: string, absolutePath: string): string {
  const shown = relative(resolve(workDir), absolutePath);
  return shown === '' ? '.' : shown;
}

/** The `code` of a Node.js system error, or `undefined`. */
export function errnoCode(error: unknown): string | undefined {
  if (error instanceof Error && 'code' in error && typeof error.code === 'string') {
    return error.code;
  }
  return undefined;
}

/**
 * Wraps an unexpected file-system error. Node's messages carry the absolute host path, so the
 * message names the workspace-relative path and the errno code instead; the original is `cause`.
 */
export function fileSystemError(action: string, shownPath: string, error: unknown): ClawError {
  const code = errnoCode(error) ?? 'unknown error';
  return new ClawError(`could not ${action} ${shownPath}: ${code}`, {
    code: 'tool_file_error',
    cause: error,
  });
}

/** `stat`, or `undefined` when nothing is there (ENOENT / ENOTDIR). */
export async function statIfExists(absolutePath: string): Promise<Stats | undefined> {
  try {
    return await stat(absolutePath);
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/**
 * The file a write should replace: the target of a symbolic link (so that writing through a link
 * updates the file it points at instead of replacing the link), else the path itself. The path
 * was already checked by `resolveWithinWorkspace`, which follows links against the real root.
 */
async function writeTarget(absolutePath: string): Promise<string> {
  try {
    const info = await lstat(absolutePath);
    return info.isSymbolicLink() ? await realpath(absolutePath) : absolutePath;
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return absolutePath;
    throw error;
  }
}

/**
 * Writes `content` atomically: a temporary file in the same folder is written, flushed to disk and
 * renamed over the target, so a crash leaves either the old file or the new one, never half of
 * one. An existing file keeps its permission bits. The signal is checked before the rename; an
 * abort there leaves the old file untouched and removes the temporary file.
 */
export async function writeFileAtomic(
  absolutePath: string,
  content: string,
  signal: AbortSignal,
): Promise<void> {
  const target = await writeTarget(absolutePath);
  const existing = await statIfExists(target);
  const temporary = join(
    dirname(target),
    `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`,
  );
  let renamed = false;
  try {
    const handle = await open(temporary, 'wx', existing?.mode ?? 0o666);
    try {
      await handle.writeFile(content, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    // `open` applies the umask; restore the exact bits of the file being replaced.
    if (existing !== undefined) await chmod(temporary, existing.mode & 0o7777);
    throwIfAborted(signal);
    await rename(temporary, target);
    renamed = true;
  } finally {
    if (!renamed) await unlink(temporary).catch(() => undefined);
  }
}
