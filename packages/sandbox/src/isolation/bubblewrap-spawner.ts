import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { Writable } from 'node:stream';
import { launcherEnvironment } from './environment.js';
import { IsolationError } from './errors.js';
import {
  buildBubblewrapArguments,
  encodeEnvironmentArguments,
  inspectWorkspace,
} from './layout.js';
import type { ProcessLimit } from './process-limit.js';
import { buildSeccompFilter } from './seccomp.js';
import type { CommandSpawner } from './types.js';

/** Everything a bubblewrap spawner needs, decided once when it is created. */
export interface BubblewrapSettings {
  bwrapPath: string;
  /** The bubblewrap version the probe found, for the description. */
  version: string;
  /** The whole environment of commands. */
  env: Record<string, string>;
  allowNetwork: boolean;
  processLimit: ProcessLimit;
  /** The parent's home folder (real path) when it exists. */
  homeDir: string | undefined;
  /**
   * Absolute folders to hide from commands when they exist as a command starts (the user's claw
   * folders: `.config/claw` and `.local/state/claw` of the home folder, or where XDG_* put them).
   * Default none.
   */
  hiddenFolders?: readonly string[];
  /** The real path of /etc/resolv.conf, re-exposed when it lies under a masked folder. */
  resolvConf: string | undefined;
  /** Default true. False only to compare against the filter in tests. */
  seccomp?: boolean;
}

/**
 * How bubblewrap is started for one command, without the cgroup launcher that may go in front of
 * it: the executable, its arguments and working folder, its environment, and the data it reads
 * from fds 3 and up (the seccomp program, the `--setenv` arguments).
 */
export interface BubblewrapInvocation {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** `inputs[i]` is written to fd `3 + i` and that pipe closed. */
  inputs: Buffer[];
}

// The extra pipes bubblewrap reads its inputs from start at this fd in the child.
const firstInputFd = 3;

/**
 * Moves the launcher into the command's cgroup, then becomes bubblewrap (same pid and group).
 * `0` means the writer itself; see `CommandCgroup.joinFile` for why not its pid.
 */
export const joinCgroupScript = 'echo 0 > "$0" || exit 125; exec "$@"';

/**
 * Runs each command in its own bubblewrap sandbox (see `buildBubblewrapArguments` for the
 * layout). The spawned process is bubblewrap, leader of its own process group; it runs with the
 * PATH only, so nothing of the parent's environment reaches the sandbox (not even
 * `/proc/1/environ`, which is bubblewrap's). The seccomp program and the `--setenv` arguments go
 * through pipes on fds 3 and 4, which keeps environment values out of the host's process list.
 */
export class BubblewrapSpawner implements CommandSpawner {
  readonly mode = 'bubblewrap';
  readonly description: string;
  // Built once here, for every command of this spawner.
  private readonly filter: Buffer | undefined;
  private readonly environment: Buffer | undefined;
  private readonly inputs: Buffer[];
  private readonly seccompFd: number | undefined;
  private readonly environmentFd: number | undefined;
  private readonly launcherEnv: Record<string, string>;
  private readonly stdio: StdioOptions;
  /** Only RLIMIT_NPROC needs setting inside the sandbox; it never binds root. */
  private readonly rlimitProcesses: number | undefined;

  constructor(private readonly settings: BubblewrapSettings) {
    this.filter = settings.seccomp === false
      ? undefined
      : buildSeccompFilter({ allowNetwork: settings.allowNetwork });
    this.environment = encodeEnvironmentArguments(settings.env);
    this.inputs = [this.filter, this.environment].filter((input) => input !== undefined);
    this.seccompFd = this.fdOf(this.filter);
    this.environmentFd = this.fdOf(this.environment);
    this.launcherEnv = launcherEnvironment(settings.env);
    this.stdio = ['ignore', 'pipe', 'pipe', ...this.inputs.map(() => 'pipe' as const)];
    this.rlimitProcesses = settings.processLimit.enforcement === 'rlimit'
      ? settings.processLimit.maxProcesses
      : undefined;
    this.description =
      `bash isolation: bubblewrap ${settings.version} (workspace read-write, the rest of the file ` +
      'system read-only, private /tmp, home folders, /run and claw\'s state hidden, network ' +
      `${settings.allowNetwork ? 'allowed' : 'off'}, seccomp filter, ${settings.processLimit.summary})`;
  }

  /**
   * The bubblewrap invocation `spawn` would start for `command`, without the cgroup launcher.
   * The workspace is looked at again on every call, since `.git` or `.claw` (or a folder to
   * hide) may have appeared since the last command. Throws what `spawn` throws for the command
   * and the workspace.
   */
  invocation(command: string, options: { workDir: string }): BubblewrapInvocation {
    if (typeof command !== 'string' || command.includes('\0')) {
      throw new IsolationError('the command must be a string without NUL bytes', {
        code: 'isolation_invalid_command',
      });
    }
    const settings = this.settings;
    const layout = inspectWorkspace(options.workDir, {
      homeDir: settings.homeDir,
      allowNetwork: settings.allowNetwork,
      resolvConf: settings.resolvConf,
      hiddenFolders: settings.hiddenFolders,
    });
    const args = buildBubblewrapArguments(layout, {
      command,
      maxProcesses: this.rlimitProcesses,
      seccompFd: this.seccompFd,
      environmentFd: this.environmentFd,
    });
    return {
      file: settings.bwrapPath,
      args,
      cwd: layout.workDir,
      env: this.launcherEnv,
      inputs: this.inputs,
    };
  }

  private fdOf(input: Buffer | undefined): number | undefined {
    return input === undefined ? undefined : firstInputFd + this.inputs.indexOf(input);
  }

  spawn(command: string, options: { workDir: string }): ChildProcess {
    const bubblewrap = this.invocation(command, options);
    const cgroup = this.settings.processLimit.acquire();
    const [file, argv] =
      cgroup === undefined
        ? [bubblewrap.file, bubblewrap.args]
        : ['/bin/sh', ['-c', joinCgroupScript, cgroup.joinFile, bubblewrap.file, ...bubblewrap.args]];
    let child: ChildProcess;
    try {
      child = spawn(file, argv, {
        cwd: bubblewrap.cwd,
        env: bubblewrap.env,
        // Its own process group: killing it kills bubblewrap, whose sandbox then dies with it.
        detached: true,
        stdio: this.stdio,
      });
    } catch (error) {
      cgroup?.release();
      throw new IsolationError(`could not start bubblewrap: ${String(error)}`, {
        code: 'isolation_spawn_failed',
        cause: error,
      });
    }
    bubblewrap.inputs.forEach((input, index) => feed(child.stdio[firstInputFd + index], input));
    if (cgroup !== undefined) {
      const release = (): void => cgroup.release();
      child.once('exit', release);
      child.once('close', release);
    }
    return child;
  }
}

/**
 * Writes `data` and closes this end; bubblewrap reads to end of file. The socket buffer keeps the
 * data after the close, and closing at once keeps the child's 'close' event from waiting on it.
 */
function feed(stream: unknown, data: Buffer): void {
  if (!(stream instanceof Writable)) return;
  // bubblewrap exited before reading: its exit status and stderr report why.
  stream.on('error', () => undefined);
  stream.end(data, () => stream.destroy());
}

/**
 * The bubblewrap invocation `spawner` would start for `command` in `workDir`, without the cgroup
 * launcher that goes in front of it when claw runs as root; undefined when `spawner` does not use
 * bubblewrap. For benchmarks (bubblewrap's own cost, the floor of claw's) and diagnostics; commands
 * run through `spawner.spawn`. Throws what `spawn` throws for the command and the workspace.
 */
export function bubblewrapInvocation(
  spawner: CommandSpawner,
  command: string,
  options: { workDir: string },
): BubblewrapInvocation | undefined {
  return spawner instanceof BubblewrapSpawner ? spawner.invocation(command, options) : undefined;
}
