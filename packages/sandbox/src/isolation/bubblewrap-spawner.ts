import { spawn, type ChildProcess } from 'node:child_process';
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
  /** The real path of /etc/resolv.conf, re-exposed when it lies under a masked folder. */
  resolvConf: string | undefined;
  /** Default true. False only to compare against the filter in tests. */
  seccomp?: boolean;
}

// The extra pipes bubblewrap reads its inputs from; fd numbers in the child.
const seccompFd = 3;
const environmentFd = 4;

/** Moves the launcher into the command's cgroup, then becomes bubblewrap (same pid and group). */
const joinCgroupScript = 'echo "$$" > "$0" || exit 125; exec "$@"';

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
  private readonly filter: Buffer | undefined;
  private readonly environment: Buffer | undefined;

  constructor(private readonly settings: BubblewrapSettings) {
    this.filter = settings.seccomp === false
      ? undefined
      : buildSeccompFilter({ allowNetwork: settings.allowNetwork });
    this.environment = encodeEnvironmentArguments(settings.env);
    this.description =
      `bash isolation: bubblewrap ${settings.version} (workspace read-write, the rest of the file ` +
      'system read-only, private /tmp, home folders and /run hidden, network ' +
      `${settings.allowNetwork ? 'allowed' : 'off'}, seccomp filter, ${settings.processLimit.summary})`;
  }

  spawn(command: string, options: { workDir: string }): ChildProcess {
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
    });
    const args = buildBubblewrapArguments(layout, {
      command,
      maxProcesses: settings.processLimit.maxProcesses,
      seccompFd: this.filter === undefined ? undefined : seccompFd,
      environmentFd: this.environment === undefined ? undefined : environmentFd,
    });
    const cgroup = settings.processLimit.acquire();
    const [file, argv] =
      cgroup === undefined
        ? [settings.bwrapPath, args]
        : ['/bin/sh', ['-c', joinCgroupScript, cgroup.procsFile, settings.bwrapPath, ...args]];
    let child: ChildProcess;
    try {
      child = spawn(file, argv, {
        cwd: layout.workDir,
        env: launcherEnvironment(settings.env),
        // Its own process group: killing it kills bubblewrap, whose sandbox then dies with it.
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe', 'pipe', this.environment === undefined ? 'ignore' : 'pipe'],
      });
    } catch (error) {
      cgroup?.release();
      throw new IsolationError(`could not start bubblewrap: ${String(error)}`, {
        code: 'isolation_spawn_failed',
        cause: error,
      });
    }
    if (this.filter !== undefined) feed(child.stdio[seccompFd], this.filter);
    if (this.environment !== undefined) feed(child.stdio[environmentFd], this.environment);
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
