import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidPathError, isInside } from '../../src/index.js';
import {
  checkEnvironment,
  defaultCommandEnvironment,
  launcherEnvironment,
} from '../../src/isolation/environment.js';
import {
  buildBubblewrapArguments,
  encodeEnvironmentArguments,
  inspectWorkspace,
  processLimitScript,
  type SandboxLayout,
} from '../../src/isolation/layout.js';
import { locatePidsCgroup } from '../../src/isolation/process-limit.js';
import { IsolationOptionsError } from '../../src/index.js';
import { unmaskedTempDir, useTempDirs } from './helpers.js';

const { makeTempDir } = useTempDirs();

const layout: SandboxLayout = {
  workDir: '/home/dev/project',
  homeDir: '/srv/dev-home',
  pinned: ['/home/dev/project/.git'],
  readOnly: ['/home/dev/project/.git/hooks', '/home/dev/project/.git/config'],
  hidden: ['/srv/claw-config', '/home/dev/project/.claw'],
  exposed: [],
  allowNetwork: false,
};

describe('buildBubblewrapArguments', () => {
  it('builds the whole invocation in order', () => {
    const args = buildBubblewrapArguments(layout, {
      command: 'npm test',
      maxProcesses: 64,
      seccompFd: 3,
      environmentFd: 4,
    });
    expect(args).toEqual([
      '--ro-bind', '/', '/',
      '--dev', '/dev',
      '--proc', '/proc',
      '--ro-bind-try', '/proc/sys', '/proc/sys',
      '--ro-bind-try', '/proc/sysrq-trigger', '/proc/sysrq-trigger',
      '--tmpfs', '/tmp',
      '--tmpfs', '/run',
      '--tmpfs', '/home',
      '--tmpfs', '/root',
      '--tmpfs', '/srv/dev-home',
      '--tmpfs', '/srv/claw-config',
      '--bind', '/home/dev/project', '/home/dev/project',
      '--bind', '/home/dev/project/.git', '/home/dev/project/.git',
      '--ro-bind-try', '/home/dev/project/.git/hooks', '/home/dev/project/.git/hooks',
      '--ro-bind-try', '/home/dev/project/.git/config', '/home/dev/project/.git/config',
      '--tmpfs', '/home/dev/project/.claw',
      '--remount-ro', '/srv/claw-config',
      '--remount-ro', '/home/dev/project/.claw',
      '--chdir', '/home/dev/project',
      '--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try',
      '--unshare-net',
      '--new-session', '--die-with-parent', '--cap-drop', 'ALL',
      '--clearenv', '--args', '4',
      '--seccomp', '3',
      '--', 'bash', '--norc', '--noprofile', '-c', processLimitScript, 'bash', '64', 'npm test',
    ]);
  });

  it('binds the workspace after every mask, even when it lies under one', () => {
    const args = buildBubblewrapArguments(
      { ...layout, workDir: '/tmp/ws', homeDir: '/tmp', pinned: [], readOnly: [], hidden: [] },
      { command: 'true', maxProcesses: 8, seccompFd: 3, environmentFd: undefined },
    );
    const workspaceBind = args.indexOf('--bind');
    expect(args[workspaceBind + 1]).toBe('/tmp/ws');
    const lastMask = args.lastIndexOf('--tmpfs');
    expect(lastMask).toBeGreaterThan(0);
    expect(lastMask).toBeLessThan(workspaceBind);
    // A home under an already masked folder is not masked twice; no env pipe without env.
    expect(args.filter((arg) => arg === '--tmpfs')).toHaveLength(4);
    expect(args).not.toContain('--args');
  });

  it('shares the network only when allowed, and re-exposes the resolver config', () => {
    const args = buildBubblewrapArguments(
      { ...layout, allowNetwork: true, exposed: ['/run/systemd/resolve/stub-resolv.conf'] },
      { command: 'true', maxProcesses: 8, seccompFd: 3, environmentFd: 4 },
    );
    expect(args).not.toContain('--unshare-net');
    const exposed = args.indexOf('/run/systemd/resolve/stub-resolv.conf');
    expect(args[exposed - 1]).toBe('--ro-bind-try');
    expect(exposed).toBeGreaterThan(args.indexOf('/run'));
  });

  it('runs the command in the first bash when no RLIMIT_NPROC is to be set (root: a cgroup limits it)', () => {
    const args = buildBubblewrapArguments(layout, {
      command: 'npm test',
      maxProcesses: undefined,
      seccompFd: 3,
      environmentFd: 4,
    });
    expect(args.slice(args.indexOf('--'))).toEqual(['--', 'bash', '--norc', '--noprofile', '-c', 'npm test']);
    expect(args).not.toContain(processLimitScript);
    const limited = buildBubblewrapArguments(layout, {
      command: 'npm test',
      maxProcesses: 64,
      seccompFd: 3,
      environmentFd: 4,
    });
    // Everything before the command is the same sandbox.
    expect(args.slice(0, args.indexOf('--'))).toEqual(limited.slice(0, limited.indexOf('--')));
  });

  it('does not mask a home folder that is /', () => {
    const args = buildBubblewrapArguments(
      { ...layout, homeDir: '/', hidden: [] },
      { command: 'true', maxProcesses: 8, seccompFd: 3, environmentFd: 4 },
    );
    expect(args.filter((arg) => arg === '--tmpfs')).toHaveLength(4);
  });
});

describe('inspectWorkspace', () => {
  const options = { homeDir: undefined, allowNetwork: false, resolvConf: undefined };

  it('finds the git hooks, config, a core.hooksPath folder and .claw, and creates nothing', async () => {
    const workspace = await makeTempDir();
    await mkdir(path.join(workspace, '.git/hooks'), { recursive: true });
    await writeFile(path.join(workspace, '.git/config'), '[core]\n\thooksPath = ".husky"\n');
    await mkdir(path.join(workspace, '.husky'));
    await mkdir(path.join(workspace, '.claw'));
    const before = await readdir(workspace);
    const found = inspectWorkspace(workspace, options);
    expect(found.workDir).toBe(workspace);
    expect(found.pinned).toEqual([path.join(workspace, '.git')]);
    expect(found.readOnly).toEqual([
      path.join(workspace, '.git/hooks'),
      path.join(workspace, '.git/config'),
      path.join(workspace, '.husky'),
    ]);
    // .claw is hidden, not merely read-only (TRUST-4).
    expect(found.hidden).toEqual([path.join(workspace, '.claw')]);
    expect(await readdir(workspace)).toEqual(before);
  });

  it('leaves out what does not exist and binds a .git file (worktree) read-only', async () => {
    const workspace = await makeTempDir();
    expect(inspectWorkspace(workspace, options)).toMatchObject({ pinned: [], readOnly: [], hidden: [] });
    await writeFile(path.join(workspace, '.git'), 'gitdir: ../elsewhere\n');
    expect(inspectWorkspace(workspace, options)).toMatchObject({
      pinned: [],
      readOnly: [path.join(workspace, '.git')],
    });
  });

  it('ignores a hooksPath outside the workspace', async () => {
    const workspace = await makeTempDir();
    await mkdir(path.join(workspace, '.git'));
    await writeFile(path.join(workspace, '.git/config'), '[core]\n\thookspath = ../outside\n');
    expect(inspectWorkspace(workspace, options).readOnly).toEqual([path.join(workspace, '.git/config')]);
  });

  it('uses the real path of a linked workspace', async () => {
    const base = await makeTempDir();
    await mkdir(path.join(base, 'real'));
    await symlink(path.join(base, 'real'), path.join(base, 'link'));
    expect(inspectWorkspace(path.join(base, 'link'), options).workDir).toBe(path.join(base, 'real'));
  });

  it('refuses a relative, missing or root workspace with InvalidPathError', async () => {
    const base = await makeTempDir();
    for (const workDir of ['relative/dir', path.join(base, 'missing'), '/']) {
      let caught: unknown;
      try {
        inspectWorkspace(workDir, options);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(InvalidPathError);
      expect((caught as InvalidPathError).code).toBe('invalid_path');
    }
  });

  it('re-exposes the resolver config only with network and when it sits under a mask', () => {
    const stub = '/run/systemd/resolve/stub-resolv.conf';
    const on = { homeDir: undefined, allowNetwork: true, resolvConf: stub };
    expect(inspectWorkspace('/usr', on).exposed).toEqual([stub]);
    expect(inspectWorkspace('/usr', { ...on, allowNetwork: false }).exposed).toEqual([]);
    expect(inspectWorkspace('/usr', { ...on, resolvConf: '/etc/resolv.conf' }).exposed).toEqual([]);
  });
});

describe('inspectWorkspace: folders to hide (TRUST-4)', () => {
  const options = { homeDir: undefined, allowNetwork: false, resolvConf: undefined };

  it('hides claw\'s state above the workspace and the folders given, where they really are', async () => {
    const base = await makeTempDir('claw-isolation-', unmaskedTempDir);
    const workspace = path.join(base, 'project/sub');
    await mkdir(path.join(workspace, '.claw'), { recursive: true });
    await mkdir(path.join(base, 'project/.claw'));
    await mkdir(path.join(base, 'real-config'));
    await symlink(path.join(base, 'real-config'), path.join(base, 'config-link'));
    await writeFile(path.join(base, 'a-file'), '');
    const found = inspectWorkspace(workspace, {
      ...options,
      hiddenFolders: [path.join(base, 'config-link'), path.join(base, 'missing'), path.join(base, 'a-file')],
    });
    expect(found.hidden.sort()).toEqual(
      [path.join(workspace, '.claw'), path.join(base, 'project/.claw'), path.join(base, 'real-config')].sort(),
    );
    // Under a mask (here the home folder) what lies outside the workspace is hidden already:
    // only the workspace's own .claw is left to hide.
    expect(inspectWorkspace(workspace, { ...options, homeDir: base }).hidden).toEqual([path.join(workspace, '.claw')]);
  });

  it('hides a folder outside every mask, and what lies in the workspace even under a hidden folder', async () => {
    const workspace = await makeTempDir();
    await mkdir(path.join(workspace, '.claw'));
    await mkdir(path.join(workspace, 'user-claw/.config'), { recursive: true });
    // The home folder is masked; its claw folders inside the workspace must still be hidden.
    const found = inspectWorkspace(workspace, {
      ...options,
      homeDir: workspace,
      hiddenFolders: [path.join(workspace, 'user-claw'), path.join(workspace, 'user-claw/.config'), '/usr', workspace],
    });
    expect(found.hidden).toEqual(['/usr', path.join(workspace, '.claw'), path.join(workspace, 'user-claw')]);
  });

  it('hides the real folder a linked .claw points to', async () => {
    const workspace = await makeTempDir();
    await mkdir(path.join(workspace, 'kept'));
    await symlink('kept', path.join(workspace, '.claw'));
    expect(inspectWorkspace(workspace, options).hidden).toEqual([path.join(workspace, 'kept')]);
  });

  it('mounts hidden folders outside the workspace with the masks, those inside after the binds', () => {
    const args = buildBubblewrapArguments(
      { ...layout, hidden: ['/srv/outer', '/home/dev/project/.claw', '/home/dev/project/user-claw'] },
      { command: 'true', maxProcesses: undefined, seccompFd: undefined, environmentFd: undefined },
    );
    const at = (flag: string, target: string) =>
      args.findIndex((arg, index) => arg === flag && args[index + 1] === target);
    const workspaceBind = at('--bind', '/home/dev/project');
    expect(at('--tmpfs', '/srv/outer')).toBeLessThan(workspaceBind);
    expect(at('--tmpfs', '/home/dev/project/.claw')).toBeGreaterThan(at('--ro-bind-try', '/home/dev/project/.git/config'));
    for (const folder of ['/srv/outer', '/home/dev/project/.claw', '/home/dev/project/user-claw']) {
      expect(at('--remount-ro', folder)).toBeGreaterThan(at('--tmpfs', folder));
      expect(at('--remount-ro', folder)).toBeLessThan(args.indexOf('--chdir'));
    }
  });
});

describe('isInside', () => {
  it('compares path segments, not string prefixes', () => {
    expect(isInside('/srv/ws', '/srv/ws')).toBe(true);
    expect(isInside('/srv/ws', '/srv/ws/a/b')).toBe(true);
    expect(isInside('/srv/ws', '/srv/ws-evil')).toBe(false);
    expect(isInside('/srv/ws', '/srv/ws/..hidden')).toBe(true);
    expect(isInside('/srv/ws', '/srv')).toBe(false);
  });
});

describe('environment', () => {
  it('defaults to PATH, LANG, LC_ALL and TERM only', () => {
    expect(Object.keys(defaultCommandEnvironment()).sort()).toEqual(['LANG', 'LC_ALL', 'PATH', 'TERM']);
  });

  it('gives bubblewrap itself only PATH', () => {
    expect(launcherEnvironment({ PATH: '/opt/bin:/usr/bin', API_TOKEN: 'x' })).toEqual({ PATH: '/opt/bin:/usr/bin' });
    expect(Object.keys(launcherEnvironment({}))).toEqual(['PATH']);
  });

  it('encodes --setenv arguments NUL-terminated', () => {
    expect(encodeEnvironmentArguments({ A: '1', B: 'two words' })?.toString('utf8'))
      .toBe(['--setenv', 'A', '1', '--setenv', 'B', 'two words', ''].join('\0'));
    expect(encodeEnvironmentArguments({})).toBeUndefined();
  });

  it('refuses names with = or NUL and values with NUL', () => {
    expect(() => checkEnvironment({ 'A=B': 'x' })).toThrow(IsolationOptionsError);
    expect(() => checkEnvironment({ '': 'x' })).toThrow(IsolationOptionsError);
    expect(() => checkEnvironment({ A: 'x\0--bind' })).toThrow(IsolationOptionsError);
    expect(checkEnvironment({ A: 'a=b' })).toEqual({ A: 'a=b' });
  });
});

describe('locatePidsCgroup', () => {
  const mountInfo = [
    '30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
    '38 30 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids',
    '40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
  ].join('\n');

  it('prefers a v1 pids hierarchy and joins the mount point with the cgroup path', () => {
    const cgroups = '8:pids:/user.slice/session-2.scope\n0::/user.slice/session-2.scope\n';
    expect(locatePidsCgroup(cgroups, mountInfo)).toEqual({
      version: 1,
      folder: '/sys/fs/cgroup/pids/user.slice/session-2.scope',
    });
  });

  it('uses the unified hierarchy when no v1 hierarchy has pids', () => {
    const unifiedOnly = '25 22 0:24 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate';
    expect(locatePidsCgroup('0::/system.slice/ci.service\n', unifiedOnly)).toEqual({
      version: 2,
      folder: '/sys/fs/cgroup/system.slice/ci.service',
    });
  });

  it('accounts for a mount whose root is a sub-cgroup, and escaped mount points', () => {
    const nested = '41 30 0:35 /docker/abc /sys/fs/cgroup/my\\040pids rw - cgroup cgroup rw,pids';
    expect(locatePidsCgroup('5:pids:/docker/abc/inner\n', nested)).toEqual({
      version: 1,
      folder: '/sys/fs/cgroup/my pids/inner',
    });
    expect(locatePidsCgroup('5:pids:/other\n', nested)).toBeUndefined();
  });

  it('finds nothing without a cgroup mount', () => {
    expect(locatePidsCgroup('0::/\n', '22 1 0:21 / /sys rw - sysfs sysfs rw')).toBeUndefined();
  });
});
