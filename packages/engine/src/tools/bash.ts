import type { ChildProcess } from 'node:child_process';
import {
  ClawError,
  abortReason,
  askOnce,
  defaultMaxOutputBytes,
  defineTool,
  errnoCode,
  raceAbort,
  throwIfAborted,
  type Eventual,
  type ToolProgress,
  type ToolResult,
} from '@claw/core';
import {
  checkDestructiveCommand,
  checkProtectedPaths,
  checkWorkspaceEscape,
  plainCommandSpawner,
  type CommandSpawner,
} from '@claw/sandbox';
import { z } from 'zod';
import { CappedOutput } from './capped-output.js';
import type { BuiltinTool } from './builtin-tool.js';

/** Options of {@link createBashTool}. */
export interface BashToolOptions {
  /**
   * Wall time of one command when the model asks for no other (`timeout_ms`); then its whole
   * process group is killed. Default 120,000 ms (REAL-3).
   */
  timeoutMs?: number;
  /** The most `timeout_ms` the model may ask for. Default 600,000 ms (REAL-3). */
  maxTimeoutMs?: number;
  /** Bytes kept of stdout and of stderr each (head and tail; the middle is cut). Default 64 KiB. */
  maxOutputBytes?: number;
  /**
   * How commands start: isolated (`createCommandSpawner` from `@claw/sandbox`) or not. Default: a
   * plain, NOT isolated spawner whose commands get only PATH, LANG, LC_ALL and TERM. May be a
   * promise (the isolation probe still running): the first command waits for it, nothing else
   * does — so a run's first model call need not wait for the probe. May be a function that gives
   * one: it is called once, by the first command (the probe starts only when bash is used).
   */
  spawner?: Eventual<CommandSpawner>;
  /**
   * Apply the text fences (destructive commands, workspace escapes, and — when commands are not
   * isolated — protected paths) before running. Default true; turning them off is for measuring
   * what the OS layer stops on its own.
   */
  fences?: boolean;
  /** After a timeout, time between SIGTERM and SIGKILL of the process group. Default 500 ms. */
  killGraceMs?: number;
  /**
   * How often a command still running tells the caller's `onProgress` how long it has run and
   * the last line of its output (`progress` is the milliseconds run). Default 5,000 ms.
   */
  progressEveryMs?: number;
}

/** Default of `BashToolOptions.timeoutMs`: 2 minutes. */
export const defaultBashTimeoutMs = 120_000;
/** Default of `BashToolOptions.maxTimeoutMs`: 10 minutes. */
export const defaultBashMaxTimeoutMs = 600_000;
/** The least `timeout_ms` the model may ask for (a model that means seconds is told at once). */
const minTimeoutMs = 1000;

/** The arguments of `bash`, with the limits of `timeout_ms` stated for the model. */
function bashSchema(timeoutMs: number, maxTimeoutMs: number) {
  return z.object({
    command: z.string().min(1).describe('The command line, run by `bash -c` in the workspace root.'),
    timeout_ms: z
      .number()
      .int()
      .min(Math.min(minTimeoutMs, timeoutMs))
      .max(maxTimeoutMs)
      .optional()
      .describe(
        `Time limit in milliseconds (default ${timeoutMs}, at most ${maxTimeoutMs}); then the ` +
        'command and everything it started are killed. Raise it for long builds and test runs.',
      ),
  });
}

/** The arguments of `bash` with the default limits (TOOL-4). */
export const bashArguments = bashSchema(defaultBashTimeoutMs, defaultBashMaxTimeoutMs);

/** The parsed arguments of a `bash` call. */
export type BashArguments = z.output<typeof bashArguments>;

/** How long to wait for the output pipes to close once the command and its group are gone. */
const drainMs = 1000;

/**
 * Creates the `bash` tool (TOOL-4, risk `dangerous`): runs `bash -c <command>` in the workspace
 * root as its own process group, stdin closed. A command the sandbox fences flag as destructive or
 * escaping the workspace is not run (error result `refused: <reason>`). After `timeoutMs` the
 * group gets SIGTERM, then SIGKILL after `killGraceMs`; when the command ends, whatever it left
 * running in its group is killed too. The result gives the exit status, stdout and stderr (each cut
 * in the middle beyond `maxOutputBytes`); it is an error result on a non-zero exit, a signal or
 * a timeout.
 *
 * `execute` rejects with the signal's reason when aborted (the process group is killed first) and
 * with a `ClawError` (`bash_spawn_failed`) when bash cannot be started.
 */
export function createBashTool(options: BashToolOptions = {}): BuiltinTool<BashArguments> {
  // A probe that fails is reported by the command that needs it.
  const spawnerOf = askOnce(options.spawner ?? plainCommandSpawner());
  const fences = options.fences ?? true;
  const timeoutMs = options.timeoutMs ?? defaultBashTimeoutMs;
  const maxTimeoutMs = options.maxTimeoutMs ?? defaultBashMaxTimeoutMs;
  for (const [name, value] of [['timeoutMs', timeoutMs], ['maxTimeoutMs', maxTimeoutMs]] as const) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new RangeError(`bash: ${name} must be a whole number of milliseconds ≥ 1, got ${value}`);
    }
  }
  if (timeoutMs > maxTimeoutMs) {
    throw new RangeError(`bash: timeoutMs (${timeoutMs}) must not be above maxTimeoutMs (${maxTimeoutMs})`);
  }
  const maxOutputBytes = options.maxOutputBytes ?? defaultMaxOutputBytes;
  const killGraceMs = options.killGraceMs ?? 500;
  const progressEveryMs = options.progressEveryMs ?? 5_000;
  // defineTool types execute as ToolResult | string; these tools always return a ToolResult.
  return defineTool({
    name: 'bash',
    description:
      'Run a shell command with `bash -c` in the workspace root (the working directory). Use ' +
      'relative paths; commands that are destructive or leave the workspace are refused. stdin is ' +
      'closed (nothing interactive works); the command is killed after ' +
      `${formatDuration(timeoutMs)} unless \`timeout_ms\` asks for longer (at most ` +
      `${formatDuration(maxTimeoutMs)}), and background processes are stopped when it ends. ` +
      'Returns the exit code, stdout and stderr (long output is cut in the middle).',
    risk: 'dangerous',
    schema: bashSchema(timeoutMs, maxTimeoutMs),
    async execute(args, { signal, workDir, onProgress }): Promise<ToolResult> {
      throwIfAborted(signal);
      const spawner = await raceAbort(spawnerOf(), signal);
      const settings: RunSettings = {
        timeoutMs: args.timeout_ms ?? timeoutMs,
        maxOutputBytes,
        spawner,
        killGraceMs,
        progress: onProgress === undefined ? undefined : { everyMs: progressEveryMs, onProgress },
      };
      const reason = args.command.includes('\0')
        ? 'the command contains a NUL byte'
        : fences
          ? checkDestructiveCommand(args.command) ??
          checkWorkspaceEscape(args.command) ??
          // Isolated commands see .claw/ and .git/hooks read-only; plain ones need the fence.
          (spawner.mode === 'none' ? checkProtectedPaths(args.command) : undefined)
          : undefined;
      if (reason !== undefined) return { content: `refused: ${reason}`, isError: true };
      const outcome = await runCommand(args.command, workDir, signal, settings);
      if (outcome.aborted) throw abortReason(signal);
      return formatOutcome(outcome, settings.timeoutMs, maxTimeoutMs);
    },
  }) as BuiltinTool<BashArguments>;
}

interface RunSettings {
  timeoutMs: number;
  maxOutputBytes: number;
  spawner: CommandSpawner;
  killGraceMs: number;
  progress: { everyMs: number; onProgress: (progress: ToolProgress) => void } | undefined;
}

interface RunOutcome {
  exitCode: number | null;
  exitSignal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  stdout: string;
  stderr: string;
}

/**
 * Runs the command and settles once it has exited, its process group has been killed and its
 * output pipes are closed (or `drainMs` after exit, should a process that left the group still
 * hold them). Never rejects on abort: the caller sees `aborted` and throws the signal's reason.
 */
function runCommand(
  command: string,
  workDir: string,
  signal: AbortSignal,
  settings: RunSettings,
): Promise<RunOutcome> {
  return new Promise<RunOutcome>((resolve, reject) => {
    let child: ChildProcess;
    try {
      // Its own process group, so that one kill reaches every process the command started.
      child = settings.spawner.spawn(command, { workDir });
    } catch (error) {
      reject(spawnError(error));
      return;
    }
    const stdout = new CappedOutput(settings.maxOutputBytes);
    const stderr = new CappedOutput(settings.maxOutputBytes);
    const latest = new LatestOutput();
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout.push(chunk);
      latest.push(chunk);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr.push(chunk);
      latest.push(chunk);
    });

    let timedOut = false;
    let aborted = false;
    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];

    const killGroup = (killSignal: NodeJS.Signals): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, killSignal);
      } catch {
        // ESRCH: the group is already gone.
      }
    };
    const cleanUp = (): void => {
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    };
    const finish = (): void => {
      if (settled) return;
      cleanUp();
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve({
        exitCode,
        exitSignal,
        timedOut,
        aborted,
        stdout: stdout.text('stdout'),
        stderr: stderr.text('stderr'),
      });
    };
    function onAbort(): void {
      aborted = true;
      killGroup('SIGKILL');
    }

    signal.addEventListener('abort', onAbort, { once: true });
    const { progress } = settings;
    if (progress !== undefined) {
      const startedAt = performance.now();
      timers.push(setInterval(() => {
        const ranMs = performance.now() - startedAt;
        progress.onProgress({ progress: Math.round(ranMs), message: latest.describe(ranMs) });
      }, progress.everyMs));
    }
    timers.push(
      setTimeout(() => {
        timedOut = true;
        killGroup('SIGTERM');
        timers.push(setTimeout(() => killGroup('SIGKILL'), settings.killGraceMs));
      }, settings.timeoutMs),
    );
    child.once('error', (error) => {
      if (settled) return;
      killGroup('SIGKILL');
      cleanUp();
      reject(spawnError(error));
    });
    child.once('exit', (code, exitedBy) => {
      exitCode = code;
      exitSignal = exitedBy;
      // Nothing the command started outlives it.
      killGroup('SIGKILL');
      timers.push(setTimeout(finish, drainMs));
    });
    child.once('close', finish);
    // The signal may have been aborted between the caller's check and the listener.
    if (signal.aborted) onAbort();
  });
}

/** Bytes of the latest output kept to find its last line. */
const latestBytes = 1024;
/** Characters of that line shown in a progress report. */
const latestLineChars = 120;

/**
 * The end of a command's output, stdout and stderr as they came, for progress reports: the last
 * line that has something on it (a line ends at `\n` or at the `\r` progress bars redraw with),
 * without terminal escape sequences and control characters.
 */
class LatestOutput {
  private tail: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): void {
    const end = chunk.subarray(-latestBytes);
    this.tail = Buffer.concat([this.tail, end]).subarray(-latestBytes);
  }

  /** `running for 12s; last output: "…"`, or `running for 12s, no output yet`. */
  describe(ranMs: number): string {
    const ran = `running for ${formatDuration(Math.round(ranMs))}`;
    const line = this.tail
      .toString('utf8')
      // eslint-disable-next-line no-control-regex -- escape sequences and control characters
      .replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g, '')
      .split(/[\r\n]/)
      .map((part) => part.trim())
      .findLast((part) => part !== '');
    if (line === undefined) return `${ran}, no output yet`;
    const shown = line.length > latestLineChars ? `${line.slice(0, latestLineChars - 1)}…` : line;
    return `${ran}; last output: ${JSON.stringify(shown)}`;
  }
}

function spawnError(error: unknown): ClawError {
  return new ClawError(
    `could not start bash in the workspace: ${errnoCode(error) ?? String(error)}`,
    { code: 'bash_spawn_failed', cause: error },
  );
}

function formatOutcome(outcome: RunOutcome, timeoutMs: number, maxTimeoutMs: number): ToolResult {
  let status: string;
  let failed: boolean;
  if (outcome.timedOut) {
    status = `timed out after ${formatDuration(timeoutMs)} and was killed` + (
      timeoutMs < maxTimeoutMs
        ? ` (give it more time with timeout_ms, up to ${maxTimeoutMs})`
        : ' (that is the longest a command may run: split the work, or run less of it)'
    );
    failed = true;
  } else if (outcome.exitCode !== null) {
    status = `exit code: ${outcome.exitCode}`;
    failed = outcome.exitCode !== 0;
  } else {
    status = `killed by signal ${outcome.exitSignal ?? 'unknown'}`;
    failed = true;
  }
  const content = [status, section('stdout', outcome.stdout), section('stderr', outcome.stderr)]
    .join('\n');
  return failed ? { content, isError: true } : { content };
}

function section(label: string, text: string): string {
  if (text === '') return `--- ${label} (empty) ---`;
  return `--- ${label} ---\n${text.endsWith('\n') ? text.slice(0, -1) : text}`;
}

/** `30000` → `30s`, `1500` → `1.5s`, `300` → `300ms`, `600000` → `600s`. */
export function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms}ms` : `${Math.round(ms / 100) / 10}s`;
}
