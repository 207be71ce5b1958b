import { lstat } from 'node:fs/promises';
import nodePath from 'node:path';
import { ProtectedPathError } from './errors.js';
import { protectedPathReason } from './opened-file.js';
import { locateWithinWorkspace } from './resolve.js';
import { clawStateReason, isClawState } from './secret-files.js';

export interface WritableFile {
  /** The lexical absolute path, as `resolveWithinWorkspace` returns it. */
  absolutePath: string;
  /** `absolutePath` relative to the workspace root, `.` for the root itself. */
  relative: string;
  /**
   * The path to replace: the file a symbolic link points at (inside the workspace, checked), so
   * that a write updates the file instead of replacing the link; else `absolutePath`.
   */
  target: string;
  /** The real workspace root, for checking what gets opened. */
  realRoot: string;
}

/**
 * Resolves a path a tool is about to write (SBX-1 and beyond): inside the workspace, lexically and
 * through symlinks, and not protected (a `.claw` folder at any depth, `.git/hooks/`,
 * `.git/config`, compared on the real location, so a link to them does not get around it; also
 * the folder the workspace's `.claw` links to, see `isClawState`). The file need not exist yet.
 *
 * @throws the errors of `resolveWithinWorkspace`.
 * @throws ProtectedPathError when the real target is a protected path.
 */
export async function resolveWritableFile(workDir: string, path: string): Promise<WritableFile> {
  const location = await locateWithinWorkspace(workDir, path);
  const { realRoot, realPath: realTarget } = location;
  const absolutePath = location.path;
  const reason =
    protectedPathReason(realRoot, realTarget) ??
    protectedPathReason(nodePath.resolve(workDir), absolutePath);
  if (reason !== undefined) {
    throw new ProtectedPathError({ path, reason });
  }
  // What the above cannot see: the state folder reached as a linked `.claw` points (isClawState).
  if (await isClawState(location)) throw new ProtectedPathError({ path, reason: clawStateReason });
  let isLink = false;
  try {
    isLink = (await lstat(absolutePath)).isSymbolicLink();
  } catch {
    // Missing: it will be created.
  }
  return {
    absolutePath,
    relative: location.relative,
    target: isLink ? realTarget : absolutePath,
    realRoot,
  };
}
