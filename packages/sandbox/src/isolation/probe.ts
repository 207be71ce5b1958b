import { execFile, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { BubblewrapSpawner } from './bubblewrap-spawner.js';
import { defaultCommandEnvironment, launcherEnvironment } from './environment.js';
import { seccompArchOf } from './seccomp.js';
import type { IsolationProbe } from './types.js';

const probeTimeoutMs = 5000;

/**
 * Finds out whether bash commands can be isolated here: Linux on x86_64 or aarch64, a bubblewrap
 * that answers `--version`, and a trial sandbox — the same invocation commands get, seccomp filter
 * included — that runs `true` in the temp folder. Never throws; `reason` says what failed (not
 * found, not executable, user namespaces refused, ...). Takes a few milliseconds; each step gives
 * up after 5 s.
 */
export async function probeIsolation(
  options: { bwrapPath?: string } = {},
): Promise<IsolationProbe> {
  if (process.platform !== 'linux') {
    return unavailable(`bash isolation uses bubblewrap, which needs Linux; this is ${process.platform}`);
  }
  if (seccompArchOf(process.arch) === undefined) {
    return unavailable(
      `the seccomp filter has no syscall numbers for ${process.arch} (only x64 and arm64)`,
    );
  }
  const bwrapPath = options.bwrapPath ?? 'bwrap';
  const env = defaultCommandEnvironment();
  // The version only names bubblewrap in the description: it is asked while the trial runs (the
  // probe is on the path to a session's first model request, REAL-1).
  const asked = askVersion(bwrapPath, launcherEnvironment(env));
  let trial: Promise<TrialOutcome>;
  try {
    const spawner = new BubblewrapSpawner({
      bwrapPath,
      version: 'unknown',
      env,
      allowNetwork: false,
      processLimit: {
        maxProcesses: 256,
        enforcement: 'rlimit',
        summary: '',
        acquire: () => undefined,
      },
      homeDir: undefined,
      resolvConf: undefined,
    });
    trial = waitForTrial(spawner.spawn('true', { workDir: os.tmpdir() }));
  } catch (error) {
    trial = Promise.resolve({
      exitCode: null,
      stderr: '',
      error: error instanceof Error ? error.message : String(error),
    });
  }
  const [answer, outcome] = await Promise.all([asked, trial]);
  if ('reason' in answer) return unavailable(answer.reason);
  const version = answer.version;
  if (outcome.error !== undefined) {
    return unavailable(`bubblewrap ${version} could not be started: ${outcome.error}`);
  }
  if (outcome.exitCode !== 0) {
    const detail = firstLine(outcome.stderr) ||
      (outcome.exitCode === null ? 'it was stopped' : `exit status ${outcome.exitCode}`);
    return unavailable(`bubblewrap ${version} cannot create a sandbox here: ${detail}`);
  }
  return { available: true, version };
}

function unavailable(reason: string): IsolationProbe {
  return { available: false, reason };
}

async function askVersion(
  bwrapPath: string,
  env: Record<string, string>,
): Promise<{ version: string } | { reason: string }> {
  return new Promise((resolve) => {
    execFile(
      bwrapPath,
      ['--version'],
      { env, cwd: '/', timeout: probeTimeoutMs, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (error !== null) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === 'ENOENT') {
            resolve({ reason: `bubblewrap was not found (looked for ${JSON.stringify(bwrapPath)})` });
          } else if (code === 'EACCES') {
            resolve({ reason: `${bwrapPath} cannot be executed (permission denied)` });
          } else {
            const detail = firstLine(stderr) || error.message;
            resolve({ reason: `${bwrapPath} --version failed: ${detail}` });
          }
          return;
        }
        const version = /^bubblewrap\s+(\S+)/m.exec(stdout)?.[1];
        resolve(
          version === undefined
            ? { reason: `${bwrapPath} is not bubblewrap (--version printed ${JSON.stringify(firstLine(stdout))})` }
            : { version },
        );
      },
    );
  });
}

interface TrialOutcome {
  exitCode: number | null;
  stderr: string;
  error: string | undefined;
}

function waitForTrial(child: ChildProcess): Promise<TrialOutcome> {
  return new Promise((resolve) => {
    let stderr = '';
    let error: string | undefined;
    child.stdout?.resume();
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < 4096) stderr += chunk;
    });
    const killGroup = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      error = `the trial sandbox did not finish within ${probeTimeoutMs / 1000} s`;
      killGroup();
    }, probeTimeoutMs);
    child.once('error', (spawnError) => {
      error = (spawnError as NodeJS.ErrnoException).code ?? spawnError.message;
    });
    child.once('exit', killGroup);
    child.once('close', (exitCode: number | null) => {
      clearTimeout(timer);
      resolve({ exitCode, stderr, error });
    });
  });
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0]?.trim() ?? '';
}
