import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  isLocalWorkspace,
  parseMountInfo,
  verifyOpenedFile,
  workspaceFiles,
  type WorkspaceFiles,
} from '../src/index.js';

const mountInfo = [
  '27 1 254:0 / / rw,relatime - ext4 /dev/vda rw',
  '22 27 0:21 / /proc rw,relatime - proc proc rw',
  '40 27 0:30 / /home/ann/work rw - xfs /dev/vdb rw',
  '41 40 0:31 / /home/ann/work/shared rw shared:5 - nfs4 server:/export rw',
  '42 27 0:32 / /srv/remote rw - fuse.sshfs ann@host:/ rw',
  '43 27 0:33 / /srv/with\\040space rw - tmpfs tmpfs rw',
].join('\n');

describe('which workspaces get direct file calls (PERF-1)', () => {
  const mounts = parseMountInfo(mountInfo);

  it('reads mount points and kinds from the mount table, escapes undone', () => {
    expect(mounts).toContainEqual({ mountPoint: '/', type: 'ext4' });
    expect(mounts).toContainEqual({ mountPoint: '/home/ann/work/shared', type: 'nfs4' });
    expect(mounts).toContainEqual({ mountPoint: '/srv/with space', type: 'tmpfs' });
    expect(parseMountInfo('garbage\n\n1 2 3')).toEqual([]);
  });

  it('a workspace on a local file system, with nothing else mounted inside, is local', () => {
    expect(isLocalWorkspace(mounts, '/home/bob/project')).toBe(true);
    expect(isLocalWorkspace(mounts, '/srv/with space/app')).toBe(true);
  });

  it('the deepest mount at or above the root decides its kind', () => {
    expect(isLocalWorkspace(mounts, '/home/ann/work/shared/app')).toBe(false);
    expect(isLocalWorkspace(mounts, '/srv/remote/app')).toBe(false);
    // /srv/remote-other is not inside /srv/remote.
    expect(isLocalWorkspace(mounts, '/srv/remote-other')).toBe(true);
  });

  it('a network or FUSE file system mounted anywhere inside the workspace makes it not local', () => {
    expect(isLocalWorkspace(mounts, '/home/ann/work')).toBe(false);
    expect(isLocalWorkspace(mounts, '/home/ann')).toBe(false);
    // "/" holds /proc and the others.
    expect(isLocalWorkspace(mounts, '/')).toBe(false);
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

  it('resolves links, reads files and fails with the same error codes', async () => {
    await mkdir(path.join(base, 'dir'));
    await writeFile(path.join(base, 'dir', 'a.txt'), 'hello');
    await symlink(path.join(base, 'dir'), path.join(base, 'link'));
    expect(await files.realpath(path.join(base, 'link', 'a.txt'))).toBe(path.join(base, 'dir', 'a.txt'));
    await expect(files.realpath(path.join(base, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await files.readlink(path.join(base, 'link'))).toBe(path.join(base, 'dir'));
    await expect(files.openForReading(path.join(base, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });

    const handle = await files.openForReading(path.join(base, 'link', 'a.txt'));
    try {
      const info = await verifyOpenedFile(handle, { workDir: base, path: 'link/a.txt', realRoot: base, files });
      expect(info.size).toBe(5);
      const buffer = Buffer.alloc(16);
      const { bytesRead } = await handle.read(buffer, 0, 16, 0);
      expect(buffer.subarray(0, bytesRead).toString()).toBe('hello');
    } finally {
      await handle.close();
    }
  });

  it('opening a FIFO does not wait for a writer, and it is refused as not a regular file', async () => {
    if (process.platform !== 'linux') return;
    const fifo = path.join(base, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const handle = await files.openForReading(fifo);
    try {
      await expect(
        verifyOpenedFile(handle, { workDir: base, path: 'pipe', realRoot: base, files }),
      ).rejects.toMatchObject({ code: 'unsafe_file' });
    } finally {
      await handle.close();
    }
  });
});
