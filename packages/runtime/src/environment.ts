import { readFile, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ApprovalMode } from '@claw/core';
import type { SessionEnvironment } from '@claw/engine';

/** The git repository a folder is in (see {@link findGitRepository}). */
export interface GitRepository {
  /** The folder that holds `.git`. */
  root: string;
  /** The checked-out branch; absent on a detached HEAD. */
  branch?: string;
  /** The commit of a detached HEAD (its first 12 hex digits). */
  detachedAt?: string;
}

/**
 * The git repository `folder` is in, found by looking for `.git` (a folder, or a file that
 * points to one, as in worktrees and submodules) in it and each folder above; its branch read
 * from `HEAD`. No git program is run. `undefined` when there is none, or it cannot be read.
 */
export async function findGitRepository(folder: string): Promise<GitRepository | undefined> {
  let current = path.resolve(folder);
  for (;;) {
    const dotGit = path.join(current, '.git');
    const gitDir = await gitDirOf(dotGit);
    if (gitDir !== undefined) {
      const head = await readFile(path.join(gitDir, 'HEAD'), 'utf8').catch(() => undefined);
      const repository: GitRepository = { root: current };
      const ref = /^ref:\s*refs\/heads\/(.+?)\s*$/.exec(head ?? '');
      if (ref?.[1] !== undefined) repository.branch = ref[1];
      else if (/^[0-9a-f]{40,64}\s*$/.test(head ?? '')) repository.detachedAt = (head ?? '').slice(0, 12);
      return repository;
    }
    const parent = path.dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

/** The git folder `.git` stands for: itself, or where its `gitdir:` line points. */
async function gitDirOf(dotGit: string): Promise<string | undefined> {
  const info = await stat(dotGit).catch(() => undefined);
  if (info === undefined) return undefined;
  if (info.isDirectory()) return dotGit;
  if (!info.isFile()) return undefined;
  const text = await readFile(dotGit, 'utf8').catch(() => '');
  const pointer = /^gitdir:\s*(.+?)\s*$/m.exec(text)?.[1];
  return pointer === undefined ? undefined : path.resolve(path.dirname(dotGit), pointer);
}

/** `Linux 6.1.0-18-amd64 (Debian GNU/Linux 12 (bookworm)), x64`; `macOS (Darwin 23.1.0), arm64`. */
export async function describePlatform(): Promise<string> {
  const arch = process.arch;
  if (process.platform === 'darwin') return `macOS (Darwin ${os.release()}), ${arch}`;
  if (process.platform === 'win32') return `Windows ${os.release()}, ${arch}`;
  let distribution: string | undefined;
  if (process.platform === 'linux') {
    const release = await readFile('/etc/os-release', 'utf8').catch(() => '');
    distribution = /^PRETTY_NAME="?(.*?)"?$/m.exec(release)?.[1];
  }
  return `${os.type()} ${os.release()}${distribution ? ` (${distribution})` : ''}, ${arch}`;
}

/** `YYYY-MM-DD` of `date` where the user is (the local time zone). */
export function localDate(date: Date): string {
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** What `collectEnvironment` needs to describe a session's workspace, machine and date. */
export interface CollectEnvironmentOptions {
  workDir: string;
  /** The repository the workspace is in, when it was looked up already. */
  git: GitRepository | undefined;
  /** How bash runs (the isolation probe's finding); absent when bash is not offered. */
  bash?: { isolated: boolean; network: boolean };
  approval: ApprovalMode;
  /** The time the session starts. */
  now: Date;
}

/** The environment block's facts of a session (REAL-1), collected once when it starts. */
export async function collectEnvironment(
  options: CollectEnvironmentOptions,
): Promise<SessionEnvironment> {
  return {
    workspaceRoot: path.resolve(options.workDir),
    platform: await describePlatform(),
    shell: 'bash (the bash tool runs `bash -c <command>`)',
    date: localDate(options.now),
    git: options.git,
    ...(options.bash === undefined ? {} : { bash: options.bash }),
    approval: options.approval,
  };
}
