import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { IsolationUnavailableError } from '../../src/index.js';
import { prepareProcessLimit } from '../../src/isolation/process-limit.js';
import { useTempDirs } from './helpers.js';

const { makeTempDir } = useTempDirs();

/**
 * A stand-in for /proc/self and a cgroup v2 hierarchy in a temp folder. Plain folders behave like
 * cgroupfs for what is tested here, except that rmdir needs them empty.
 */
async function fakeHierarchy(options: { controllers: string; subtreeControl: string }): Promise<{
  procRoot: string;
  cgroup: string;
}> {
  const base = await makeTempDir();
  const procRoot = path.join(base, 'proc');
  const mountPoint = path.join(base, 'cgroup');
  const cgroup = path.join(mountPoint, 'system.slice/ci.service');
  await mkdir(path.join(procRoot, 'self'), { recursive: true });
  await mkdir(cgroup, { recursive: true });
  await writeFile(path.join(procRoot, 'self/cgroup'), '0::/system.slice/ci.service\n');
  await writeFile(
    path.join(procRoot, 'self/mountinfo'),
    `25 22 0:24 / ${mountPoint} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n`,
  );
  await writeFile(path.join(cgroup, 'cgroup.controllers'), options.controllers);
  await writeFile(path.join(cgroup, 'cgroup.subtree_control'), options.subtreeControl);
  return { procRoot, cgroup };
}

/** The same for a v1 pids hierarchy: `tasks` and `cgroup.procs` in every cgroup, no controller files. */
async function fakeV1Hierarchy(): Promise<{ procRoot: string; cgroup: string }> {
  const base = await makeTempDir();
  const procRoot = path.join(base, 'proc');
  const mountPoint = path.join(base, 'pids');
  const cgroup = path.join(mountPoint, 'ci');
  await mkdir(path.join(procRoot, 'self'), { recursive: true });
  await mkdir(cgroup, { recursive: true });
  await writeFile(path.join(procRoot, 'self/cgroup'), '8:pids:/ci\n0::/\n');
  await writeFile(
    path.join(procRoot, 'self/mountinfo'),
    `38 30 0:35 / ${mountPoint} rw,relatime - cgroup cgroup rw,pids\n`,
  );
  return { procRoot, cgroup };
}

describe('prepareProcessLimit', () => {
  it('uses RLIMIT_NPROC inside the sandbox when not root', async () => {
    const limit = await prepareProcessLimit(64, { isRoot: false, procRoot: '/nonexistent' });
    expect(limit).toMatchObject({ maxProcesses: 64, enforcement: 'rlimit', summary: 'at most 64 processes' });
    expect(limit.acquire()).toBeUndefined();
  });

  it('as root, enables pids below its own v2 cgroup and makes one cgroup per command', async () => {
    const { procRoot, cgroup } = await fakeHierarchy({ controllers: 'cpu memory pids\n', subtreeControl: '\n' });
    // Left behind by a claw process that is gone (pids never reach this number): removed.
    await mkdir(path.join(cgroup, 'claw-sandbox-999999999-4'));
    const limit = await prepareProcessLimit(20, { isRoot: true, procRoot });
    expect(limit).toMatchObject({ enforcement: 'cgroup', summary: 'at most 20 processes (pids cgroup)' });
    expect(await readFile(path.join(cgroup, 'cgroup.subtree_control'), 'utf8')).toBe('+pids');
    expect(existsSync(path.join(cgroup, 'claw-sandbox-999999999-4'))).toBe(false);

    const first = limit.acquire();
    const second = limit.acquire();
    expect(first?.procsFile).toMatch(new RegExp(`/claw-sandbox-${process.pid}-\\d+/cgroup\\.procs$`));
    expect(second?.procsFile).not.toBe(first?.procsFile);
    const folder = path.dirname(first?.procsFile ?? '');
    expect(path.dirname(folder)).toBe(cgroup);
    // One more than asked, for bubblewrap's monitor process.
    expect(await readFile(path.join(folder, 'pids.max'), 'utf8')).toBe('21');
  });

  it('as root, reports the limit NOT enforced when the pids controller is not available', async () => {
    const { procRoot } = await fakeHierarchy({ controllers: 'cpu memory\n', subtreeControl: '' });
    const limit = await prepareProcessLimit(20, { isRoot: true, procRoot });
    expect(limit.enforcement).toBe('none');
    expect(limit.summary).toMatch(/^process limit NOT enforced \(running as root, which RLIMIT_NPROC exempts, and the pids controller is not enabled for the cgroup .*ci\.service\)$/);
    expect(limit.acquire()).toBeUndefined();
  });

  it('as root, reports the limit NOT enforced when no cgroup is mounted', async () => {
    const base = await makeTempDir();
    await mkdir(path.join(base, 'self'));
    await writeFile(path.join(base, 'self/cgroup'), '0::/\n');
    await writeFile(path.join(base, 'self/mountinfo'), '22 1 0:21 / /sys rw - sysfs sysfs rw\n');
    const limit = await prepareProcessLimit(20, { isRoot: true, procRoot: base });
    expect(limit.summary).toContain('no pids cgroup controller is mounted');
  });

  it('throws IsolationUnavailableError when a command cgroup cannot be made later', async () => {
    const { procRoot, cgroup } = await fakeHierarchy({ controllers: 'pids\n', subtreeControl: 'pids\n' });
    const limit = await prepareProcessLimit(20, { isRoot: true, procRoot });
    expect(limit.enforcement).toBe('cgroup');
    await rm(cgroup, { recursive: true });
    let caught: unknown;
    try {
      limit.acquire();
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(IsolationUnavailableError);
    expect((caught as IsolationUnavailableError).message).toMatch(
      /^could not create the cgroup that limits the command's processes: ENOENT\. Check that .* is still writable/,
    );
  });

  it('joins a v1 leaf through tasks (a thread moving itself, no global lock) and a v2 leaf through cgroup.procs', async () => {
    const v1 = await fakeV1Hierarchy();
    const v1Leaf = (await prepareProcessLimit(20, { isRoot: true, procRoot: v1.procRoot })).acquire();
    const v1Folder = path.dirname(v1Leaf?.procsFile ?? '');
    expect(path.dirname(v1Folder)).toBe(v1.cgroup);
    expect(v1Leaf?.joinFile).toBe(path.join(v1Folder, 'tasks'));
    expect(v1Leaf?.procsFile).toBe(path.join(v1Folder, 'cgroup.procs'));

    const v2 = await fakeHierarchy({ controllers: 'pids\n', subtreeControl: 'pids\n' });
    const v2Leaf = (await prepareProcessLimit(20, { isRoot: true, procRoot: v2.procRoot })).acquire();
    expect(v2Leaf?.joinFile).toBe(v2Leaf?.procsFile);
    expect(v2Leaf?.joinFile).toMatch(/\/cgroup\.procs$/);
  });

  it('checks the parent once; each command then only makes its leaf, removed on release', async () => {
    const { procRoot, cgroup } = await fakeHierarchy({ controllers: 'pids\n', subtreeControl: '\n' });
    const limit = await prepareProcessLimit(20, { isRoot: true, procRoot });
    expect(await readFile(path.join(cgroup, 'cgroup.subtree_control'), 'utf8')).toBe('+pids');
    // Were the parent looked at again per command, these would stop acquire().
    await rm(path.join(cgroup, 'cgroup.controllers'));
    await writeFile(path.join(cgroup, 'cgroup.subtree_control'), '');
    const leaves = [limit.acquire(), limit.acquire(), limit.acquire()];
    const folders = leaves.map((leaf) => path.dirname(leaf?.procsFile ?? ''));
    expect(new Set(folders).size).toBe(3);
    expect(await readFile(path.join(cgroup, 'cgroup.subtree_control'), 'utf8')).toBe('');
    for (const [index, leaf] of leaves.entries()) {
      // cgroupfs removes pids.max with the folder; a plain folder needs it gone first.
      await rm(path.join(folders[index] ?? '', 'pids.max'));
      leaf?.release();
      leaf?.release();
      expect(existsSync(folders[index] ?? '')).toBe(false);
    }
    // (The trial cgroup of prepareProcessLimit stays in a plain folder, for the same reason.)
    const commandLeaves = (await readdir(cgroup)).filter((name) => /^claw-sandbox-\d+-\d+$/.test(name));
    expect(commandLeaves).toEqual([]);
  });
});
