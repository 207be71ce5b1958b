import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import * as fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  prepareStateFolder,
  stateFolderIgnore,
  userStateFolder,
  type StateFolderFileSystem,
} from '../src/index.js';

const made: string[] = [];

afterEach(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function workspace(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'claw-state-folder-'));
  made.push(dir);
  return dir;
}

describe('prepareStateFolder', () => {
  it('makes the folder and its .gitignore, which ignores everything but the settings files', async () => {
    const folder = path.join(await workspace(), '.claw');
    await prepareStateFolder(fs, folder);
    expect(await readFile(path.join(folder, '.gitignore'), 'utf8')).toBe(stateFolderIgnore);
    const rules = stateFolderIgnore.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
    expect(rules).toEqual(['*', '!config.json', '!mcp.json', '!a2a.json']);
  });

  it('never changes a .gitignore that is there', async () => {
    const folder = path.join(await workspace(), '.claw');
    await mkdir(folder);
    await writeFile(path.join(folder, '.gitignore'), 'sessions/\n');
    await prepareStateFolder(fs, folder);
    expect(await readFile(path.join(folder, '.gitignore'), 'utf8')).toBe('sessions/\n');
  });

  it('reports a folder it cannot make, and tries again on the next call; an ignore file it cannot write is not reported', async () => {
    const folder = path.join(await workspace(), '.claw');
    let mkdirFails = true;
    const calls: string[] = [];
    const flaky: StateFolderFileSystem = {
      mkdir: async (target, options) => {
        calls.push('mkdir');
        if (mkdirFails) throw Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
        return fs.mkdir(target, options);
      },
      open: async () => {
        calls.push('open');
        throw Object.assign(new Error('EROFS: read-only file system'), { code: 'EROFS' });
      },
    };
    await expect(prepareStateFolder(flaky, folder)).rejects.toThrow('EACCES');
    mkdirFails = false;
    await expect(prepareStateFolder(flaky, folder)).resolves.toBeUndefined();
    // Later writers find the folder there, and do not look at the ignore file again.
    await prepareStateFolder(flaky, folder);
    expect(calls).toEqual(['mkdir', 'mkdir', 'open', 'mkdir']);
  });

  it('makes the folder and its ignore file again when the folder was removed while claw runs', async () => {
    const folder = path.join(await workspace(), '.claw');
    await prepareStateFolder(fs, folder);
    await prepareStateFolder(fs, folder);
    await rm(folder, { recursive: true });
    await prepareStateFolder(fs, folder);
    expect(await readFile(path.join(folder, '.gitignore'), 'utf8')).toBe(stateFolderIgnore);
  });
});

describe('userStateFolder', () => {
  it('is $XDG_STATE_HOME/claw when XDG_STATE_HOME is absolute, whatever HOME is', () => {
    expect(userStateFolder({ XDG_STATE_HOME: '/var/state', HOME: '/home/ada' })).toBe('/var/state/claw');
    expect(userStateFolder({ XDG_STATE_HOME: '/var/state/' })).toBe('/var/state/claw');
    expect(userStateFolder({ XDG_STATE_HOME: '/' })).toBe('/claw');
  });

  it('is $HOME/.local/state/claw when XDG_STATE_HOME is unset, empty or relative', () => {
    expect(userStateFolder({ HOME: '/home/ada' })).toBe('/home/ada/.local/state/claw');
    expect(userStateFolder({ HOME: '/home/ada/', XDG_STATE_HOME: '' })).toBe('/home/ada/.local/state/claw');
    expect(userStateFolder({ HOME: '/home/ada', XDG_STATE_HOME: 'state' })).toBe('/home/ada/.local/state/claw');
  });

  it('is undefined without an absolute XDG_STATE_HOME or HOME (never the current folder)', () => {
    expect(userStateFolder({})).toBeUndefined();
    expect(userStateFolder({ HOME: '', XDG_STATE_HOME: '' })).toBeUndefined();
    expect(userStateFolder({ HOME: 'ada', XDG_STATE_HOME: './state' })).toBeUndefined();
  });

  it('reads only the env it is given', () => {
    expect(userStateFolder({ HOME: '/home/given' })).toBe('/home/given/.local/state/claw');
  });
});
