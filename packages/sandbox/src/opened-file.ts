import type { Stats } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import nodePath from 'node:path';
import { PathOutsideWorkspaceError, ProtectedPathError, UnsafeFileError } from './errors.js';
import { isInside, relativeInside } from './resolve.js';
import { clawFolderEntry, clawStateReason } from './secret-files.js';
import {
  inspectDirectly,
  pooledFiles,
  type OpenFile,
  type WorkspaceFiles,
} from './workspace-files.js';

/**
 * Checks what a file descriptor really is, after it was opened for a workspace path (the check
 * before `open` cannot see a link swapped in between): its real location must lie inside the real
 * workspace root and must not be claw's state (a `.claw` folder's content other than its settings
 * files, see `clawFolderEntry`), it must be a regular file (or a folder, when allowed), and it
 * must have exactly one hard link — a hard link to a file outside the workspace (or to claw's
 * state) passes every path check, so a file linked more than once is refused.
 *
 * On Linux the location comes from `/proc/self/fd/N`; elsewhere the descriptor's device and inode
 * must match those of the path's real location.
 *
 * @returns the descriptor's `stat`.
 * @throws PathOutsideWorkspaceError when the opened file lies outside the workspace.
 * @throws ProtectedPathError when the opened file is claw's state.
 * @throws UnsafeFileError when it is not a regular file (and not an allowed folder) or has more
 *   than one hard link.
 */
export async function verifyOpenedFile(
  handle: OpenFile,
  options: {
    workDir: string;
    path: string;
    allowDirectory?: boolean;
    realRoot?: string;
    /** The workspace's file calls (from `locateWithinWorkspace`); default: through the pool. */
    files?: WorkspaceFiles;
  },
): Promise<Stats> {
  const [info, realRoot, linuxLocation] = await descriptorFacts(handle, options);
  const location = linuxLocation ?? (await descriptorLocation(handle, options.path, info));
  if (location === undefined || location === deletedMarker || !isInside(realRoot, location)) {
    throw new PathOutsideWorkspaceError(
      `The path ${JSON.stringify(options.path)} is outside the workspace (what was opened lies ` +
      'outside it; a link may have been swapped in). Use a path inside the workspace.',
      { path: options.path },
    );
  }
  const inside = relativeInside(realRoot, location) ?? '';
  if (clawFolderEntry(inside.split(nodePath.sep).join('/')) === 'state') {
    throw new ProtectedPathError({ path: options.path, reason: clawStateReason });
  }
  if (info.isDirectory() && options.allowDirectory === true) return info;
  if (!info.isFile()) {
    throw new UnsafeFileError(
      `${JSON.stringify(options.path)} is not a regular file; only regular files can be used.`,
      { path: options.path },
    );
  }
  if (info.nlink > 1) {
    throw new UnsafeFileError(
      `${JSON.stringify(options.path)} has ${info.nlink} hard links; files linked from elsewhere ` +
      'are refused, since a hard link can lead outside the workspace. Copy the file instead.',
      { path: options.path },
    );
  }
  return info;
}

/**
 * The descriptor's `stat`, the real workspace root, and on Linux where the descriptor is
 * (`procLocation`). The caller may already know the real root (from `locateWithinWorkspace`);
 * then a file opened by direct calls is asked at once, without a wait. Otherwise the three are
 * asked for together (one wait, not three, on the hot path).
 */
function descriptorFacts(
  handle: OpenFile,
  options: { workDir: string; realRoot?: string; files?: WorkspaceFiles },
): [Stats, string, string | undefined] | Promise<[Stats, string, string | undefined]> {
  const known = options.realRoot;
  const inspected = known === undefined ? undefined : inspectDirectly(handle);
  if (known !== undefined && inspected !== undefined) {
    return [inspected.info, known, locationFromProc(inspected.procLink)];
  }
  return Promise.all([
    handle.stat(),
    known ?? realpath(options.workDir),
    process.platform === 'linux'
      ? procLocation(handle, options.files ?? pooledFiles)
      : Promise.resolve(undefined),
  ]);
}

/**
 * Where the descriptor really is, from `/proc/self/fd/N`; `undefined` when that cannot be read
 * (then `descriptorLocation` checks by device and inode). A file deleted after opening reads as
 * "… (deleted)": it can no longer be trusted, and counts as outside.
 */
async function procLocation(handle: OpenFile, files: WorkspaceFiles): Promise<string | undefined> {
  return locationFromProc(
    await files.readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined),
  );
}

/** What a `/proc/self/fd/N` link (undefined: unreadable) says of where the descriptor is. */
function locationFromProc(link: string | undefined): string | undefined {
  if (link === undefined) return undefined;
  return link.endsWith(' (deleted)') ? deletedMarker : link;
}

/** What `procLocation` gives for a deleted file: not a path, so never inside the workspace. */
const deletedMarker = '\u0000deleted';

async function descriptorLocation(
  handle: OpenFile,
  path: string,
  info: Stats,
): Promise<string | undefined> {
  try {
    const real = await realpath(path);
    const again = await stat(real);
    return again.dev === info.dev && again.ino === info.ino ? real : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Paths inside the workspace that model-facing tools must never write: a `.claw` folder at any
 * depth (claw's state and settings: grants, sessions, `config.json` — a model that could write
 * them could grant itself anything) and git's code-execution hooks and config (`.git/hooks/`,
 * `.git/config`). Compared by path segment and case-insensitively.
 */
export function protectedPathReason(realRoot: string, realPath: string): string | undefined {
  const relative = nodePath.relative(realRoot, realPath).split(nodePath.sep).join('/');
  // Compared case-insensitively: on a case-insensitive file system `.CLAW` is `.claw`.
  const folded = relative.toLowerCase();
  if (folded.split('/').includes('.claw')) {
    return 'claw keeps its state and settings in .claw folders; tools may not change them';
  }
  if (folded === '.git/hooks' || folded.startsWith('.git/hooks/')) {
    return '.git/hooks holds programs git runs; tools may not change it';
  }
  if (folded === '.git/config') {
    return '.git/config can make git run programs; tools may not change it';
  }
  return undefined;
}
