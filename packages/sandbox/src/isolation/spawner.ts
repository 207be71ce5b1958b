import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, realpathSync } from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { userStateFolder } from '@claw/core';
import { BubblewrapSpawner } from './bubblewrap-spawner.js';
import { checkEnvironment, defaultCommandEnvironment, defaultPath } from './environment.js';
import {
  IsolationError,
  IsolationOptionsError,
  IsolationUnavailableError,
} from './errors.js';
import { prepareProcessLimit } from './process-limit.js';
import { probeIsolation } from './probe.js';
import type { CommandSpawner, IsolationOptions } from './types.js';

const notIsolated = 'bash commands are NOT isolated; only the command fences apply';

/**
 * Creates the spawner the bash tool starts its commands with (SBX-4). Probes bubblewrap once:
 *
 * - `isolation: 'auto'` (default): a bubblewrap sandbox when the probe succeeds, else plain bash;
 *   the `description` then says why and that bash is not isolated.
 * - `'required'`: throws `IsolationUnavailableError` (`isolation_unavailable`) when the probe
 *   fails, with what failed and how to fix it.
 * - `'off'`: plain bash, no probe.
 *
 * `env` defaults to PATH, LANG, LC_ALL and TERM with fixed values (the parent's environment is
 * never passed on); `allowNetwork` to false; `maxProcesses` to 256; `bwrapPath` to `bwrap` on
 * PATH. Throws `IsolationOptionsError` (`isolation_invalid_options`) for an unusable option.
 */
export async function createCommandSpawner(
  options: IsolationOptions = {},
): Promise<CommandSpawner> {
  const isolation = options.isolation ?? 'auto';
  if (isolation !== 'auto' && isolation !== 'required' && isolation !== 'off') {
    throw new IsolationOptionsError(
      `isolation must be 'auto', 'required' or 'off', got ${JSON.stringify(isolation)}`,
    );
  }
  const maxProcesses = options.maxProcesses ?? 256;
  if (!Number.isSafeInteger(maxProcesses) || maxProcesses < 2) {
    throw new IsolationOptionsError(
      `maxProcesses must be a whole number of at least 2, got ${String(maxProcesses)}`,
    );
  }
  const env = checkEnvironment(options.env ?? defaultCommandEnvironment());
  const home = options.homeDir ?? os.homedir();
  const hiddenFolders = checkFolders([
    ...(options.homeDir === undefined && !path.isAbsolute(home) ? [] : userClawFolders(home)),
    ...(options.hiddenFolders ?? []),
  ]);
  if (isolation === 'off') {
    return new PlainSpawner(env, `bash isolation: off (turned off in the settings); ${notIsolated}`);
  }
  // Found once, by absolute path: the commands' PATH (which starts bubblewrap) may not have it.
  const bwrapPath = findExecutable(options.bwrapPath ?? 'bwrap', [defaultPath, env.PATH ?? '']);
  const probe = await probeIsolation({ bwrapPath });
  if (!probe.available) {
    if (isolation === 'required') {
      throw new IsolationUnavailableError(
        `bash isolation is required, but bubblewrap does not work: ${probe.reason}. To fix: ` +
        'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install ' +
        'bubblewrap) and allow unprivileged user namespaces (sysctl ' +
        'kernel.unprivileged_userns_clone=1 where that setting exists; on Ubuntu 23.10 and ' +
        'later, sysctl kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile ' +
        'for bwrap; in a container, a seccomp/AppArmor profile that permits user namespaces), ' +
        "or set isolation to 'auto' or 'off'.",
        { reason: probe.reason },
      );
    }
    return new PlainSpawner(
      env,
      `bash isolation: none (bubblewrap is not usable: ${probe.reason}); ${notIsolated}. ` +
      'Install bubblewrap to isolate bash.',
    );
  }
  const allowNetwork = options.allowNetwork ?? false;
  const processLimit = await prepareProcessLimit(maxProcesses, {
    isRoot: process.getuid?.() === 0,
  });
  return new BubblewrapSpawner({
    bwrapPath,
    version: probe.version,
    env,
    allowNetwork,
    processLimit,
    homeDir: path.isAbsolute(home) ? realPathOrUndefined(home) : undefined,
    resolvConf: allowNetwork ? realPathOrUndefined('/etc/resolv.conf') : undefined,
    hiddenFolders,
  });
}

/**
 * Where claw keeps the user's own files in the home folder `home`: its settings and trust record
 * (`.config/claw`) and its servers' tokens (`.local/state/claw`), the XDG defaults.
 */
function userClawFolders(home: string): string[] {
  // A home that is not absolute has no state folder; its config folder, relative, is refused.
  const state = userStateFolder({ HOME: home });
  return [path.join(home, '.config', 'claw'), ...(state === undefined ? [] : [state])];
}

/** The folders to hide, each checked to be an absolute path; throws `IsolationOptionsError`. */
function checkFolders(folders: readonly unknown[]): string[] {
  return folders.map((folder) => {
    if (typeof folder !== 'string' || !path.isAbsolute(folder) || folder.includes('\0')) {
      throw new IsolationOptionsError(
        `the folders to hide (homeDir, hiddenFolders) must be absolute paths, got ${JSON.stringify(folder)}`,
      );
    }
    return folder;
  });
}

/**
 * A spawner without isolation (mode `none`): plain `bash --norc --noprofile -c command` in the
 * workspace, detached, with `env` (default PATH, LANG, LC_ALL and TERM only). For platforms
 * without bubblewrap and for `isolation: 'off'`.
 */
export function plainCommandSpawner(
  options: { env?: Record<string, string> } = {},
): CommandSpawner {
  return new PlainSpawner(
    checkEnvironment(options.env ?? defaultCommandEnvironment()),
    `bash isolation: none; ${notIsolated}`,
  );
}

class PlainSpawner implements CommandSpawner {
  readonly mode = 'none';

  constructor(
    private readonly env: Record<string, string>,
    readonly description: string,
  ) {}

  spawn(command: string, options: { workDir: string }): ChildProcess {
    if (typeof command !== 'string' || command.includes('\0')) {
      throw new IsolationError('the command must be a string without NUL bytes', {
        code: 'isolation_invalid_command',
      });
    }
    try {
      return spawn('bash', ['--norc', '--noprofile', '-c', command], {
        cwd: options.workDir,
        env: this.env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (error) {
      throw new IsolationError(`could not start bash: ${String(error)}`, {
        code: 'isolation_spawn_failed',
        cause: error,
      });
    }
  }
}

function realPathOrUndefined(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}

/** `name` as an absolute path from the first folder of the PATH lists that has it executable. */
function findExecutable(name: string, pathLists: readonly string[]): string {
  if (name.includes('/')) return name;
  for (const folder of pathLists.join(':').split(':')) {
    if (folder === '' || !path.isAbsolute(folder)) continue;
    const candidate = path.join(folder, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return name;
}
