import type { ChildProcess } from 'node:child_process';

/** How bash commands run: in a bubblewrap sandbox, or plainly on the host. */
export type IsolationMode = 'bubblewrap' | 'none';

/** Starts the bash tool's commands, isolated or not. */
export interface CommandSpawner {
  readonly mode: IsolationMode;
  /**
   * One line for the user: which mode is active and, for 'none', why and that bash is NOT
   * isolated.
   */
  readonly description: string;
  /**
   * Starts `bash --norc --noprofile -c command` for the workspace; the child is its own
   * process-group leader (detached), stdin ignored, stdout/stderr piped. Killing that process
   * group ends everything the command started. Throws an `InvalidPathError` when `workDir` is not
   * an existing absolute folder (or is `/` under isolation).
   */
  spawn(command: string, options: { workDir: string }): ChildProcess;
}

/** Options of `createCommandSpawner`. */
export interface IsolationOptions {
  /**
   * 'auto' (default): bubblewrap when it works, else plain with a warning; 'required': throw
   * when it does not work; 'off': plain.
   */
  isolation?: 'auto' | 'required' | 'off';
  /**
   * Whether commands may use the network. Default false: own network namespace, IP sockets
   * refused.
   */
  allowNetwork?: boolean;
  /**
   * Environment given to commands (the caller passes an allow-listed one; default: PATH, LANG,
   * LC_ALL, TERM only, taken from the options or sensible defaults — never the whole parent
   * environment).
   */
  env?: Record<string, string>;
  /** Most processes (threads count) a command may have running at once. Default 256. */
  maxProcesses?: number;
  /** The bubblewrap executable. Default 'bwrap', looked up on the commands' PATH. */
  bwrapPath?: string;
  /**
   * The user's home folder, an absolute path: hidden from commands (an empty tmpfs, the
   * workspace bound again inside it when it lies there), and its `.config/claw` and
   * `.local/state/claw` (the trust record, the servers' tokens) hidden even when the workspace is
   * the home folder or holds them. Default: the process's (`os.homedir()`).
   */
  homeDir?: string;
  /**
   * More absolute folders commands may neither read nor write: each is covered by an empty
   * read-only tmpfs when it exists as a command starts. Give the user's claw folders here when
   * `XDG_CONFIG_HOME` or `XDG_STATE_HOME` put them outside the home folder
   * (`$XDG_CONFIG_HOME/claw`, `$XDG_STATE_HOME/claw`). Default none.
   */
  hiddenFolders?: readonly string[];
}

/** What `probeIsolation` found. */
export type IsolationProbe =
  | { available: true; version: string }
  | { available: false; reason: string };
