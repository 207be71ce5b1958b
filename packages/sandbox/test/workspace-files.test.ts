import { execFileSync } from 'node:child_process';
import { link, mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  isLocalWorkspace,
  parseMountInfo,
  pooledFiles,
  verifyOpenedFile,
  workspaceFiles,
  type WorkspaceFiles,
} from '../src/index.js';
import { knownWorkspaceFiles } from '../src/workspace-files.js';

const localTable = [
  '27 1 254:0 / / rw,relatime - ext4 /dev/vda rw',
  '22 27 0:21 / /proc rw,relatime - proc proc rw',
  '23 27 0:22 / /sys rw,relatime - sysfs sysfs rw',
  '24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw',
  '31 23 0:28 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw',
  '40 27 0:30 / /home/ann/work rw - xfs /dev/vdb rw',
  '43 27 0:33 / /srv/with\\040space rw - tmpfs tmpfs rw',
  '44 27 7:0 / /snap/core/1 ro - squashfs /dev/loop0 ro',
];
const withMount = (line: string) => parseMountInfo([...localTable, line].join('\n'));

describe('which workspaces get direct file calls (PERF-1)', () => {
  const mounts = parseMountInfo(localTable.join('\n'));

  it('reads mount points and kinds from the mount table, escapes undone', () => {
    expect(mounts).toContainEqual({ mountPoint: '/', type: 'ext4' });
    expect(mounts).toContainEqual({ mountPoint: '/home/ann/work', type: 'xfs' });
    expect(mounts).toContainEqual({ mountPoint: '/srv/with space', type: 'tmpfs' });
    expect(parseMountInfo('garbage\n\n1 2 3')).toEqual([]);
  });

  it('a workspace on local storage, on a machine that mounts only local and kernel file systems, is local', () => {
    expect(isLocalWorkspace(mounts, '/home/bob/project')).toBe(true);
    expect(isLocalWorkspace(mounts, '/home/ann/work/app')).toBe(true);
    expect(isLocalWorkspace(mounts, '/srv/with space/app')).toBe(true);
    expect(isLocalWorkspace(mounts, '/')).toBe(true);
  });

  it('the deepest mount at or above the root must be local storage', () => {
    // squashfs and proc cannot stall, but they are no place for a workspace.
    expect(isLocalWorkspace(mounts, '/snap/core/1/app')).toBe(false);
    expect(isLocalWorkspace(mounts, '/proc/1')).toBe(false);
  });

  it('a network, FUSE, autofs or unknown file system mounted anywhere rules direct calls out: a link may lead there', () => {
    expect(isLocalWorkspace(withMount('41 27 0:31 / /mnt/share rw - nfs4 server:/export rw'), '/home/bob/project')).toBe(false);
    expect(isLocalWorkspace(withMount('42 27 0:32 / /srv/remote rw - fuse.sshfs ann@host:/ rw'), '/home/bob/project')).toBe(false);
    expect(isLocalWorkspace(withMount('45 27 0:34 / /net rw - autofs systemd-1 rw'), '/home/bob/project')).toBe(false);
    expect(isLocalWorkspace(withMount('46 27 0:35 / /x rw - somethingnew none rw'), '/home/bob/project')).toBe(false);
    // Inside the workspace too, of course.
    expect(isLocalWorkspace(withMount('47 40 0:36 / /home/ann/work/shared rw - cifs //host/share rw'), '/home/ann/work')).toBe(false);
  });

  it('nothing known about the root: not local', () => {
    expect(isLocalWorkspace([], '/home/bob')).toBe(false);
  });
});

describe('direct and pooled file calls give the same answers', () => {
  let base: string;
  let files: WorkspaceFiles;

  beforeEach(async () => {
    base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'claw-files-')));
    files = await workspaceFiles(base);
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('uses direct calls for a workspace on this machine\'s local disk (Linux)', async () => {
    const mounts = parseMountInfo(await readFile('/proc/self/mountinfo', 'utf8').catch(() => ''));
    expect(files.direct).toBe(process.platform === 'linux' && isLocalWorkspace(mounts, base));
  });

  it('reads the mount table once for the calls that ask at the same time', async () => {
    const other = await realpath(await mkdtemp(path.join(os.tmpdir(), 'claw-files-')));
    try {
      const first = workspaceFiles(other);
      expect(workspaceFiles(other)).toBe(first);
      expect(workspaceFiles(other)).toBe(first);
      expect((await first).direct).toBe(files.direct);
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });

  it('answers at once from what it knows for 5 s, then reads the mount table again (a file system mounted later is seen)', async () => {
    if (process.platform !== 'linux') return;
    const other = await realpath(await mkdtemp(path.join(os.tmpdir(), 'claw-files-')));
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
      expect(knownWorkspaceFiles(other)).toBeUndefined();
      const first = workspaceFiles(other);
      const answer = await first;
      expect(knownWorkspaceFiles(other)).toBe(answer);
      vi.setSystemTime(new Date('2026-01-01T00:00:04.999Z'));
      expect(workspaceFiles(other)).toBe(first);
      expect(knownWorkspaceFiles(other)).toBe(answer);
      vi.setSystemTime(new Date('2026-01-01T00:00:05Z'));
      expect(knownWorkspaceFiles(other)).toBeUndefined();
      const again = workspaceFiles(other);
      expect(again).not.toBe(first);
      expect(await again).toBe(answer);
      expect(knownWorkspaceFiles(other)).toBe(answer);
    } finally {
      vi.useRealTimers();
      await rm(other, { recursive: true, force: true });
    }
  });

  // This machine's workspace calls are direct on a local disk (checked above); the pooled ones
  // must answer the same.
  const kinds: Array<[string, () => WorkspaceFiles]> = [
    ['the workspace\'s calls', () => files],
    ['pooled calls', () => pooledFiles],
  ];
  for (const [kind, pick] of kinds) {
    it(`${kind}: resolves links, reads files and fails with the same error codes`, async () => {
      const calls = pick();
      await mkdir(path.join(base, 'dir'));
      await writeFile(path.join(base, 'dir', 'a.txt'), 'hello');
      await symlink(path.join(base, 'dir'), path.join(base, 'link'));
      expect(await calls.realpath(path.join(base, 'link', 'a.txt'))).toBe(path.join(base, 'dir', 'a.txt'));
      await expect(calls.realpath(path.join(base, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
      expect(await calls.readlink(path.join(base, 'link'))).toBe(path.join(base, 'dir'));
      await expect(calls.openForReading(path.join(base, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });

      const handle = await calls.openForReading(path.join(base, 'link', 'a.txt'));
      try {
        const info = await verifyOpenedFile(handle, { workDir: base, path: 'link/a.txt', realRoot: base, files: calls });
        expect(info.size).toBe(5);
        const buffer = Buffer.alloc(16);
        const { bytesRead } = await handle.read(buffer, 0, 16, 0);
        expect(buffer.subarray(0, bytesRead).toString()).toBe('hello');
      } finally {
        await handle.close();
      }
    });

    it(`${kind}: what was opened is checked, not the path: outside, deleted or linked twice is refused`, async () => {
      const calls = pick();
      const elsewhere = await realpath(await mkdtemp(path.join(os.tmpdir(), 'claw-files-out-')));
      const refusal = async (file: string, shown: string) => {
        const handle = await calls.openForReading(file);
        try {
          return await verifyOpenedFile(handle, { workDir: base, path: shown, realRoot: base, files: calls })
            .then(() => 'accepted', (error: unknown) => (error as { code?: string }).code);
        } finally {
          await handle.close();
        }
      };
      try {
        await writeFile(path.join(elsewhere, 'secret.txt'), 'secret');
        await symlink(path.join(elsewhere, 'secret.txt'), path.join(base, 'swapped'));
        expect(await refusal(path.join(base, 'swapped'), 'swapped')).toBe('path_outside_workspace');

        await writeFile(path.join(base, 'gone.txt'), 'x');
        const handle = await calls.openForReading(path.join(base, 'gone.txt'));
        try {
          await rm(path.join(base, 'gone.txt'));
          await expect(
            verifyOpenedFile(handle, { workDir: base, path: 'gone.txt', realRoot: base, files: calls }),
          ).rejects.toMatchObject({ code: 'path_outside_workspace' });
        } finally {
          await handle.close();
        }

        await writeFile(path.join(base, 'twice.txt'), 'x');
        await link(path.join(base, 'twice.txt'), path.join(base, 'twice-again.txt'));
        expect(await refusal(path.join(base, 'twice.txt'), 'twice.txt')).toBe('unsafe_file');
        expect(await refusal(path.join(base, 'twice-again.txt'), 'twice-again.txt')).toBe('unsafe_file');
      } finally {
        await rm(elsewhere, { recursive: true, force: true });
      }
    });

    it(`${kind}: opening a FIFO does not wait for a writer, and it is refused as not a regular file`, async () => {
      const calls = pick();
      if (process.platform !== 'linux') return;
      const fifo = path.join(base, 'pipe');
      execFileSync('mkfifo', [fifo]);
      const handle = await calls.openForReading(fifo);
      try {
        await expect(
          verifyOpenedFile(handle, { workDir: base, path: 'pipe', realRoot: base, files: calls }),
        ).rejects.toMatchObject({ code: 'unsafe_file' });
      } finally {
        await handle.close();
      }
    });
  }
});
