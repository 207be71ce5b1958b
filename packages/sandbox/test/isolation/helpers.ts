import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import type { CommandSpawner } from '../../src/index.js';

export interface CommandResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/**
 * Runs a command the way the bash tool does: when it exits (or after `timeoutMs`, default 15 s: a
 * safety net for a command that hangs, generous because a loaded machine may take seconds to
 * start a sandbox) its whole process group gets SIGKILL, then the result comes once the pipes are
 * closed. `timedOut` says whether the safety net fired.
 */
export function runCommand(
  spawner: CommandSpawner,
  command: string,
  workDir: string,
  options: { timeoutMs?: number; onStart?: (child: ChildProcess) => void } = {},
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawner.spawn(command, { workDir });
    options.onStart?.(child);
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let exitCode: number | null = null;
    let signal: NodeJS.Signals | null = null;
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, options.timeoutMs ?? 15_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code, exitSignal) => {
      exitCode = code;
      signal = exitSignal;
      killGroup(child);
    });
    child.once('close', () => {
      clearTimeout(timer);
      resolve({ exitCode, signal, stdout, stderr, timedOut });
    });
  });
}

/** The bash tool's `process.kill(-pid, 'SIGKILL')`. */
export function killGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/**
 * A temp folder that no mask of the sandbox covers (unlike /tmp), for what must be hidden on
 * its own: FHS gives every Linux system one.
 */
export const unmaskedTempDir = '/var/tmp';

/** Temp folders made through `makeTempDir` (in `parent`, default /tmp) are removed after each test. */
export function useTempDirs(): {
  makeTempDir: (prefix?: string, parent?: string) => Promise<string>;
} {
  const made: string[] = [];
  afterEach(async () => {
    await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
  return {
    makeTempDir: async (prefix = 'claw-isolation-', parent = os.tmpdir()) => {
      const dir = await realpath(await mkdtemp(path.join(parent, prefix)));
      made.push(dir);
      return dir;
    },
  };
}

/** A workspace `ws` inside a fresh temp folder, with a sibling folder `sibling` next to it. */
export async function makeWorkspace(
  makeTempDir: () => Promise<string>,
): Promise<{ base: string; workspace: string; sibling: string }> {
  const base = await makeTempDir();
  const workspace = path.join(base, 'ws');
  const sibling = path.join(base, 'sibling');
  await mkdir(workspace);
  await mkdir(sibling);
  return { base, workspace, sibling };
}

/** A marker argument no other process has, e.g. `100.482913` for `sleep`. */
export function uniqueSleepSeconds(): string {
  return `100.${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`;
}

/**
 * Host pids of live processes whose command line is exactly `argv` (zombies excluded: a zombie
 * has ended). Pids inside the sandbox's PID namespace differ, so this looks at the host's /proc.
 */
export function findHostProcesses(argv: readonly string[]): number[] {
  const wanted = `${argv.join('\0')}\0`;
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8') !== wanted) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state !== 'Z' && state !== 'X') found.push(Number(name));
    } catch {
      // Exited while we looked.
    }
  }
  return found;
}

/**
 * Polls `condition` every 20 ms until it holds or `timeoutMs` passes; returns the last value. It
 * returns as soon as the condition holds, so the bound (default 10 s) only costs time when the
 * awaited thing never happens; it is generous because on a loaded machine it may take seconds.
 */
export async function waitFor<T>(
  read: () => T,
  condition: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = read();
  while (!condition(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    value = read();
  }
  return value;
}

/**
 * A classic BPF interpreter for the instructions seccomp filters use, written from the kernel's
 * opcode values independently of the assembler: runs `program` on a `seccomp_data` and returns
 * the action.
 */
export function runSeccompProgram(
  program: Buffer,
  data: { nr: number; arch: number; args?: readonly number[] },
): number {
  const memory = Buffer.alloc(64);
  memory.writeInt32LE(data.nr, 0);
  memory.writeUInt32LE(data.arch, 4);
  (data.args ?? []).forEach((value, index) => {
    memory.writeBigUInt64LE(BigInt.asUintN(64, BigInt(value)), 16 + 8 * index);
  });
  let accumulator = 0;
  let pc = 0;
  for (let steps = 0; steps < 10_000; steps += 1) {
    if (pc * 8 >= program.length) throw new Error(`ran off the end of the program at ${pc}`);
    const code = program.readUInt16LE(pc * 8);
    const jumpIfTrue = program.readUInt8(pc * 8 + 2);
    const jumpIfFalse = program.readUInt8(pc * 8 + 3);
    const value = program.readUInt32LE(pc * 8 + 4);
    const branch = (taken: boolean): number => pc + 1 + (taken ? jumpIfTrue : jumpIfFalse);
    switch (code) {
      case 0x20: // BPF_LD | BPF_W | BPF_ABS
        accumulator = memory.readUInt32LE(value);
        pc += 1;
        break;
      case 0x15: // BPF_JMP | BPF_JEQ | BPF_K
        pc = branch(accumulator === value);
        break;
      case 0x25: // BPF_JGT
        pc = branch(accumulator > value);
        break;
      case 0x35: // BPF_JGE
        pc = branch(accumulator >= value);
        break;
      case 0x45: // BPF_JSET
        pc = branch((accumulator & value) >>> 0 !== 0);
        break;
      case 0x05: // BPF_JMP | BPF_JA
        pc += 1 + value;
        break;
      case 0x06: // BPF_RET | BPF_K
        return value;
      default:
        throw new Error(`unknown opcode 0x${code.toString(16)} at ${pc}`);
    }
  }
  throw new Error('the program did not return');
}
