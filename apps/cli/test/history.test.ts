import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ReplHistory, historyFile, historySize } from '../src/history.js';
import { cleanUp, tempDir } from './helpers.js';

afterEach(cleanUp);

const lines = async (workDir: string) =>
  (await readFile(historyFile(workDir), 'utf8')).trimEnd().split('\n').map((line) => JSON.parse(line) as string);

describe('the REPL history of a workspace', () => {
  it('keeps what was typed, one JSON string a line, private to the user; not a repeat, a blank or several lines', async () => {
    const workDir = await tempDir();
    const history = await ReplHistory.open(workDir);
    expect(history.entries).toEqual([]);
    for (const entry of ['fix "the" bug', 'fix "the" bug', '   ', 'two\nlines', '/help']) history.add(entry);
    await history.flushed();
    expect(await lines(workDir)).toEqual(['fix "the" bug', '/help']);
    expect((await stat(historyFile(workDir))).mode & 0o777).toBe(0o600);
    expect((await ReplHistory.open(workDir)).entries).toEqual(['fix "the" bug', '/help']);
  });

  it('reads the last entries only, skips lines it cannot read, and writes a long file again shorter', async () => {
    const workDir = await tempDir();
    await mkdir(path.join(workDir, '.claw'));
    const many = Array.from({ length: 2 * historySize + 10 }, (_, index) => JSON.stringify(`task ${index}`));
    await writeFile(historyFile(workDir), `${many.join('\n')}\n{"torn\n42\n`);
    const history = await ReplHistory.open(workDir);
    expect(history.entries).toHaveLength(historySize);
    expect(history.entries.at(-1)).toBe(`task ${2 * historySize + 9}`);
    expect(await lines(workDir)).toEqual(history.entries);
  });

  it('is empty, and the REPL goes on, when it cannot be written', async () => {
    const workDir = await tempDir();
    // A folder where the file goes: it can be neither read nor appended to.
    await mkdir(historyFile(workDir), { recursive: true });
    const history = await ReplHistory.open(workDir);
    expect(history.entries).toEqual([]);
    history.add('a task');
    await expect(history.flushed()).resolves.toBeUndefined();
  });
});
