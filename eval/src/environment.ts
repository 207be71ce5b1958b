import { execFile } from 'node:child_process';
import os from 'node:os';
import type { Results } from './results.js';

function git(args: string[], cwd: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile('git', args, { cwd, timeout: 5_000 }, (error, stdout) => {
      resolve(error === null ? stdout : undefined);
    });
  });
}

/** The commit the run was made on, and whether the working tree had changes (read-only git). */
export async function gitState(cwd: string): Promise<Results['git']> {
  const sha = (await git(['rev-parse', 'HEAD'], cwd))?.trim();
  const status = await git(['status', '--porcelain', '--untracked-files=no'], cwd);
  return {
    sha: sha === undefined || sha === '' ? null : sha,
    dirty: status === undefined ? null : status.trim() !== '',
  };
}

/** What machine the figures were measured on. */
export function machineInfo(): Results['machine'] {
  const cpus = os.cpus();
  return {
    platform: os.platform(),
    arch: os.arch(),
    release: os.release(),
    cpus: cpus.length,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    totalMemoryMb: Math.round(os.totalmem() / (1024 * 1024)),
    node: process.version,
    loadAverage: os.loadavg().map((value) => Math.round(value * 100) / 100),
  };
}
