import { existsSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createCommandSpawner, probeIsolation, type CommandSpawner } from '../../src/index.js';
import {
  findHostProcesses,
  killGroup,
  makeWorkspace,
  runCommand,
  uniqueSleepSeconds,
  unmaskedTempDir,
  useTempDirs,
  waitFor,
} from './helpers.js';

const { available } = await probeIsolation();
const { makeTempDir } = useTempDirs();

/** Runs `name: command` lines one by one and returns each exit status. */
function statusScript(commands: Record<string, string>): string {
  return Object.entries(commands)
    .map(([name, command]) => `( ${command} ) 2>/dev/null; echo "${name}=$?"`)
    .join('\n');
}

function statuses(stdout: string): Record<string, number> {
  const found: Record<string, number> = {};
  for (const line of stdout.split('\n')) {
    const match = /^([\w-]+)=(\d+)$/.exec(line);
    if (match?.[1] !== undefined) found[match[1]] = Number(match[2]);
  }
  return found;
}

// Where isolation is required (CI sets CLAW_REQUIRE_ISOLATION=1), skipping the tests below would
// prove nothing: this fails instead.
it.runIf(process.env.CLAW_REQUIRE_ISOLATION === '1')('bubblewrap works where it is required', () => {
  expect(available).toBe(true);
});

describe.skipIf(!available)('bubblewrap isolation', () => {
  let spawner: CommandSpawner;

  beforeAll(async () => {
    spawner = await createCommandSpawner({ isolation: 'required' });
  });

  describe('writes', () => {
    const hostLeftovers: string[] = [];
    afterEach(async () => {
      await Promise.all(hostLeftovers.splice(0).map((file) => rm(file, { force: true })));
    });

    it('succeed inside the workspace', async () => {
      const { workspace } = await makeWorkspace(makeTempDir);
      const result = await runCommand(spawner, 'echo inside > note.txt && mkdir -p sub && echo deep > sub/file', workspace);
      expect(result).toMatchObject({ exitCode: 0, stderr: '' });
      expect(await readFile(path.join(workspace, 'note.txt'), 'utf8')).toBe('inside\n');
      expect(await readFile(path.join(workspace, 'sub/file'), 'utf8')).toBe('deep\n');
    });

    it('fail outside it: /etc, the host /tmp, a sibling folder', async () => {
      const { workspace, sibling } = await makeWorkspace(makeTempDir);
      const marker = `claw-isolation-${process.pid}-${Date.now()}`;
      const etcFile = path.join('/etc', marker);
      const hostTmpFile = path.join('/tmp', marker);
      hostLeftovers.push(etcFile, hostTmpFile);
      const result = await runCommand(
        spawner,
        statusScript({
          etc: `echo x > ${etcFile}`,
          siblingAbsolute: `echo x > ${path.join(sibling, 'absolute')}`,
          siblingRelative: 'echo x > ../sibling/relative',
          // /tmp is private: the write succeeds inside and never reaches the host.
          tmp: `echo x > ${hostTmpFile} && test "$(cat ${hostTmpFile})" = x`,
        }),
        workspace,
      );
      expect(statuses(result.stdout)).toEqual({ etc: 1, siblingAbsolute: 1, siblingRelative: 1, tmp: 0 });
      expect(existsSync(etcFile)).toBe(false);
      expect(existsSync(hostTmpFile)).toBe(false);
      expect(await readdir(sibling)).toEqual([]);
    });

    it('cannot change git hooks, git config, a hooksPath folder or .claw, nor move them away', async () => {
      const { workspace } = await makeWorkspace(makeTempDir);
      await mkdir(path.join(workspace, '.git/hooks'), { recursive: true });
      await mkdir(path.join(workspace, '.husky'));
      await mkdir(path.join(workspace, '.claw'));
      await writeFile(path.join(workspace, '.git/hooks/pre-commit'), 'ORIGINAL HOOK\n');
      await writeFile(path.join(workspace, '.git/config'), '[core]\n\thooksPath = .husky\n');
      await writeFile(path.join(workspace, '.claw/grants.json'), '{}\n');
      const result = await runCommand(
        spawner,
        statusScript({
          hook: 'echo evil > .git/hooks/pre-commit',
          newHook: 'echo evil > .git/hooks/post-checkout',
          config: 'echo evil >> .git/config',
          grants: 'echo evil > .claw/grants.json',
          husky: 'echo evil > .husky/pre-commit',
          removeHooks: 'rm -rf .git/hooks',
          moveGit: 'mv .git .git-moved',
          moveClaw: 'mv .claw .claw-moved',
          // The rest of .git stays writable, so git itself works.
          gitData: 'echo ref > .git/FETCH_HEAD',
        }),
        workspace,
      );
      expect(statuses(result.stdout)).toEqual({
        hook: 1,
        newHook: 1,
        config: 1,
        grants: 1,
        husky: 1,
        removeHooks: 1,
        moveGit: 1,
        moveClaw: 1,
        gitData: 0,
      });
      expect(await readFile(path.join(workspace, '.git/hooks/pre-commit'), 'utf8')).toBe('ORIGINAL HOOK\n');
      expect(await readdir(path.join(workspace, '.git/hooks'))).toEqual(['pre-commit']);
      expect(await readFile(path.join(workspace, '.git/config'), 'utf8')).toBe('[core]\n\thooksPath = .husky\n');
      expect(await readFile(path.join(workspace, '.claw/grants.json'), 'utf8')).toBe('{}\n');
      expect(await readdir(path.join(workspace, '.husky'))).toEqual([]);
      expect((await readdir(workspace)).sort()).toEqual(['.claw', '.git', '.husky']);
    });

    it('create nothing in the workspace', async () => {
      const { workspace } = await makeWorkspace(makeTempDir);
      const result = await runCommand(spawner, 'true', workspace);
      expect(result.exitCode).toBe(0);
      expect(await readdir(workspace)).toEqual([]);
    });
  });

  describe('secrets', () => {
    const saved = process.env.OPENAI_API_KEY;
    afterEach(() => {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
    });

    it('are readable nowhere inside: env, /proc/self/environ, /proc/1/environ, any /proc/*/environ', async () => {
      process.env.OPENAI_API_KEY = 'sk-secret-test';
      const isolated = await createCommandSpawner({ isolation: 'required' });
      const { workspace } = await makeWorkspace(makeTempDir);
      const result = await runCommand(
        isolated,
        [
          'echo "--- env"; env',
          'echo "--- self"; tr "\\0" "\\n" < /proc/self/environ',
          'echo "--- init"; tr "\\0" "\\n" < /proc/1/environ',
          'echo "--- all"; cat /proc/[0-9]*/environ | tr "\\0" "\\n"',
          'echo "--- grep"; grep -l -a sk-secret-test /proc/[0-9]*/environ',
          'echo "--- end"',
        ].join('\n'),
        workspace,
      );
      expect(result.stdout).not.toContain('sk-secret-test');
      expect(result.stdout).not.toContain('OPENAI_API_KEY');
      // The reads worked: each section has the PATH entry, and grep found nothing.
      const init = result.stdout.split('--- init\n')[1]?.split('--- all')[0] ?? '';
      expect(init).toMatch(/^PATH=/m);
      expect(result.stdout).toMatch(/--- grep\n--- end\n$/);
      expect(result.stdout.split('--- env\n')[1]?.split('--- self')[0]).toMatch(/^LANG=C\.UTF-8$/m);
    });
  });

  describe('claw\'s state and the user\'s claw folders (TRUST-4)', () => {
    /** Writes `files` (path → text) under `root`, making folders as needed. */
    async function plant(root: string, files: Record<string, string>): Promise<void> {
      for (const [file, text] of Object.entries(files)) {
        await mkdir(path.dirname(path.join(root, file)), { recursive: true });
        await writeFile(path.join(root, file), text);
      }
    }

    const state = {
      '.claw/grants.json': 'GRANTS-SECRET\n',
      '.claw/sessions/s.jsonl': 'SESSION-SECRET\n',
      '.claw/audit.jsonl': 'AUDIT-SECRET\n',
      '.claw/server.json': 'TOKEN-SECRET\n',
      '.claw/config.json': '{}\n',
    };
    const userFiles = {
      '.config/claw/trusted.json': 'TRUST-RECORD-SECRET\n',
      '.local/state/claw/servers/s.json': 'SERVER-TOKEN-SECRET\n',
    };

    it('shows the workspace\'s .claw empty and read-only: nothing read, nothing created, nothing removed', async () => {
      const { workspace } = await makeWorkspace(makeTempDir);
      await plant(workspace, state);
      const result = await runCommand(
        spawner,
        statusScript({
          grants: 'cat .claw/grants.json',
          sessions: 'cat .claw/sessions/s.jsonl',
          listed: 'test -z "$(ls -A .claw)"',
          grep: 'grep -r SECRET .',
          create: 'echo x > .claw/new.json',
          mkdir: 'mkdir .claw/sessions',
          remove: 'rm -rf .claw',
          move: 'mv .claw .claw-moved',
        }),
        workspace,
      );
      expect(result.stdout).not.toContain('SECRET');
      expect(statuses(result.stdout)).toEqual({
        grants: 1, sessions: 1, listed: 0, grep: 1, create: 1, mkdir: 1, remove: 1, move: 1,
      });
      expect((await readdir(path.join(workspace, '.claw'))).sort()).toEqual(
        ['audit.jsonl', 'config.json', 'grants.json', 'server.json', 'sessions'],
      );
      expect(await readFile(path.join(workspace, '.claw/grants.json'), 'utf8')).toBe('GRANTS-SECRET\n');
      expect(await readdir(workspace)).toEqual(['.claw']);
    });

    it('hides the user\'s claw folders of a home folder the workspace lies in', async () => {
      const home = await makeTempDir('claw-home-', unmaskedTempDir);
      await plant(home, userFiles);
      const workspace = path.join(home, 'projects/app');
      await mkdir(workspace, { recursive: true });
      const isolated = await createCommandSpawner({ isolation: 'required', homeDir: home });
      const result = await runCommand(
        isolated,
        statusScript({
          trust: `cat ${home}/.config/claw/trusted.json`,
          token: `cat ${home}/.local/state/claw/servers/s.json`,
          relative: 'cat ../../.config/claw/trusted.json',
          write: `echo x > ${home}/.config/claw/trusted.json`,
          inside: 'echo ok > file && cat file',
        }),
        workspace,
      );
      expect(result.stdout).not.toContain('SECRET');
      expect(statuses(result.stdout)).toEqual({ trust: 1, token: 1, relative: 1, write: 1, inside: 0 });
      expect(await readFile(path.join(home, '.config/claw/trusted.json'), 'utf8')).toBe('TRUST-RECORD-SECRET\n');
    });

    it('hides them when the workspace is the home folder itself', async () => {
      const home = await makeTempDir('claw-home-', unmaskedTempDir);
      await plant(home, { ...userFiles, ...state });
      const isolated = await createCommandSpawner({ isolation: 'required', homeDir: home });
      const result = await runCommand(
        isolated,
        statusScript({
          trust: 'cat .config/claw/trusted.json',
          token: 'cat .local/state/claw/servers/s.json',
          grants: 'cat .claw/grants.json',
          grep: 'grep -r SECRET .',
          plant: 'echo "{}" > .config/claw/trusted.json',
          other: 'echo ok > .config/other && cat .config/other',
        }),
        home,
      );
      expect(result.stdout).not.toContain('SECRET');
      expect(statuses(result.stdout)).toEqual({ trust: 1, token: 1, grants: 1, grep: 1, plant: 1, other: 0 });
      expect(await readFile(path.join(home, '.config/claw/trusted.json'), 'utf8')).toBe('TRUST-RECORD-SECRET\n');
    });

    it('hides folders given outside every mask (XDG_* elsewhere), and a .claw above the workspace', async () => {
      const base = await makeTempDir('claw-xdg-', unmaskedTempDir);
      await plant(base, {
        'xdg-config/claw/trusted.json': 'TRUST-RECORD-SECRET\n',
        'xdg-state/claw/servers/s.json': 'SERVER-TOKEN-SECRET\n',
        'parent/.claw/grants.json': 'PARENT-GRANTS-SECRET\n',
        'parent/visible.txt': 'VISIBLE\n',
      });
      const workspace = path.join(base, 'parent/ws');
      await mkdir(workspace);
      const isolated = await createCommandSpawner({
        isolation: 'required',
        hiddenFolders: [path.join(base, 'xdg-config/claw'), path.join(base, 'xdg-state/claw')],
      });
      const result = await runCommand(
        isolated,
        statusScript({
          trust: `cat ${base}/xdg-config/claw/trusted.json`,
          token: `cat ${base}/xdg-state/claw/servers/s.json`,
          parent: 'cat ../.claw/grants.json',
          // The rest stays readable, as everything outside the masks is.
          visible: 'grep -q VISIBLE ../visible.txt',
        }),
        workspace,
      );
      expect(result.stdout).not.toContain('SECRET');
      expect(statuses(result.stdout)).toEqual({ trust: 1, token: 1, parent: 1, visible: 0 });
    });
  });

  describe('masks', () => {
    it('show /root, /home, the parent home folder and /run empty', async () => {
      const { workspace } = await makeWorkspace(makeTempDir);
      const home = os.homedir();
      const result = await runCommand(
        spawner,
        `for dir in /root /home ${JSON.stringify(home)} /run; do echo "$dir:$(ls -A "$dir" | wc -l)"; done`,
        workspace,
      );
      expect(result.stdout).toBe(`/root:0\n/home:0\n${home}:0\n/run:0\n`);
    });

    it('keep /proc/sys, /proc/sysrq-trigger and /sys read-only', async () => {
      const { workspace } = await makeWorkspace(makeTempDir);
      const result = await runCommand(
        spawner,
        statusScript({
          sysctl: 'test -w /proc/sys/kernel/hostname',
          sysrq: 'test -w /proc/sysrq-trigger',
          sysfs: 'test -w /sys/kernel/uevent_helper || test -w /sys/kernel/mm',
          readable: 'test -r /proc/sys/kernel/hostname',
        }),
        workspace,
      );
      expect(statuses(result.stdout)).toEqual({ sysctl: 1, sysrq: 1, sysfs: 1, readable: 0 });
    });
  });

  describe('network', () => {
    let server: Server;
    let port: number;
    let connections = 0;

    beforeAll(async () => {
      server = createServer((socket) => {
        connections += 1;
        socket.destroy();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
      return () => new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('is off by default: a connection to a host port fails', async () => {
      const { workspace } = await makeWorkspace(makeTempDir);
      const before = connections;
      const result = await runCommand(spawner, `echo hi > /dev/tcp/127.0.0.1/${port}`, workspace);
      expect(result.exitCode).toBe(1);
      expect(result.stderr).toContain('Operation not permitted');
      expect(connections).toBe(before);
    });

    it('works with allowNetwork', async () => {
      const networked = await createCommandSpawner({ isolation: 'required', allowNetwork: true });
      const { workspace } = await makeWorkspace(makeTempDir);
      const before = connections;
      const result = await runCommand(networked, `echo hi > /dev/tcp/127.0.0.1/${port}`, workspace);
      expect(result).toMatchObject({ exitCode: 0, stderr: '' });
      expect(await waitFor(() => connections, (count) => count > before)).toBe(before + 1);
    });
  });

  describe('background processes', () => {
    it('die with the command once its process group is killed', async () => {
      const { workspace } = await makeWorkspace(makeTempDir);
      const seconds = uniqueSleepSeconds();
      let seenWhileRunning: number[] = [];
      // The command ends once the test has seen its background sleep (it makes the file `seen`),
      // not after a time in which a loaded machine might not have shown it yet.
      const result = await runCommand(
        spawner,
        `sleep ${seconds} & echo "inner pid $!"; until [ -e seen ]; do sleep 0.02; done`,
        workspace,
        {
          onStart: () => {
            void waitFor(() => findHostProcesses(['sleep', seconds]), (pids) => pids.length > 0)
              .then((pids) => {
                seenWhileRunning = pids;
                writeFileSync(path.join(workspace, 'seen'), '');
              });
          },
        },
      );
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toMatch(/^inner pid \d+\n$/);
      expect(seenWhileRunning).toHaveLength(1);
      const left = await waitFor(() => findHostProcesses(['sleep', seconds]), (pids) => pids.length === 0);
      expect(left).toEqual([]);
    });

    it('die when the group is killed while the command still runs (timeout, abort)', async () => {
      const { workspace } = await makeWorkspace(makeTempDir);
      const seconds = uniqueSleepSeconds();
      // Its own length for the foreground sleep too: other test files run `sleep 30` at the same
      // time, and a machine-wide look for `sleep 30` found theirs on a busy machine.
      const foreground = uniqueSleepSeconds();
      const result = await runCommand(spawner, `sleep ${seconds} & sleep ${foreground}`, workspace, {
        onStart: (child) => {
          void waitFor(() => findHostProcesses(['sleep', seconds]), (pids) => pids.length > 0)
            .then(() => killGroup(child));
        },
      });
      expect(result.signal).toBe('SIGKILL');
      // Killed by the test's kill, not by runCommand's safety net, however long the start took.
      expect(result.timedOut).toBe(false);
      const left = await waitFor(() => findHostProcesses(['sleep', seconds]), (pids) => pids.length === 0);
      expect(left).toEqual([]);
      const foregroundLeft = await waitFor(
        () => findHostProcesses(['sleep', foreground]),
        (pids) => pids.length === 0,
      );
      expect(foregroundLeft).toEqual([]);
    });
  });

  describe('process limit', () => {
    it('stops a fork loop and leaves nothing behind', async () => {
      const limited = await createCommandSpawner({ isolation: 'required', maxProcesses: 20 });
      const { workspace } = await makeWorkspace(makeTempDir);
      const seconds = uniqueSleepSeconds();
      await writeFile(
        path.join(workspace, 'forks.py'),
        [
          'import os, sys',
          'started = failed = 0',
          'for _ in range(50):',
          '    try:',
          '        pid = os.fork()',
          '    except OSError:',
          '        failed += 1',
          '        continue',
          '    if pid == 0:',
          `        os.execvp("sleep", ["sleep", "${seconds}"])`,
          '    started += 1',
          'print(started, failed)',
        ].join('\n'),
      );
      const result = await runCommand(limited, 'python3 forks.py', workspace);
      expect(result.exitCode).toBe(0);
      const [started, failed] = result.stdout.trim().split(' ').map(Number);
      expect(started).toBeGreaterThan(0);
      expect(started).toBeLessThan(20);
      expect(failed).toBe(50 - (started ?? 0));
      const left = await waitFor(() => findHostProcesses(['sleep', seconds]), (pids) => pids.length === 0);
      expect(left).toEqual([]);
    });
  });
});
