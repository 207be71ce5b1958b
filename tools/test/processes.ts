// Child processes and temporary folders for the tests that run what users run (the examples,
// the packed packages): each process is killed and each folder removed by `cleanUp`.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const folders = new Set<string>();
const running = new Set<Running>();

/** A new folder under the OS temp dir, removed by `cleanUp`. */
export async function tempFolder(prefix: string): Promise<string> {
  const folder = await mkdtemp(path.join(os.tmpdir(), `${prefix}-`));
  folders.add(folder);
  return folder;
}

/** Kills every process started here that is still running and removes the temporary folders. */
export async function cleanUp(): Promise<void> {
  await Promise.all([...running].map((child) => child.kill()));
  const made = [...folders];
  folders.clear();
  await Promise.all(made.map((folder) => rm(folder, { recursive: true, force: true })));
}

export interface Finished {
  /** The exit code, or the signal's name when one ended it. */
  status: number | string;
  stdout: string;
  stderr: string;
}

export interface StartOptions {
  cwd: string;
  env: Record<string, string | undefined>;
}

/** A started process whose output is collected; `stdin` stays open for `write`. */
export class Running {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  readonly exited: Promise<Finished>;
  private readonly waiters = new Set<() => void>();

  constructor(command: string, args: readonly string[], options: StartOptions) {
    this.child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: 'pipe' });
    running.add(this);
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout += chunk;
      for (const wake of this.waiters) wake();
    });
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolve) => {
      this.child.once('close', (code, signal) => {
        running.delete(this);
        for (const wake of this.waiters) wake();
        resolve({ status: code ?? signal ?? 'unknown', stdout: this.stdout, stderr: this.stderr });
      });
    });
  }

  get isRunning(): boolean {
    return running.has(this);
  }

  /** Waits until stdout holds `text`; fails (with the output so far) after `ms` or on exit. */
  async waitFor(text: string, ms = 15_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!this.stdout.includes(text)) {
      if (!this.isRunning || Date.now() > deadline) {
        throw new Error(
          `${this.isRunning ? 'no' : 'exited without'} "${text}" in the output` +
          `\nstdout:\n${this.stdout}\nstderr:\n${this.stderr}`,
        );
      }
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          this.waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, Math.max(0, deadline - Date.now()) + 1);
        this.waiters.add(wake);
      });
    }
  }

  write(text: string): void {
    this.child.stdin?.write(text);
  }

  /** Waits for the end, killing the process after `ms`. */
  async finish(ms: number): Promise<Finished> {
    this.child.stdin?.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), ms);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }
}

/** Runs a command to its end, with `input` on stdin; killed after `ms`. */
export async function run(
  command: string,
  args: readonly string[],
  options: StartOptions & { input?: string; ms?: number },
): Promise<Finished> {
  const child = new Running(command, args, options);
  if (options.input !== undefined) child.write(options.input);
  return child.finish(options.ms ?? 60_000);
}

/** What a failed command said, for an assertion's message. */
export function outputOf(result: Finished): string {
  return `exit ${result.status}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
}
