import { randomBytes } from 'node:crypto';
import { type Stats } from 'node:fs';
import { lstat, open, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, relative, resolve } from 'node:path';
import { ClawError, errnoCode, throwIfAborted } from '@claw/core';
import { UnsafeFileError, WorkspaceDirectory, type WritableFile } from '@claw/sandbox';

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
 * Writes `content` atomically over `file.target`. The target's folder is opened (and created,
 * when missing) one component at a time from the real workspace root, each checked after opening
 * to lie inside the workspace; the temporary file is created in that very folder (through its
 * descriptor, with `O_EXCL`), written, flushed to disk and renamed over the target there. So a
 * link swapped in anywhere on the way can neither redirect the write nor leave a file outside; a
 * crash leaves the old file or the new one, never half of one. An existing file keeps its
 * permission bits; one with more than one hard link is refused. The signal is checked before the
 * rename; an abort leaves the old file untouched.
 *
 * @throws UnsafeFileError (from `@claw/sandbox`) for a hard-linked target, and
 *   PathOutsideWorkspaceError when a folder on the way leads outside the workspace.
 */
export async function writeFileAtomic(
  file: WritableFile & { workDir: string; path: string },
  content: string,
  signal: AbortSignal,
): Promise<void> {
  const { target } = file;
  // A lexical target is walked from the workspace as given, a link's real target from the real
  // root.
  const base = target === file.absolutePath ? resolve(file.workDir) : file.realRoot;
  const directory = await WorkspaceDirectory.open(file.realRoot, relative(base, dirname(target)), {
    create: true,
    askedFor: file.path,
  });
  const name = basename(target);
  const temporary = directory.entry(`.${name}.${randomBytes(6).toString('hex')}.tmp`);
  let renamed = false;
  try {
    const existing = await lstatIfExists(directory.entry(name));
    if (existing !== undefined && existing.nlink > 1) {
      throw hardLinkedFileError(file.path, existing.nlink);
    }
    const handle = await open(temporary, 'wx', existing?.mode ?? 0o666);
    try {
      await handle.writeFile(content, 'utf8');
      await handle.sync();
      // `open` applies the umask; restore the exact bits of the file being replaced.
      if (existing !== undefined) await handle.chmod(existing.mode & 0o7777);
    } finally {
      await handle.close();
    }
    throwIfAborted(signal);
    await rename(temporary, directory.entry(name));
    renamed = true;
  } finally {
    if (!renamed) await unlink(temporary).catch(() => undefined);
    await directory.close();
  }
}

/** The refusal of a file with more than one hard link (one may lead outside the workspace). */
export function hardLinkedFileError(path: string, links: number): UnsafeFileError {
  return new UnsafeFileError(
    `${JSON.stringify(path)} has ${links} hard links; files linked from elsewhere are refused, ` +
    'since a hard link can lead outside the workspace. Copy the file instead.',
    { path },
  );
}

async function lstatIfExists(absolutePath: string): Promise<Stats | undefined> {
  try {
    return await lstat(absolutePath);
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}
