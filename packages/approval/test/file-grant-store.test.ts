import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import nodePath from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  FileGrantStore,
  GrantStoreError,
  grantKey,
  nodeFileSystem,
  type ApprovalFileSystem,
  type Grant,
} from '../src/index.js';
import { removeTempDirs, tempDir } from './fixtures.js';

afterEach(removeTempDirs);

function grant(digest: string, overrides: Partial<Grant> = {}): Grant {
  const parts = { sessionId: 'session-1', workDir: '/workspace', toolName: 'bash', digest };
  const made = {
    ...parts,
    requestId: `request-${digest}`,
    decision: 'allow_session' as const,
    approvedAt: '2030-01-01T00:00:00.000Z',
    ...overrides,
  };
  return { ...made, key: grantKey(made) };
}

const grantsFile = (workDir: string): string => nodePath.join(workDir, '.claw', 'grants.json');

async function fileContent(workDir: string): Promise<{ version: number; grants: Grant[] }> {
  return JSON.parse(await readFile(grantsFile(workDir), 'utf8')) as { version: number; grants: Grant[] };
}

async function caught(promise: Promise<unknown>): Promise<GrantStoreError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof GrantStoreError) return error;
    throw error;
  }
  throw new Error('expected a GrantStoreError');
}

describe('FileGrantStore (APR-3)', () => {
  it('keeps grants in <workDir>/.claw/grants.json with a version', async () => {
    const workDir = await tempDir();
    const store = new FileGrantStore({ workDir });
    const kept = grant('a', { expiresAt: '2030-01-02T00:00:00.000Z' });
    await store.put(kept);

    expect(store.file).toBe(grantsFile(workDir));
    expect(await fileContent(workDir)).toEqual({ version: 1, grants: [kept] });
  });

  it('is read back by a second store with the audit fields (APR-4)', async () => {
    const workDir = await tempDir();
    const kept = grant('a', { requestId: 'approval-42', approvedAt: '2030-03-04T05:06:07.000Z' });
    await new FileGrantStore({ workDir }).put(kept);

    const reloaded = await new FileGrantStore({ workDir }).get(kept.key, new Date('2030-01-01T00:00:00.000Z'));
    expect(reloaded).toEqual(kept);
    expect(reloaded?.requestId).toBe('approval-42');
    expect(reloaded?.decision).toBe('allow_session');
    expect(reloaded?.approvedAt).toBe('2030-03-04T05:06:07.000Z');
  });

  it('starts empty without a file and creates nothing by reading', async () => {
    const workDir = await tempDir();
    const store = new FileGrantStore({ workDir });
    expect(await store.get(grant('a').key)).toBeUndefined();
    expect(await store.list()).toEqual([]);
    expect(await readdir(workDir)).toEqual([]);
  });

  it('treats an empty file as no grants', async () => {
    const workDir = await tempDir();
    await mkdir(nodePath.join(workDir, '.claw'));
    await writeFile(grantsFile(workDir), '');
    expect(await new FileGrantStore({ workDir }).list()).toEqual([]);
  });

  it('removes an expired grant from the file when it is looked up', async () => {
    const workDir = await tempDir();
    const store = new FileGrantStore({ workDir });
    const expired = grant('old', { expiresAt: '2030-01-01T01:00:00.000Z' });
    const live = grant('new');
    await store.put(expired);
    await store.put(live);
    expect((await fileContent(workDir)).grants).toHaveLength(2);

    expect(await store.get(expired.key, new Date('2030-01-01T02:00:00.000Z'))).toBeUndefined();
    expect((await fileContent(workDir)).grants).toEqual([live]);
    expect(await new FileGrantStore({ workDir }).get(expired.key, new Date('2029-01-01T00:00:00.000Z'))).toBeUndefined();
  });

  it('keeps every one of many concurrent puts', async () => {
    const workDir = await tempDir();
    const store = new FileGrantStore({ workDir });
    const grants = Array.from({ length: 25 }, (_unused, index) => grant(`d${index}`));
    await Promise.all(grants.map((each) => store.put(each)));

    const reloaded = await new FileGrantStore({ workDir }).list();
    expect(reloaded.map((each) => each.digest)).toEqual(grants.map((each) => each.digest));
    expect(await readdir(nodePath.join(workDir, '.claw'))).toEqual(['.gitignore', 'grants.json']);
  });

  it('two stores on one workspace (two processes) keep each other\'s grants and see each other\'s changes', async () => {
    const workDir = await tempDir();
    const first = new FileGrantStore({ workDir });
    const second = new FileGrantStore({ workDir });
    const one = grant('one', { sessionId: 'session-1' });
    const two = grant('two', { sessionId: 'session-2' });
    // Each has read the (empty) file before the other writes.
    expect(await first.list()).toEqual([]);
    expect(await second.list()).toEqual([]);

    await first.put(one);
    await second.put(two);
    expect((await fileContent(workDir)).grants).toEqual([one, two]);
    expect(await first.get(two.key)).toEqual(two);

    // A grant removed by one is gone for the other, and not written back by its next change.
    await second.delete(one.key);
    expect(await first.get(one.key)).toBeUndefined();
    const three = grant('three');
    await first.put(three);
    expect((await fileContent(workDir)).grants).toEqual([two, three]);
  });

  it('writes a temporary file in the same folder, flushes it, then renames it over the file', async () => {
    const workDir = await tempDir();
    const steps: string[] = [];
    const fileSystem: ApprovalFileSystem = {
      ...nodeFileSystem,
      open: async (path, flags, mode) => {
        steps.push(`open ${nodePath.relative(workDir, path).replace(/[0-9a-f-]{36}/, 'ID')} ${flags}`);
        const handle = await nodeFileSystem.open(path, flags, mode);
        return {
          writeFile: async (data, encoding) => {
            steps.push('write');
            await handle.writeFile(data, encoding);
          },
          sync: async () => {
            steps.push('sync');
            await handle.sync();
          },
          close: async () => {
            steps.push('close');
            await handle.close();
          },
        };
      },
      rename: async (from, to) => {
        steps.push(`rename to ${nodePath.relative(workDir, to)}`);
        await nodeFileSystem.rename(from, to);
      },
    };
    await new FileGrantStore({ workDir, fileSystem }).put(grant('a'));

    expect(steps).toEqual([
      // The state folder's ignore file, made once (prepareStateFolder).
      `open ${nodePath.join('.claw', '.gitignore')} wx`,
      'write',
      'close',
      `open ${nodePath.join('.claw', 'grants.json.ID.tmp')} wx`,
      'write',
      'sync',
      'close',
      `rename to ${nodePath.join('.claw', 'grants.json')}`,
    ]);
  });

  it('rolls back a put whose write fails, throws a clear error, and leaves no temporary file', async () => {
    const workDir = await tempDir();
    let failRename = false;
    const diskFull = Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
    const fileSystem: ApprovalFileSystem = {
      ...nodeFileSystem,
      rename: async (from, to) => {
        if (failRename) throw diskFull;
        await nodeFileSystem.rename(from, to);
      },
    };
    const store = new FileGrantStore({ workDir, fileSystem });
    const first = grant('first');
    await store.put(first);
    const before = await readFile(grantsFile(workDir), 'utf8');

    failRename = true;
    const second = grant('second');
    const error = await caught(store.put(second));
    expect(error.code).toBe('grant_store_write_failed');
    expect(error.file).toBe(grantsFile(workDir));
    expect(error.message).toContain(grantsFile(workDir));
    expect(error.message).toContain('ENOSPC');
    expect(error.cause).toBe(diskFull);

    expect(await store.get(second.key)).toBeUndefined();
    expect(await store.list()).toEqual([first]);
    expect(await readFile(grantsFile(workDir), 'utf8')).toBe(before);
    expect(await readdir(nodePath.join(workDir, '.claw'))).toEqual(['.gitignore', 'grants.json']);

    failRename = false;
    await store.put(second);
    expect((await fileContent(workDir)).grants).toEqual([first, second]);
  });

  it('rolls back a delete whose write fails', async () => {
    const workDir = await tempDir();
    let fail = false;
    const fileSystem: ApprovalFileSystem = {
      ...nodeFileSystem,
      open: async (path, flags, mode) => {
        if (fail) throw Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
        return nodeFileSystem.open(path, flags, mode);
      },
    };
    const store = new FileGrantStore({ workDir, fileSystem });
    const kept = grant('a');
    await store.put(kept);
    fail = true;
    expect((await caught(store.delete(kept.key))).code).toBe('grant_store_write_failed');
    expect(await store.get(kept.key)).toEqual(kept);
  });

  it('fails on the real file system when a folder sits where the file goes, and changes nothing', async () => {
    const workDir = await tempDir();
    const store = new FileGrantStore({ workDir });
    expect(await store.list()).toEqual([]);
    await mkdir(grantsFile(workDir), { recursive: true });

    // The file is read before every change: the folder is found there.
    const error = await caught(store.put(grant('a')));
    expect(error.code).toBe('grant_store_read_failed');
    expect(error.message).toContain(grantsFile(workDir));
    expect(error.message).toContain('EISDIR');
    expect(await readdir(nodePath.join(workDir, '.claw'))).toEqual(['grants.json']);
    expect(await readdir(grantsFile(workDir))).toEqual([]);
  });

  it('refuses a file that is not JSON, names it, and never overwrites it', async () => {
    const workDir = await tempDir();
    await mkdir(nodePath.join(workDir, '.claw'));
    await writeFile(grantsFile(workDir), '{"version": 1, "grants": [');
    const store = new FileGrantStore({ workDir });

    const error = await caught(store.get(grant('a').key));
    expect(error.code).toBe('grant_store_corrupt');
    expect(error.file).toBe(grantsFile(workDir));
    expect(error.message).toContain(grantsFile(workDir));
    expect(error.message).toContain('not valid JSON');

    expect((await caught(store.put(grant('a')))).code).toBe('grant_store_corrupt');
    expect(await readFile(grantsFile(workDir), 'utf8')).toBe('{"version": 1, "grants": [');
  });

  it.each([
    ['an unknown version', { version: 2, grants: [] }, 'version is 2'],
    ['no grants list', { version: 1 }, '"grants" is not a list'],
    ['a grant without a field', { version: 1, grants: [{ ...grant('a'), requestId: undefined }] }, 'grant 0 has no text field "requestId"'],
    ['a grant with another decision', { version: 1, grants: [{ ...grant('a'), decision: 'allow_once' }] }, 'decision other than'],
    ['a grant whose key does not match', { version: 1, grants: [{ ...grant('a'), toolName: 'write_file' }] }, 'key that does not match'],
    ['a list instead of an object', [], 'does not hold a JSON object'],
  ])('refuses a file with %s', async (_what, content, detail) => {
    const workDir = await tempDir();
    await mkdir(nodePath.join(workDir, '.claw'));
    await writeFile(grantsFile(workDir), JSON.stringify(content));
    const error = await caught(new FileGrantStore({ workDir }).list());
    expect(error.code).toBe('grant_store_corrupt');
    expect(error.message).toContain(detail);
  });

  it('picks up a repaired file after reporting it corrupt', async () => {
    const workDir = await tempDir();
    await mkdir(nodePath.join(workDir, '.claw'));
    await writeFile(grantsFile(workDir), 'garbage');
    const store = new FileGrantStore({ workDir });
    expect((await caught(store.list())).code).toBe('grant_store_corrupt');

    await writeFile(grantsFile(workDir), JSON.stringify({ version: 1, grants: [grant('a')] }));
    expect(await store.list()).toEqual([grant('a')]);
  });

  it('reports a file it cannot read', async () => {
    const workDir = await tempDir();
    await writeFile(nodePath.join(workDir, '.claw'), 'a file where the folder should be');
    const error = await caught(new FileGrantStore({ workDir }).list());
    expect(error.code).toBe('grant_store_read_failed');
    expect(error.message).toContain(grantsFile(workDir));
  });
});
