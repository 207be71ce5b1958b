import { mkdtemp, mkdir, open, readFile, readdir, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeFileAtomically, writeFlushedTemporary } from '../src/index.js';

const folders: string[] = [];
afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

async function folder(): Promise<string> {
  const made = await mkdtemp(path.join(tmpdir(), 'claw-atomic-'));
  folders.push(made);
  return made;
}

/** Node's file system, noting each file it flushes; with `failWrites`, every write fails. */
function recordingFileSystem(failWrites = false) {
  const flushed: string[] = [];
  return {
    flushed,
    mkdir: (at: string, options: { recursive: true }) => mkdir(at, options),
    rename: (from: string, to: string) => rename(from, to),
    unlink: (at: string) => unlink(at),
    open: async (at: string, flags: 'wx', mode: number) => {
      const handle = await open(at, flags, mode);
      return {
        writeFile: async (data: string, encoding: 'utf8') => {
          if (failWrites) throw Object.assign(new Error('disk full'), { code: 'ENOSPC' });
          await handle.writeFile(data, encoding);
        },
        sync: async () => {
          flushed.push(at);
          await handle.sync();
        },
        close: () => handle.close(),
      };
    },
  };
}

describe('writeFlushedTemporary', () => {
  it('writes the text, flushed, to a new temporary file beside the file, which it leaves alone', async () => {
    const dir = await folder();
    const file = path.join(dir, 'state.json');
    await writeFile(file, 'old');
    const fileSystem = recordingFileSystem();

    const temporary = await writeFlushedTemporary(fileSystem, file, 'new');

    expect(path.basename(temporary)).toMatch(/^state\.json\.[0-9a-f-]{36}\.tmp$/);
    expect(path.dirname(temporary)).toBe(dir);
    expect(await readFile(temporary, 'utf8')).toBe('new');
    expect(fileSystem.flushed).toEqual([temporary]);
    expect(await readFile(file, 'utf8')).toBe('old');
  });

  it('removes the temporary file when the write fails, and rethrows', async () => {
    const dir = await folder();
    const file = path.join(dir, 'state.json');

    await expect(writeFlushedTemporary(recordingFileSystem(true), file, 'new')).rejects.toThrow('disk full');
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('writeFileAtomically', () => {
  it('replaces the file with the flushed text and leaves no temporary file', async () => {
    const dir = await folder();
    const file = path.join(dir, 'nested', 'state.json');
    const fileSystem = recordingFileSystem();

    await writeFileAtomically(fileSystem, file, 'first');
    await writeFileAtomically(fileSystem, file, 'second');

    expect(await readFile(file, 'utf8')).toBe('second');
    expect(await readdir(path.dirname(file))).toEqual(['state.json']);
    expect(fileSystem.flushed).toHaveLength(2);
  });

  it('leaves the old file as it was when the write fails', async () => {
    const dir = await folder();
    const file = path.join(dir, 'state.json');
    await writeFile(file, 'old');

    await expect(writeFileAtomically(recordingFileSystem(true), file, 'new')).rejects.toThrow('disk full');
    expect(await readFile(file, 'utf8')).toBe('old');
    expect(await readdir(dir)).toEqual(['state.json']);
  });
});
