import { realpathSync } from 'node:fs';
import { lstat, readlink, realpath } from 'node:fs/promises';
import nodePath from 'node:path';
import {
  InvalidPathError,
  PathOutsideWorkspaceError,
  SymlinkResolutionError,
} from './errors.js';
import {
  knownWorkspaceFiles,
  pooledFiles,
  workspaceFiles,
  type WorkspaceFiles,
} from './workspace-files.js';

// More hops than this through dangling links is treated like a loop (Linux allows 40).
const maxLinkHops = 40;

/**
 * Resolves `path` against the workspace root `workDir` and makes sure it stays inside the
 * workspace, both lexically and after following symlinks (SBX-1). Every file tool sends its paths
 * through here.
 *
 * The checks, in order:
 * 1. `workDir` and `path` must be non-blank strings without NUL bytes.
 * 2. `path.resolve(workDir, path)` must stay inside `workDir` (a `path.relative` test, so
 *    `/srv/ws` never admits `/srv/ws-evil`). The workspace root itself (`.`) is inside. An
 *    absolute `path` is admitted when it passes this same test (models often send the
 *    workspace's own absolute paths); when the root is reached through a symlink, an absolute
 *    path spelled through the root's real location passes too. Any other absolute path is
 *    outside.
 * 3. Symlinks are followed: the workspace root is resolved to its real location (it may itself
 *    be a link), and so is the nearest existing ancestor of the target (the target need not exist
 *    yet, e.g. a file about to be written). A dangling symlink on the way is followed to where it
 *    points, so writing through it cannot create a file outside. The real target must lie inside
 *    the real root. Absolute paths go through exactly the same checks as relative ones.
 *
 * A relative `workDir` is resolved against the process's current directory.
 *
 * @returns The lexical absolute path, `path.resolve(workDir, path)` (not the symlink-resolved
 *   one), so that messages and results show the path as the workspace sees it. An absolute path
 *   spelled through the real location of a linked root comes back spelled through `workDir`
 *   (the same file), so the result always lies lexically inside `workDir`.
 * @throws {InvalidPathError} `workDir` or `path` is empty, blank or contains a NUL byte.
 * @throws {PathOutsideWorkspaceError} `path` leads outside the workspace: lexically (`../x`, or
 *   an absolute path that is not inside the workspace root) or through a symlink.
 * @throws {SymlinkResolutionError} a symlink on the way could not be followed (permission
 *   denied, a symlink loop, a file where a folder was expected); the file-system error is the
 *   `cause`.
 */
export async function resolveWithinWorkspace(workDir: string, path: string): Promise<string> {
  return (await locateWithinWorkspace(workDir, path)).path;
}

/** Where a workspace path is: lexically, and for real (symlinks followed), with the real root. */
export interface WorkspaceLocation {
  /** The lexical absolute path (what `resolveWithinWorkspace` returns). */
  path: string;
  /** `path` relative to the workspace root, `.` for the root itself: what messages show. */
  relative: string;
  /** The real location of the target (it need not exist yet). */
  realPath: string;
  /** The real location of the workspace root. */
  realRoot: string;
  /** The file calls to use in this workspace (direct on a local file system). */
  files: WorkspaceFiles;
}

/**
 * `resolveWithinWorkspace`, also giving the real locations it checked, so callers that check
 * more (what was opened, protected paths) need not resolve them again. Same checks and errors.
 */
export async function locateWithinWorkspace(
  workDir: string,
  path: string,
): Promise<WorkspaceLocation> {
  checkUsable(workDir, 'workspace directory');
  checkUsable(path, 'path');

  const root = isPlainAbsolute(workDir) ? workDir : nodePath.resolve(workDir);
  let target = resolveAgainst(root, path);
  let relative = relativeInside(root, target);
  if (!nodePath.isAbsolute(path) && relative === undefined) {
    throw outside(path, 'leaves the workspace');
  }

  // Each step answers at once when its answer is known (the root's real location remembered, the
  // workspace's kind of file calls known, an existing target on direct calls): a file tool call
  // locates its path twice (the policy, the tool), and waits there cost more than the work.
  const realRoot = rememberedRealRoot(root) ?? (await realRootOf(root, path));
  if (relative === undefined) {
    // Only an absolute path gets here. Spelled through the real location of a linked root, it
    // names a place in the workspace: spell it through the root, as the workspace sees it.
    relative = relativeInside(realRoot, target);
    if (relative === undefined) {
      throw outside(path, 'is absolute and not inside the workspace root');
    }
    target = nodePath.join(root, relative);
  }
  const files = knownWorkspaceFiles(realRoot) ?? (await workspaceFiles(realRoot));
  const realTarget = realPathNow(target, files) ?? (await realLocation(target, path, files));
  if (!isInside(realRoot, realTarget)) {
    throw outside(path, `leads through a symlink to ${realTarget}`);
  }
  return {
    path: target,
    relative: relative === '' ? '.' : relative,
    realPath: realTarget,
    realRoot,
    files,
  };
}

/**
 * The real location of an existing `path` at once, where the workspace takes direct calls (one
 * synchronous `realpath`). Undefined otherwise, or when `realpath` fails: `realLocation` then
 * follows what is missing or broken, and says what went wrong.
 */
function realPathNow(path: string, files: WorkspaceFiles): string | undefined {
  if (!files.direct) return undefined;
  try {
    return realpathSync.native(path);
  } catch {
    return undefined;
  }
}

/**
 * `path.resolve(root, path)`. Every file tool call resolves its path twice (the policy, the
 * tool); a plain relative path (no `.`, `..` or empty segment) under a plain root is joined as
 * text, without `path.resolve` walking both character by character.
 */
function resolveAgainst(root: string, path: string): string {
  const plain =
    nodePath.sep === '/' &&
    isPlainAbsolute(root) &&
    !path.startsWith('/') &&
    !path.endsWith('/') &&
    !path.includes('//') &&
    !/(?:^|\/)\.{1,2}(?:\/|$)/.test(path);
  if (!plain) return nodePath.resolve(root, path);
  return root === '/' ? `/${path}` : `${root}/${path}`;
}

/** Real locations of workspace roots seen lately (most recent last), see `realRootOf`. */
const realRoots = new Map<string, string>();
const maxRealRoots = 64;

/**
 * The real location of a workspace root not remembered yet (see `rememberedRealRoot`), which it
 * then remembers: every file tool call and policy check needs it, and following its symlinks each
 * time costs a file-system round trip per path part. Remembering it cannot let a path out: were
 * the root's link changed to point elsewhere, paths through it would resolve outside the
 * remembered location and be refused. Only a root that exists is remembered (one made later is
 * resolved again), and only the latest 64.
 */
async function realRootOf(root: string, askedFor: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(root);
  } catch {
    return realLocation(root, askedFor);
  }
  realRoots.set(root, real);
  if (realRoots.size > maxRealRoots) realRoots.delete(realRoots.keys().next().value as string);
  return real;
}

/** The remembered real location of `root` (marked as used lately), if any. */
function rememberedRealRoot(root: string): string | undefined {
  const known = realRoots.get(root);
  if (known !== undefined) {
    realRoots.delete(root);
    realRoots.set(root, known);
  }
  return known;
}

/**
 * True when `candidate` is `root` or lies below it, by path segments (never a string prefix:
 * `/srv/ws` does not hold `/srv/ws-evil`, and does hold `/srv/ws/..data`); both must be absolute
 * and normalised. Lexical only: symlinks are the caller's business.
 */
export function isInside(root: string, candidate: string): boolean {
  return relativeInside(root, candidate) !== undefined;
}

/**
 * `candidate` relative to `root` (`''` for `root` itself) when it is inside it (see `isInside`),
 * else undefined. Both must be absolute and normalised.
 */
export function relativeInside(root: string, candidate: string): string | undefined {
  // POSIX paths with no `.`, `..` or empty segment compare as strings, by segment: every path
  // check of every file tool call comes here, and `path.relative` resolves and splits both.
  if (nodePath.sep === '/' && isPlainAbsolute(root) && isPlainAbsolute(candidate)) {
    if (!candidate.startsWith(root)) return undefined;
    if (candidate.length === root.length) return '';
    if (root === '/') return candidate.slice(1);
    return candidate[root.length] === '/' ? candidate.slice(root.length + 1) : undefined;
  }
  const relative = nodePath.relative(root, candidate);
  if (relative === '') return '';
  if (nodePath.isAbsolute(relative)) return undefined; // another drive on Windows
  return relative === '..' || relative.startsWith(`..${nodePath.sep}`) ? undefined : relative;
}

/**
 * An absolute POSIX path that needs no normalising: no `.`, `..` or empty segment, no trailing
 * slash (`/` alone aside). A segment that only starts with a dot (`.claw`) fails this too; such
 * paths take the slower, general comparison.
 */
function isPlainAbsolute(path: string): boolean {
  return (
    path.startsWith('/') &&
    !path.includes('/.') &&
    !path.includes('//') &&
    (path.length === 1 || !path.endsWith('/'))
  );
}

function checkUsable(value: string, what: string): void {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new InvalidPathError(`The ${what} is empty. Give a path relative to the workspace root.`);
  }
  if (value.includes('\0')) {
    throw new InvalidPathError(
      `The ${what} ${JSON.stringify(value)} contains a NUL byte. Remove it and try again.`,
    );
  }
}

function outside(path: string, why: string): PathOutsideWorkspaceError {
  return new PathOutsideWorkspaceError(
    `The path ${JSON.stringify(path)} is outside the workspace (it ${why}). ` +
    'Use a path relative to the workspace root that stays inside it.',
    { path },
  );
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function resolutionFailed(path: string, at: string, error: unknown): SymlinkResolutionError {
  const code = errorCode(error);
  const reason =
    code === 'ELOOP'
      ? 'there is a symlink loop'
      : code === 'EACCES' || code === 'EPERM'
        ? 'permission was denied'
        : code === 'ENOTDIR'
          ? 'a file is used as if it were a folder'
          : `the file system said ${code ?? String(error)}`;
  return new SymlinkResolutionError(
    `Could not follow the symlinks of ${JSON.stringify(path)} at ${at}: ${reason}. ` +
    'Fix or remove the link, or use another path.',
    { path, cause: error },
  );
}

/**
 * The real location of the absolute path `start`: the nearest existing ancestor goes through
 * `realpath`, the missing tail is appended again. A dangling symlink is followed to its target,
 * which is then resolved the same way.
 */
export async function realLocation(
  start: string,
  askedFor: string,
  files: WorkspaceFiles = pooledFiles,
): Promise<string> {
  let current = start;
  let tail: string[] = [];
  let hops = 0;
  for (;;) {
    try {
      return nodePath.join(await files.realpath(current), ...tail);
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw resolutionFailed(askedFor, current, error);
    }
    const linkTarget = await danglingLinkTarget(current, askedFor);
    if (linkTarget !== undefined) {
      hops += 1;
      if (hops > maxLinkHops) {
        const loop = Object.assign(new Error(`too many symlinks at ${current}`), { code: 'ELOOP' });
        throw resolutionFailed(askedFor, current, loop);
      }
      // A relative link target counts from the link's real folder, not its lexical one.
      const folder = nodePath.dirname(current);
      let realFolder: string;
      try {
        realFolder = await files.realpath(folder);
      } catch (error) {
        throw resolutionFailed(askedFor, folder, error);
      }
      current = nodePath.resolve(realFolder, linkTarget);
      continue;
    }
    const parent = nodePath.dirname(current);
    if (parent === current) return nodePath.join(current, ...tail);
    tail = [nodePath.basename(current), ...tail];
    current = parent;
  }
}

/** The target of `path` when it is a symlink (that `realpath` could not follow), else undefined. */
async function danglingLinkTarget(path: string, askedFor: string): Promise<string | undefined> {
  try {
    const stats = await lstat(path);
    if (!stats.isSymbolicLink()) return undefined;
    return await readlink(path);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw resolutionFailed(askedFor, path, error);
  }
}
