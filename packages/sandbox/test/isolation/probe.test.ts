import { ClawError } from '@claw/core';
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  IsolationOptionsError,
  IsolationUnavailableError,
  createCommandSpawner,
  plainCommandSpawner,
  probeIsolation,
} from '../../src/index.js';
import { runCommand, useTempDirs } from './helpers.js';

const probe = await probeIsolation();
const available = probe.available;
const { makeTempDir } = useTempDirs();

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

async function fakeExecutable(script: string): Promise<string> {
  const file = path.join(await makeTempDir(), 'bwrap');
  await writeFile(file, `#!/bin/sh\n${script}`);
  await chmod(file, 0o755);
  return file;
}

/** An executable that claims to be bubblewrap but fails as a sandbox, like a host without userns. */
function fakeBubblewrap(): Promise<string> {
  return fakeExecutable(
    'if [ "$1" = --version ]; then echo "bubblewrap 9.9.9"; exit 0; fi\n' +
    'echo "bwrap: No permissions to create a new namespace" >&2\nexit 1\n',
  );
}

describe('probeIsolation', () => {
  it('reports a missing bubblewrap with the path it looked for', async () => {
    const result = await probeIsolation({ bwrapPath: '/nonexistent/claw-test/bwrap' });
    expect(result).toEqual({
      available: false,
      reason: 'bubblewrap was not found (looked for "/nonexistent/claw-test/bwrap")',
    });
  });

  it('reports an executable that is not bubblewrap', async () => {
    const fake = await fakeExecutable('echo "something else 1.0"\n');
    expect(await probeIsolation({ bwrapPath: fake })).toEqual({
      available: false,
      reason: `${fake} is not bubblewrap (--version printed "something else 1.0")`,
    });
  });

  it('reports a bubblewrap that cannot create a sandbox, with its error', async () => {
    const result = await probeIsolation({ bwrapPath: await fakeBubblewrap() });
    expect(result).toEqual({
      available: false,
      reason: 'bubblewrap 9.9.9 cannot create a sandbox here: bwrap: No permissions to create a new namespace',
    });
  });

  describe.skipIf(!available)('with bubblewrap installed', () => {
    it('reports it available with the version bwrap prints', async () => {
      const printed = execFileSync('bwrap', ['--version'], { encoding: 'utf8' }).trim();
      expect(printed).toMatch(/^bubblewrap \d+\.\d+/);
      expect(await probeIsolation()).toEqual({ available: true, version: printed.split(' ')[1] });
    });
  });
});

describe('createCommandSpawner', () => {
  it("throws IsolationUnavailableError for 'required' when bubblewrap is missing, saying how to fix it", async () => {
    const error = await rejection(
      createCommandSpawner({ isolation: 'required', bwrapPath: '/nonexistent/claw-test/bwrap' }),
    );
    expect(error).toBeInstanceOf(IsolationUnavailableError);
    expect(error).toBeInstanceOf(ClawError);
    const unavailable = error as IsolationUnavailableError;
    expect(unavailable.code).toBe('isolation_unavailable');
    expect(unavailable.reason).toBe('bubblewrap was not found (looked for "/nonexistent/claw-test/bwrap")');
    expect(unavailable.message).toContain('bash isolation is required, but bubblewrap does not work');
    expect(unavailable.message).toContain('apt-get install bubblewrap');
    expect(unavailable.message).toContain('allow unprivileged user namespaces');
  });

  it("throws for 'required' when user namespaces are refused", async () => {
    const error = await rejection(createCommandSpawner({ isolation: 'required', bwrapPath: await fakeBubblewrap() }));
    expect(error).toBeInstanceOf(IsolationUnavailableError);
    expect((error as IsolationUnavailableError).reason).toContain('No permissions to create a new namespace');
  });

  it("falls back to plain bash for 'auto', and says bash is not isolated and why", async () => {
    const spawner = await createCommandSpawner({ bwrapPath: '/nonexistent/claw-test/bwrap' });
    expect(spawner.mode).toBe('none');
    expect(spawner.description).toContain('bash commands are NOT isolated');
    expect(spawner.description).toContain('bubblewrap was not found');
    const workspace = await makeTempDir();
    const result = await runCommand(spawner, 'echo plain; pwd', workspace);
    expect(result).toMatchObject({ exitCode: 0, stdout: `plain\n${workspace}\n` });
  });

  it("runs plain bash for 'off' without probing", async () => {
    const spawner = await createCommandSpawner({ isolation: 'off', bwrapPath: '/nonexistent/claw-test/bwrap' });
    expect(spawner.mode).toBe('none');
    expect(spawner.description).toBe(
      'bash isolation: off (turned off in the settings); bash commands are NOT isolated; only the command fences apply',
    );
  });

  it('refuses unusable options with IsolationOptionsError', async () => {
    const cases = [
      { isolation: 'sometimes' as never },
      { maxProcesses: 1 },
      { maxProcesses: 2.5 },
      { env: { 'BAD=NAME': 'x' } },
    ];
    for (const options of cases) {
      const error = await rejection(createCommandSpawner(options));
      expect(error).toBeInstanceOf(IsolationOptionsError);
      expect((error as IsolationOptionsError).code).toBe('isolation_invalid_options');
    }
  });

  describe.skipIf(!available)('with bubblewrap installed', () => {
    it("gives a bubblewrap spawner for 'auto' and 'required'", async () => {
      for (const isolation of ['auto', 'required'] as const) {
        const spawner = await createCommandSpawner({ isolation });
        expect(spawner.mode).toBe('bubblewrap');
        expect(spawner.description).toMatch(
          /^bash isolation: bubblewrap \d[^ ]* \(workspace read-write, .*network off, seccomp filter, /,
        );
      }
      const networked = await createCommandSpawner({ allowNetwork: true, maxProcesses: 32 });
      expect(networked.description).toContain('network allowed');
      expect(networked.description).toContain('at most 32 processes');
    });
  });
});

describe('plainCommandSpawner', () => {
  const saved = process.env.OPENAI_API_KEY;
  afterEach(() => {
    if (saved === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = saved;
  });

  it('runs bash -c in the workspace, mode none, with only the default environment', async () => {
    process.env.OPENAI_API_KEY = 'sk-secret-test';
    const spawner = plainCommandSpawner();
    expect(spawner.mode).toBe('none');
    expect(spawner.description).toContain('NOT isolated');
    const workspace = await makeTempDir();
    const result = await runCommand(spawner, 'echo "$0 $$"; pwd; env | sort | cut -d= -f1 | tr "\\n" " "', workspace);
    expect(result.exitCode).toBe(0);
    const [shell, cwd, names] = result.stdout.split('\n');
    expect(shell).toMatch(/^bash \d+$/);
    expect(cwd).toBe(workspace);
    // bash adds PWD, SHLVL and _ itself.
    expect(names).toBe('LANG LC_ALL PATH PWD SHLVL TERM _ ');
  });

  it('passes the given environment and runs as its own process group', async () => {
    const spawner = plainCommandSpawner({ env: { PATH: '/usr/bin:/bin', GREETING: 'hello' } });
    const workspace = await makeTempDir();
    let pid: number | undefined;
    const result = await runCommand(spawner, 'echo "$GREETING"; cut -d" " -f5 /proc/$$/stat', workspace, {
      onStart: (child) => (pid = child.pid),
    });
    const [greeting, group] = result.stdout.split('\n');
    expect(greeting).toBe('hello');
    expect(Number(group?.trim())).toBe(pid);
  });
});

const bubblewrapWorks = (await probeIsolation()).available;

describe('finding bubblewrap', () => {
  it.skipIf(!bubblewrapWorks)('works when the commands\' PATH does not hold bwrap', async () => {
    // A PATH with bash (linked into the workspace, which the sandbox sees) but without bwrap.
    const workDir = await mkdtemp(path.join(tmpdir(), 'claw-bwrap-path-'));
    await mkdir(path.join(workDir, 'bin'));
    await symlink(execFileSync('bash', ['-c', 'command -v bash']).toString().trim(), path.join(workDir, 'bin/bash'));
    const spawner = await createCommandSpawner({ isolation: 'required', env: { PATH: path.join(workDir, 'bin') } });
    expect(spawner.mode).toBe('bubblewrap');
    const child = spawner.spawn('echo inside', { workDir });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise((resolve) => child.once('close', resolve));
    await rm(workDir, { recursive: true, force: true });
    expect({ code, output }).toEqual({ code: 0, output: 'inside\n' });
  });
});
