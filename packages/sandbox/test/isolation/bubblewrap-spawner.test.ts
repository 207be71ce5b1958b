import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  bubblewrapInvocation,
  plainCommandSpawner,
  probeIsolation,
} from '../../src/index.js';
import {
  BubblewrapSpawner,
  joinCgroupScript,
  type BubblewrapSettings,
} from '../../src/isolation/bubblewrap-spawner.js';
import { defaultCommandEnvironment } from '../../src/isolation/environment.js';
import { processLimitScript } from '../../src/isolation/layout.js';
import type { CommandCgroup, ProcessLimit } from '../../src/isolation/process-limit.js';
import { runCommand, useTempDirs } from './helpers.js';

const probe = await probeIsolation();
const { makeTempDir } = useTempDirs();

function settings(processLimit: ProcessLimit): BubblewrapSettings {
  return {
    bwrapPath: 'bwrap',
    version: probe.available ? probe.version : '',
    env: defaultCommandEnvironment(),
    allowNetwork: false,
    processLimit,
    homeDir: undefined,
    resolvConf: undefined,
  };
}

const rlimit: ProcessLimit = {
  maxProcesses: 32,
  enforcement: 'rlimit',
  summary: 'at most 32 processes',
  acquire: () => undefined,
};

/**
 * A 'cgroup' limit whose leaves are plain files in a temp folder: the launcher's write lands in
 * `joinFile`, and each release is counted.
 */
async function fakeCgroupLimit(): Promise<{
  limit: ProcessLimit;
  leaves: { joinFile: string; procsFile: string; released: number }[];
}> {
  const folder = await makeTempDir();
  const leaves: { joinFile: string; procsFile: string; released: number }[] = [];
  const limit: ProcessLimit = {
    maxProcesses: 37,
    enforcement: 'cgroup',
    summary: 'at most 37 processes (pids cgroup)',
    acquire: (): CommandCgroup => {
      const leaf = {
        joinFile: path.join(folder, `join-${leaves.length}`),
        procsFile: path.join(folder, `procs-${leaves.length}`),
        released: 0,
      };
      leaves.push(leaf);
      return { ...leaf, release: () => (leaf.released += 1) };
    },
  };
  return { limit, leaves };
}

describe('BubblewrapSpawner invocation', () => {
  it('hands every command the same seccomp program, built once per spawner', async () => {
    const spawner = new BubblewrapSpawner(settings(rlimit));
    const workDir = await makeTempDir();
    const first = spawner.invocation('true', { workDir });
    const second = spawner.invocation('ls', { workDir });
    expect(first.inputs).toHaveLength(2);
    expect(second.inputs[0]).toBe(first.inputs[0]);
    expect(second.inputs[1]).toBe(first.inputs[1]);
    expect(first.args.slice(first.args.indexOf('--seccomp'), first.args.indexOf('--seccomp') + 2))
      .toEqual(['--seccomp', '3']);
    expect(first.args).toContain('--args');
    expect(first.args[first.args.indexOf('--args') + 1]).toBe('4');
  });

  it('sets RLIMIT_NPROC inside the sandbox only when that is the enforcement', async () => {
    const workDir = await makeTempDir();
    const limited = new BubblewrapSpawner(settings(rlimit)).invocation('npm test', { workDir });
    expect(limited.args.slice(limited.args.indexOf('--') + 5))
      .toEqual([processLimitScript, 'bash', '32', 'npm test']);
    const { limit } = await fakeCgroupLimit();
    const cgroup = new BubblewrapSpawner(settings(limit)).invocation('npm test', { workDir });
    expect(cgroup.args.slice(cgroup.args.indexOf('--'))).toEqual(['--', 'bash', '--norc', '--noprofile', '-c', 'npm test']);
    const none = new BubblewrapSpawner(settings({ ...rlimit, enforcement: 'none' }))
      .invocation('npm test', { workDir });
    expect(none.args).not.toContain(processLimitScript);
  });

  it('is what bubblewrapInvocation returns, and nothing for a spawner without bubblewrap', async () => {
    const workDir = await makeTempDir();
    const spawner = new BubblewrapSpawner(settings(rlimit));
    expect(bubblewrapInvocation(spawner, 'true', { workDir })).toEqual(spawner.invocation('true', { workDir }));
    expect(bubblewrapInvocation(plainCommandSpawner(), 'true', { workDir })).toBeUndefined();
  });
});

describe.skipIf(!probe.available)('BubblewrapSpawner with a cgroup limit', () => {
  it('joins the leaf by writing 0 to its join file, then runs bubblewrap as the same process', async () => {
    const { limit, leaves } = await fakeCgroupLimit();
    const spawner = new BubblewrapSpawner(settings(limit));
    const workDir = await makeTempDir();
    await writeFile(path.join(workDir, 'hello.txt'), 'hello\n');
    let spawnargs: string[] = [];
    const result = await runCommand(spawner, 'cat hello.txt; ulimit -u', workDir, {
      onStart: (child) => (spawnargs = child.spawnargs),
    });
    expect(result).toMatchObject({ exitCode: 0, stderr: '' });
    const [leaf] = leaves;
    expect(leaves).toHaveLength(1);
    // 0, not a pid: the kernel's cheap path for a thread moving itself (see CommandCgroup).
    expect(await readFile(leaf?.joinFile ?? '', 'utf8')).toBe('0\n');
    const bubblewrap = spawner.invocation('cat hello.txt; ulimit -u', { workDir });
    expect(spawnargs).toEqual([
      '/bin/sh', '-c', joinCgroupScript, leaf?.joinFile, bubblewrap.file, ...bubblewrap.args,
    ]);
    // No RLIMIT_NPROC step: the command ran in the first bash, with the limit it inherited.
    expect(result.stdout).toMatch(/^hello\n(unlimited|\d+)\n$/);
    expect(result.stdout).not.toBe('hello\n37\n');
    expect(leaf?.released).toBeGreaterThan(0);
  });

  it('makes a fresh leaf for every command and releases each', async () => {
    const { limit, leaves } = await fakeCgroupLimit();
    const spawner = new BubblewrapSpawner(settings(limit));
    const workDir = await makeTempDir();
    for (let index = 0; index < 3; index += 1) {
      expect((await runCommand(spawner, 'true', workDir)).exitCode).toBe(0);
    }
    expect(leaves.map((leaf) => leaf.joinFile)).toHaveLength(3);
    expect(new Set(leaves.map((leaf) => leaf.joinFile)).size).toBe(3);
    expect(leaves.every((leaf) => leaf.released > 0)).toBe(true);
  });
});
