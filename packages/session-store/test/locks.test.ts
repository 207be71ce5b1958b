import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import nodePath from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  FileSessionLog,
  FileSessionManager,
  SessionLockedError,
  type SessionLogLock,
} from '../src/index.js';
import { deadPid, rejection, removeTempDirs, sessionFile, tempDir, user } from './fixtures.js';

const children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  await removeTempDirs();
});

/** A live process that is not this one (a real pid to hold a lock). */
async function otherProcess(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
  children.push(child);
  await new Promise((resolve) => child.once('spawn', resolve));
  return child;
}

function lockFile(workDir: string, id = 's1'): string {
  return nodePath.join(workDir, '.claw', 'sessions', `${id}.lock`);
}

/** Writes the lock another claw process would have written. */
async function writeLock(workDir: string, holder: Record<string, unknown>, id = 's1'): Promise<void> {
  await new FileSessionManager({ workDir }).close();
  const { mkdir } = await import('node:fs/promises');
  await mkdir(nodePath.dirname(lockFile(workDir, id)), { recursive: true });
  await writeFile(
    lockFile(workDir, id),
    JSON.stringify({ host: os.hostname(), startedAt: '2030-01-01T00:00:00.000Z', token: 'theirs', ...holder }),
  );
}

async function withSession(workDir: string, text: string): Promise<void> {
  const manager = new FileSessionManager({ workDir });
  const session = await manager.getOrCreate('s1', { workDir });
  await session.append(user(text));
  await manager.close();
}

describe('one owner per session across processes (RT-5)', () => {
  it('refuses a session another live process holds, naming it, and writes nothing', async () => {
    const workDir = await tempDir();
    await withSession(workDir, 'mine');
    const before = await readFile(sessionFile(workDir, 's1'), 'utf8');
    const other = await otherProcess();
    await writeLock(workDir, { pid: other.pid });

    const error = await rejection(new FileSessionManager({ workDir }).getOrCreate('s1', { workDir }));

    expect(error).toBeInstanceOf(SessionLockedError);
    expect(error).toMatchObject({ code: 'session_locked', userError: true, holder: { pid: other.pid, host: os.hostname() } });
    expect((error as Error).message).toContain(`process ${other.pid} on ${os.hostname()}`);
    expect((error as Error).message).toContain(lockFile(workDir));
    expect(await readFile(sessionFile(workDir, 's1'), 'utf8')).toBe(before);
    expect(JSON.parse(await readFile(lockFile(workDir), 'utf8'))).toMatchObject({ pid: other.pid, token: 'theirs' });
  });

  it('takes over the lock of a process that is gone, and the session loads as it was', async () => {
    const workDir = await tempDir();
    await withSession(workDir, 'kept');
    const other = await otherProcess();
    await writeLock(workDir, { pid: other.pid });
    other.kill('SIGKILL');
    await new Promise((resolve) => other.once('exit', resolve));

    const manager = new FileSessionManager({ workDir });
    const session = await manager.getOrCreate('s1', { workDir });

    expect(session.history()).toEqual([user('kept')]);
    expect(JSON.parse(await readFile(lockFile(workDir), 'utf8'))).toMatchObject({ pid: process.pid });
    await manager.close();
    expect(await readdir(nodePath.dirname(lockFile(workDir)))).toEqual(['s1.jsonl']);
  });

  it('takes over when the pid now belongs to another process (a reused pid)', async () => {
    const workDir = await tempDir();
    const other = await otherProcess();
    await writeLock(workDir, { pid: other.pid, processStart: '1' });

    const manager = new FileSessionManager({ workDir });
    await manager.getOrCreate('s1', { workDir });
    expect(JSON.parse(await readFile(lockFile(workDir), 'utf8'))).toMatchObject({ pid: process.pid });
    await manager.close();
  });

  it('takes over a lock it cannot read (not written by claw)', async () => {
    const workDir = await tempDir();
    await writeLock(workDir, {});
    await writeFile(lockFile(workDir), 'garbage');
    const manager = new FileSessionManager({ workDir });
    await manager.getOrCreate('s1', { workDir });
    await manager.close();
  });

  it('counts a lock from another machine as held (its process cannot be checked from here)', async () => {
    const workDir = await tempDir();
    await writeLock(workDir, { pid: deadPid, host: 'another-host.example' });
    const error = await rejection(new FileSessionManager({ workDir }).getOrCreate('s1', { workDir }));
    expect(error).toBeInstanceOf(SessionLockedError);
    expect((error as Error).message).toContain('on another-host.example');
  });

  it('lets exactly one of many racing stores take over a dead holder\'s lock', async () => {
    for (let round = 0; round < 10; round += 1) {
      const workDir = await tempDir();
      await writeLock(workDir, { pid: deadPid });
      const directory = nodePath.dirname(lockFile(workDir));
      const logs = Array.from({ length: 4 }, () => new FileSessionLog({ directory }));
      const results = await Promise.allSettled(logs.map((log) => log.acquire('s1')));
      const won = results.filter((result) => result.status === 'fulfilled');
      expect(won, `round ${round}`).toHaveLength(1);
      for (const result of results) {
        if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(SessionLockedError);
      }
      await (won[0] as PromiseFulfilledResult<SessionLogLock>).value.release();
      expect((await readdir(directory)).filter((name) => name.includes('.lock'))).toEqual([]);
    }
  });

  it('leaves alone a lock that another owner took over in the meantime', async () => {
    const workDir = await tempDir();
    const directory = nodePath.dirname(lockFile(workDir));
    const log = new FileSessionLog({ directory });
    const lock = await log.acquire('s1');
    await writeFile(lockFile(workDir), JSON.stringify({ pid: deadPid, host: os.hostname(), startedAt: 'x', token: 'newer' }));
    await lock.release();
    expect(JSON.parse(await readFile(lockFile(workDir), 'utf8'))).toMatchObject({ token: 'newer' });
  });

  it('refuses a second store of this same process, and frees the session on close', async () => {
    const workDir = await tempDir();
    const first = new FileSessionManager({ workDir });
    await first.getOrCreate('s1', { workDir });
    const error = await rejection(new FileSessionManager({ workDir }).getOrCreate('s1', { workDir }));
    expect(error).toBeInstanceOf(SessionLockedError);
    expect((error as Error).message).toContain(`this process (pid ${process.pid})`);
    await first.close();
    const second = new FileSessionManager({ workDir });
    await second.getOrCreate('s1', { workDir });
    await second.close();
  });
});

describe('one session object per id in a store, released by the last holder (RT-5)', () => {
  it('shares the session between leases and releases it, lock included, with the last one', async () => {
    const workDir = await tempDir();
    const manager = new FileSessionManager({ workDir });
    const [a, b] = await Promise.all([manager.open('s1', { workDir }), manager.open('s1', { workDir })]);
    expect(a.session).toBe(b.session);
    await a.session.append(user('one'));
    await a.release();
    await a.release();
    expect(await readdir(nodePath.dirname(lockFile(workDir)))).toContain('s1.lock');
    await b.session.append(user('two'));
    await b.release();
    expect(await readdir(nodePath.dirname(lockFile(workDir)))).toEqual(['s1.jsonl']);

    const again = await manager.open('s1', { workDir });
    expect(again.session).not.toBe(a.session);
    expect(again.session.history()).toEqual([user('one'), user('two')]);
    await again.release();
  });

  it('opens afresh when asked while the last holder is still letting go', async () => {
    const workDir = await tempDir();
    const manager = new FileSessionManager({ workDir });
    const lease = await manager.open('s1', { workDir });
    await lease.session.append(user('one'));
    const releasing = lease.release();
    const next = await manager.open('s1', { workDir });
    await releasing;
    expect(next.session).not.toBe(lease.session);
    expect(next.session.history()).toEqual([user('one')]);
    await next.session.append(user('two'));
    await next.release();
    expect((await new FileSessionManager({ workDir }).getOrCreate('s1', { workDir })).history()).toEqual([user('one'), user('two')]);
  });

  it('stores nothing through a session object its last holder let go: a late change or retry is refused, the next holder\'s changes stay', async () => {
    const workDir = await tempDir();
    const manager = new FileSessionManager({ workDir });
    const old = await manager.open('s1', { workDir });
    await old.session.append(user('one'));
    await old.release();
    const next = await manager.open('s1', { workDir });
    await next.session.append(user('two'));
    // A task winding down, or the event log's retry, still holding the old object.
    expect(await rejection(old.session.append(user('late')))).toMatchObject({ code: 'session_released' });
    expect(await rejection(old.session.flush())).toMatchObject({ code: 'session_released' });
    await next.release();
    expect((await new FileSessionManager({ workDir }).getOrCreate('s1', { workDir })).history()).toEqual([user('one'), user('two')]);
  });

  it('refuses opens after close', async () => {
    const workDir = await tempDir();
    const manager = new FileSessionManager({ workDir });
    await manager.close();
    expect(await rejection(manager.open('s1', { workDir }))).toMatchObject({ code: 'session_store_closed' });
  });
});
