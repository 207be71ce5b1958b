import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built `claw-server` (the global setup builds it). */
export const serverMain = fileURLToPath(new URL('../dist/main.js', import.meta.url));

const running = new Set<ServerProcess>();
/** The XDG_STATE_HOME folders `serverEnv` made. */
const stateHomes = new Set<string>();

/** Kills every `claw-server` a test started and did not stop, and removes their state folders. */
export async function killServers(): Promise<void> {
  await Promise.all([...running].map((server) => server.kill()));
  const made = [...stateHomes];
  stateHomes.clear();
  await Promise.all(made.map((folder) => rm(folder, { recursive: true, force: true })));
}

/**
 * A minimal environment: no API key unless given, and an XDG_STATE_HOME of its own (a new
 * temporary folder, removed by `killServers`), so that no server writes a token file in the home
 * folder of whoever runs the tests.
 */
export function serverEnv(extra: Record<string, string> = {}): Record<string, string> {
  const stateHome = mkdtempSync(path.join(os.tmpdir(), 'claw-server-state-'));
  stateHomes.add(stateHome);
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? os.tmpdir(),
    XDG_STATE_HOME: stateHome,
    // No trust record and no user settings of the machine's user (a fresh user, TRUST-1).
    XDG_CONFIG_HOME: path.join(stateHome, 'config'),
    ...extra,
  };
}

/** A `claw-server` child process, its output collected. */
export class ServerProcess {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  /** The exit code, or the signal's name when one killed it. */
  readonly exited: Promise<number | string>;

  constructor(args: readonly string[], options: { env: Record<string, string>; cwd: string }) {
    this.child = spawn(process.execPath, [serverMain, ...args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout += chunk;
    });
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    running.add(this);
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        running.delete(this);
        resolve(code ?? signal ?? 'unknown');
      });
    });
  }

  /** Runs it to its end (a usage error, --help). */
  static async run(
    args: readonly string[],
    options: { env?: Record<string, string>; cwd?: string } = {},
  ): Promise<{ status: number | string; stdout: string; stderr: string }> {
    const server = new ServerProcess(args, { env: options.env ?? serverEnv(), cwd: options.cwd ?? os.tmpdir() });
    const status = await server.exited;
    return { status, stdout: server.stdout, stderr: server.stderr };
  }

  /**
   * Waits for the port file it writes once listening, and for its start-up lines (the console URL
   * with the token, which `token()` reads) to reach this process: the pipe may bring them after
   * the file is there, later still on a busy machine. Fails (with its output) if it exits.
   */
  async ports(portFile: string, ms = 15_000): Promise<{ tcp: number; http: number; pid: number }> {
    const deadline = Date.now() + ms;
    let exited = false;
    void this.exited.then(() => {
      exited = true;
    });
    while (Date.now() < deadline && !exited) {
      const text = await readFile(portFile, 'utf8').catch(() => undefined);
      if (text !== undefined && /^token: /m.test(this.stdout)) {
        return JSON.parse(text) as { tcp: number; http: number; pid: number };
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`claw-server did not listen (exited: ${exited}); stderr:\n${this.stderr}\nstdout:\n${this.stdout}`);
  }

  /** The token from the console URL it printed. */
  token(): string {
    const token = /#token=(\S+)/.exec(this.stdout)?.[1];
    if (token === undefined) throw new Error(`no console URL in the output:\n${this.stdout}`);
    return token;
  }

  signal(name: NodeJS.Signals): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(name);
  }

  async kill(): Promise<void> {
    this.signal('SIGKILL');
    await this.exited;
  }
}

/**
 * The live processes whose command line is exactly `argv` (say `['sleep', '31.5']`): the program
 * itself, not a shell or sandbox whose command line merely mentions it.
 */
export async function processesRunning(argv: readonly string[]): Promise<number[]> {
  const wanted = `${argv.join('\0')}\0`;
  const found: number[] = [];
  for (const pid of await processesWith(argv.join(' '))) {
    const cmdline = await readFile(path.join('/proc', String(pid), 'cmdline'), 'utf8').catch(() => '');
    if (cmdline === wanted) found.push(pid);
  }
  return found;
}

/** Processes (other than zombies) whose command line contains `marker`. */
export async function processesWith(marker: string): Promise<number[]> {
  const { readdir } = await import('node:fs/promises');
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(path.join('/proc', entry, 'cmdline'), 'utf8').catch(() => '');
    if (!cmdline.replaceAll('\0', ' ').includes(marker)) continue;
    const status = await readFile(path.join('/proc', entry, 'status'), 'utf8').catch(() => '');
    if (!/^State:\s+Z/m.test(status)) found.push(Number(entry));
  }
  return found;
}
