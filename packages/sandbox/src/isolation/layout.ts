import { readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { stateFolderName } from '@claw/core';
import { InvalidPathError } from '../errors.js';
import { isInside } from '../resolve.js';

/** Folders hidden behind an empty tmpfs: temp files, runtime sockets, every home folder. */
export const maskedFolders = ['/tmp', '/run', '/home', '/root'] as const;

/** /proc entries that root could write through (sysctls, sysrq); bubblewrap only covers some. */
export const readOnlyProcEntries = ['/proc/sys', '/proc/sysrq-trigger'] as const;

/** What the sandbox of one command looks like; all paths absolute and real. */
export interface SandboxLayout {
  /** The workspace, bound read-write. */
  workDir: string;
  /** The parent's home folder, masked too when no other mask covers it. */
  homeDir: string | undefined;
  /** Bound read-write onto itself after the workspace, so it cannot be renamed or replaced. */
  pinned: string[];
  /** Inside the workspace and bound read-only: git hooks and config. */
  readOnly: string[];
  /**
   * Folders commands may neither read nor write, each covered by an empty tmpfs made read-only:
   * claw's state folders (the workspace's `.claw`, the `.claw` of a folder above it) and the
   * user's claw folders. Those outside the workspace are covered with the masks, before the
   * workspace is bound (one may hold it); those inside it after the workspace's own binds.
   */
  hidden: string[];
  /** Files under a masked folder that must stay visible (the resolver configuration). */
  exposed: string[];
  allowNetwork: boolean;
}

/** What {@link inspectWorkspace} needs besides the workspace. */
export interface LayoutOptions {
  homeDir: string | undefined;
  allowNetwork: boolean;
  resolvConf: string | undefined;
  /** Absolute folders to hide when they exist (the user's claw folders). Default none. */
  hiddenFolders?: readonly string[];
}

/**
 * Looks at the workspace the way the sandbox needs: its real path; which of `.git/hooks`,
 * `.git/config` (and a `core.hooksPath` folder inside the workspace) and a `.git` file
 * (worktrees, submodules) exist, to bind them read-only; and which folders to hide (see
 * `SandboxLayout.hidden`): the workspace's `.claw`, a `.claw` in any folder above the workspace,
 * and `hiddenFolders`, each where it really is, when it exists and is a folder. A `.claw` deeper
 * in the workspace is not looked for (that would mean walking the whole tree for every command).
 * Creates nothing. Throws `InvalidPathError` when `workDir` is not an absolute path to an
 * existing folder, or is `/`.
 */
export function inspectWorkspace(workDir: string, options: LayoutOptions): SandboxLayout {
  if (typeof workDir !== 'string' || !path.isAbsolute(workDir) || workDir.includes('\0')) {
    throw new InvalidPathError(
      `the workspace folder must be an absolute path, got ${JSON.stringify(workDir)}`,
    );
  }
  let real: string;
  try {
    real = realpathSync(workDir);
    if (!statSync(real).isDirectory()) throw new Error('not a directory');
  } catch (error) {
    throw new InvalidPathError(`the workspace folder ${workDir} does not exist or is not a folder`, {
      cause: error,
    });
  }
  if (real === '/') {
    throw new InvalidPathError(
      'the workspace folder cannot be / under isolation: choose the project folder',
    );
  }
  const pinned: string[] = [];
  const readOnly: string[] = [];
  const gitPath = path.join(real, '.git');
  const git = kindOf(gitPath);
  if (git === 'folder') {
    pinned.push(gitPath);
    for (const name of ['hooks', 'config']) {
      const entry = path.join(gitPath, name);
      if (kindOf(entry) !== undefined) readOnly.push(entry);
    }
    const hooksPath = configuredHooksPath(path.join(gitPath, 'config'), real);
    if (hooksPath !== undefined && !readOnly.includes(hooksPath)) readOnly.push(hooksPath);
  } else if (git === 'file') {
    readOnly.push(gitPath);
  }
  const stateFolders = [real, ...foldersAbove(real)]
    .map((folder) => path.join(folder, stateFolderName));
  const masks: string[] = [...maskedFolders];
  if (options.homeDir !== undefined && options.homeDir !== '/') masks.push(options.homeDir);
  const hidden = foldersToHide(real, [...stateFolders, ...(options.hiddenFolders ?? [])], masks);
  const exposed =
    options.allowNetwork &&
    options.resolvConf !== undefined &&
    maskedFolders.some((folder) => isInside(folder, options.resolvConf ?? ''))
      ? [options.resolvConf]
      : [];
  return {
    workDir: real,
    homeDir: options.homeDir,
    pinned,
    readOnly,
    hidden,
    exposed,
    allowNetwork: options.allowNetwork,
  };
}

/** The folders above `folder` (absolute, real), nearest first, `/` last. */
function foldersAbove(folder: string): string[] {
  const found: string[] = [];
  for (let current = path.dirname(folder); ; current = path.dirname(current)) {
    found.push(current);
    if (current === path.dirname(current)) return found;
  }
}

/**
 * Which of `candidates` to hide in a sandbox for `workDir`: each at its real location, when that
 * is an existing folder other than `/` and the workspace itself, and is not hidden already — by a
 * mask or another folder chosen (shorter paths first) that covers it, unless it lies in the
 * workspace, which is bound again over those.
 */
function foldersToHide(
  workDir: string,
  candidates: readonly string[],
  masks: readonly string[],
): string[] {
  const inWorkspace = (folder: string): boolean => folder !== workDir && isInside(workDir, folder);
  const real = candidates
    .map(realFolder)
    .filter((folder): folder is string => folder !== undefined && folder !== '/' && folder !== workDir)
    .sort((a, b) => a.length - b.length);
  const chosen: string[] = [];
  for (const folder of real) {
    const covered = [...masks, ...chosen].some(
      (cover) => isInside(cover, folder) && (!inWorkspace(folder) || inWorkspace(cover)),
    );
    if (!covered) chosen.push(folder);
  }
  return chosen;
}

/** The real path of `folder` when it exists and is a folder. */
function realFolder(folder: string): string | undefined {
  try {
    const real = realpathSync(folder);
    return statSync(real).isDirectory() ? real : undefined;
  } catch {
    return undefined;
  }
}

/** The settings of the command itself, around the layout. */
export interface CommandSettings {
  command: string;
  /**
   * Set as RLIMIT_NPROC inside the sandbox by {@link processLimitScript}; undefined runs the
   * command's bash directly (the limit is a cgroup, or cannot be enforced: RLIMIT_NPROC never
   * binds root, so there the extra bash would only cost time).
   */
  maxProcesses: number | undefined;
  /** The fd bubblewrap reads the seccomp program from, or undefined for none (tests only). */
  seccompFd: number | undefined;
  /** The fd bubblewrap reads the `--setenv` arguments from, or undefined when there are none. */
  environmentFd: number | undefined;
}

/** Sets the process limit inside the sandbox, then runs the command in a fresh bash. */
export const processLimitScript = 'ulimit -u "$1" 2>/dev/null; exec bash --norc --noprofile -c "$2"';

/**
 * The bubblewrap arguments for one command. Order matters: bubblewrap applies the mounts in
 * sequence, so the masks come first (with the hidden folders outside the workspace) and the
 * workspace bind after them (the workspace stays visible even under a masked folder), then the
 * read-only re-binds inside it, then the hidden folders inside it; last, every hidden folder's
 * tmpfs is made read-only (not recursively: a workspace bound under one stays writable).
 */
export function buildBubblewrapArguments(
  layout: SandboxLayout,
  settings: CommandSettings,
): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  for (const entry of readOnlyProcEntries) args.push('--ro-bind-try', entry, entry);
  for (const folder of maskedFolders) args.push('--tmpfs', folder);
  const home = layout.homeDir;
  if (home !== undefined && home !== '/' && !maskedFolders.some((folder) => isInside(folder, home))) {
    args.push('--tmpfs', home);
  }
  const inside = (folder: string): boolean => isInside(layout.workDir, folder);
  for (const folder of layout.hidden.filter((entry) => !inside(entry))) args.push('--tmpfs', folder);
  for (const file of layout.exposed) args.push('--ro-bind-try', file, file);
  args.push('--bind', layout.workDir, layout.workDir);
  for (const entry of layout.pinned) args.push('--bind', entry, entry);
  for (const entry of layout.readOnly) args.push('--ro-bind-try', entry, entry);
  for (const folder of layout.hidden.filter(inside)) args.push('--tmpfs', folder);
  for (const folder of layout.hidden) args.push('--remount-ro', folder);
  args.push(
    '--chdir',
    layout.workDir,
    '--unshare-user',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
  );
  if (!layout.allowNetwork) args.push('--unshare-net');
  args.push('--new-session', '--die-with-parent', '--cap-drop', 'ALL', '--clearenv');
  if (settings.environmentFd !== undefined) args.push('--args', String(settings.environmentFd));
  if (settings.seccompFd !== undefined) args.push('--seccomp', String(settings.seccompFd));
  args.push('--', 'bash', '--norc', '--noprofile', '-c');
  if (settings.maxProcesses === undefined) {
    args.push(settings.command);
  } else {
    args.push(processLimitScript, 'bash', String(settings.maxProcesses), settings.command);
  }
  return args;
}

/** The `--setenv` arguments, NUL-terminated, as bubblewrap's `--args` reads them. */
export function encodeEnvironmentArguments(env: Record<string, string>): Buffer | undefined {
  const entries = Object.entries(env);
  if (entries.length === 0) return undefined;
  const parts = entries.flatMap(([name, value]) => ['--setenv', name, value]);
  return Buffer.from(parts.map((part) => `${part}\0`).join(''), 'utf8');
}

function kindOf(entry: string): 'folder' | 'file' | undefined {
  try {
    return statSync(entry).isDirectory() ? 'folder' : 'file';
  } catch {
    return undefined;
  }
}

/**
 * `core.hooksPath` from the repository config when it names an existing folder inside the
 * workspace (husky and the like): git on the host runs those hooks too. A plain line scan; an
 * unusual config the scan misses leaves that folder writable, the `.git/hooks` bind still holds.
 */
function configuredHooksPath(configFile: string, workDir: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(configFile, 'utf8');
  } catch {
    return undefined;
  }
  const match = /^\s*hookspath\s*=\s*(.*?)\s*$/im.exec(text);
  const raw = match?.[1]?.replace(/^"(.*)"$/, '$1');
  if (raw === undefined || raw === '' || raw.startsWith('~')) return undefined;
  const candidate = path.resolve(workDir, raw);
  let real: string;
  try {
    real = realpathSync(candidate);
  } catch {
    return undefined;
  }
  if (real === workDir || !isInside(workDir, real) || kindOf(real) !== 'folder') return undefined;
  return real;
}
