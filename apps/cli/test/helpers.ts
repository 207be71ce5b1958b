import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serverEventSchema, type ServerEvent } from '@claw/channel';
import type { Tool } from '@claw/core';
import { ScriptedProvider } from '@claw/testing';
import type { RecordedRequest } from '@claw/testing/node';

/** The built `claw` (the global setup builds it). */
export const clawMain = fileURLToPath(new URL('../dist/main.js', import.meta.url));

const running = new Set<ClawProcess>();
const tempDirs = new Set<string>();

/** A fresh temporary folder, removed by `cleanUp()`. */
export async function tempDir(prefix = 'claw-cli-test-'): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

/** Also remove `dir` in `cleanUp()` (e.g. a demo workspace the CLI made). */
export function removeLater(dir: string): void {
  tempDirs.add(dir);
}

/** Kills every `claw` still running and removes the temporary folders (call in afterEach). */
export async function cleanUp(): Promise<void> {
  await Promise.all([...running].map((claw) => claw.kill()));
  await Promise.all([...tempDirs].map((dir) => rm(dir, { recursive: true, force: true })));
  tempDirs.clear();
}

/** A minimal environment: no API key unless the test gives one, colours off. */
export function baseEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? os.tmpdir(),
    // The user's own AGENTS.md (REAL-2) never reaches a test's model: a folder that has none.
    XDG_CONFIG_HOME: path.join(os.tmpdir(), 'claw-cli-test-no-user-config'),
    NO_COLOR: '1',
    ...extra,
  };
}

/** The environment for a run against the fake OpenAI server. */
export function modelEnv(baseURL: string): Record<string, string> {
  return baseEnv({ OPENAI_BASE_URL: baseURL, OPENAI_API_KEY: 'test' });
}

interface StartOptions {
  env?: Record<string, string>;
  cwd?: string;
  nodeArgs?: readonly string[];
}

/** A `claw` child process over pipes (no TTY), with its output collected. */
export class ClawProcess {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  /** The exit code, or the signal name when it was killed by one. */
  readonly exited: Promise<number | string>;
  private readonly listeners = new Set<() => void>();

  private constructor(
    args: readonly string[],
    env: Record<string, string>,
    cwd: string,
    nodeArgs: readonly string[],
  ) {
    this.child = spawn(process.execPath, [...nodeArgs, clawMain, ...args], {
      cwd,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stdout?.setEncoding('utf8').on('data', (text: string) => {
      this.stdout += text;
      this.notify();
    });
    this.child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      this.stderr += text;
      this.notify();
    });
    this.exited = new Promise((resolve) => {
      this.child.once('close', (code, signal) => {
        running.delete(this);
        this.notify();
        resolve(code ?? signal ?? 'unknown');
      });
    });
    running.add(this);
  }

  /** `nodeArgs`: options for node itself, before the script. */
  static start(args: readonly string[], options: StartOptions = {}): ClawProcess {
    return new ClawProcess(
      args,
      options.env ?? baseEnv(),
      options.cwd ?? os.tmpdir(),
      options.nodeArgs ?? [],
    );
  }

  /** Runs `claw` to its end and gives its exit status and output. */
  static async run(
    args: readonly string[],
    options: StartOptions & { input?: string } = {},
  ): Promise<{ status: number | string; stdout: string; stderr: string }> {
    const claw = ClawProcess.start(args, options);
    claw.child.stdin?.end(options.input ?? '');
    const status = await claw.exited;
    return { status, stdout: claw.stdout, stderr: claw.stderr };
  }

  /** Types one line. */
  send(line: string): void {
    this.child.stdin?.write(`${line}\n`);
  }

  /** How often `text` occurs in stdout. */
  count(text: string): number {
    return this.stdout.split(text).length - 1;
  }

  /** Waits until `check` holds for the output; fails after `timeoutMs` showing the output. */
  async until(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
    if (check()) return;
    await new Promise<void>((resolve, reject) => {
      const listener = (): void => {
        if (!check()) return;
        done();
        resolve();
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out waiting for ${what}\n--- stdout ---\n${this.stdout}\n--- stderr ---\n${this.stderr}`));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        this.listeners.delete(listener);
      };
      this.listeners.add(listener);
    });
  }

  /** Waits until stdout holds `text` at least `times` times. */
  waitFor(text: string, times = 1, timeoutMs?: number): Promise<void> {
    return this.until(`${times}× ${JSON.stringify(text)} on stdout`, () => this.count(text) >= times, timeoutMs);
  }

  /** Kills the process (if it still runs) and waits for it to end. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

/** Parses stream-json output: every line must be a valid CH-2 event. */
export function parseEvents(stdout: string): ServerEvent[] {
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => serverEventSchema.parse(JSON.parse(line)));
}

/** The messages the model was sent in a recorded request. */
export function messagesOf(request: RecordedRequest | undefined): Array<{ role: string; content: unknown }> {
  return (request?.body as { messages?: Array<{ role: string; content: unknown }> } | undefined)?.messages ?? [];
}

/** Pids of processes whose command line contains `marker` (e.g. `sleep 30.4242`). */
export async function processesWith(marker: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.split('\0').join(' ').includes(marker)) pids.push(Number(entry));
  }
  return pids;
}

/** Polls `check` every 50 ms until it holds; false after `timeoutMs`. */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * A reply of two calls for tests of questions asked while other calls go on: a `write_file`
 * (which asks) and `check_later` (see {@link checkLaterTool}), then the answer `done`.
 */
export function askingWhileCheckingScript(): ScriptedProvider {
  return new ScriptedProvider([
    {
      toolCalls: [
        { id: 'call_write', name: 'write_file', arguments: { path: 'notes.txt', content: 'hi\n' } },
        { id: 'call_check', name: 'check_later', arguments: {} },
      ],
    },
    { text: 'done' },
  ]);
}

/**
 * `check_later`: a call that needs no approval and ends (`checked`) once `shown()` says the other
 * call's question is on screen, so that its lines come after the question.
 */
export function checkLaterTool(shown: () => boolean): Tool {
  return {
    definition: {
      name: 'check_later',
      description: 'Ends once a question is on screen.',
      parameters: { type: 'object', properties: {} },
    },
    risk: 'safe',
    execute: async () => {
      await eventually(async () => shown());
      return { content: 'checked' };
    },
  };
}
