import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ToolContext } from '@claw/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createBashTool,
  createEditFileTool,
  createReadFileTool,
  createWriteFileTool,
} from '../../src/tools/index.js';
import { createTempWorkspace, refusal, type TempWorkspace } from './workspace.js';

// Models often send the workspace's own absolute paths (SBX-1): those work like relative ones,
// and every other absolute path is refused as outside the workspace.

describe('the file tools with absolute paths (SBX-1)', () => {
  let ws: TempWorkspace;
  const read = createReadFileTool();
  const write = createWriteFileTool();
  const edit = createEditFileTool();

  beforeEach(async () => {
    ws = await createTempWorkspace();
    await mkdir(join(ws.workDir, 'src'));
    await writeFile(join(ws.workDir, 'src', 'a.go'), 'package a\n\nconst x = 1\n');
    await writeFile(join(ws.outside, 'secret.txt'), 'SECRET\n');
  });
  afterEach(async () => {
    await ws.remove();
  });

  describe('inside the workspace', () => {
    it('read_file reads a file by its absolute path', async () => {
      const result = await read.execute({ path: join(ws.workDir, 'src', 'a.go') }, ws.context());
      expect(result).toEqual({ content: 'package a\n\nconst x = 1' });
    });

    it('write_file creates and overwrites a file by its absolute path, showing it relative', async () => {
      const target = join(ws.workDir, 'new', 'b.txt');
      expect(await write.execute({ path: target, content: 'hi' }, ws.context())).toEqual({
        content: 'wrote 2 bytes to new/b.txt (created)',
      });
      expect(await write.execute({ path: target, content: 'bye' }, ws.context())).toEqual({
        content: 'wrote 3 bytes to new/b.txt (overwritten)',
      });
      expect(await readFile(target, 'utf8')).toBe('bye');
      expect(await readdir(join(ws.workDir, 'new'))).toEqual(['b.txt']);
    });

    it('edit_file edits a file by its absolute path', async () => {
      const result = await edit.execute(
        { path: join(ws.workDir, 'src', 'a.go'), old_string: 'x = 1', new_string: 'x = 2' },
        ws.context(),
      );
      expect(result).toEqual({ content: 'replaced 1 occurrence in src/a.go' });
      expect(await readFile(join(ws.workDir, 'src', 'a.go'), 'utf8')).toBe('package a\n\nconst x = 2\n');
    });

    it('write_file still refuses a protected path given absolutely', async () => {
      const error = await refusal(
        write.execute({ path: join(ws.workDir, '.claw', 'grants.json'), content: '{}' }, ws.context()),
      );
      expect(error.code).toBe('protected_path');
      expect(existsSync(join(ws.workDir, '.claw'))).toBe(false);
    });
  });

  it('leaves bash alone: a command naming an absolute path is still refused (SBX-3)', async () => {
    const file = join(ws.workDir, 'src', 'a.go');
    const result = await createBashTool().execute({ command: `cat ${file} > copy.go` }, ws.context());
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^refused: .*absolute path/);
    expect(existsSync(join(ws.workDir, 'copy.go'))).toBe(false);
  });

  describe('when the workspace root is reached through a symlink', () => {
    let linked: ToolContext;
    let realRoot: string;

    beforeEach(async () => {
      const linkedRoot = join(ws.root, 'ws-link');
      await symlink(ws.workDir, linkedRoot);
      linked = { signal: new AbortController().signal, workDir: linkedRoot };
      realRoot = await realpath(ws.workDir);
    });

    it('reads, writes and edits through either spelling of the root', async () => {
      for (const root of [linked.workDir, realRoot]) {
        const file = join(root, 'src', 'a.go');
        expect(await read.execute({ path: file }, linked)).toMatchObject({ content: expect.stringContaining('package a') as unknown });
        expect(await write.execute({ path: join(root, 'c.txt'), content: 'one' }, linked)).toEqual({
          content: expect.stringMatching(/^wrote 3 bytes to c\.txt \((created|overwritten)\)$/) as unknown,
        });
        expect(await edit.execute({ path: join(root, 'c.txt'), old_string: 'one', new_string: 'two' }, linked)).toEqual({
          content: 'replaced 1 occurrence in c.txt',
        });
        expect(await readFile(join(ws.workDir, 'c.txt'), 'utf8')).toBe('two');
        await writeFile(join(ws.workDir, 'c.txt'), 'one');
      }
    });
  });

  describe('outside the workspace', () => {
    const attempts = (path: () => string) => [
      ['read_file', () => read.execute({ path: path() }, ws.context())],
      ['write_file', () => write.execute({ path: path(), content: 'pwned' }, ws.context())],
      ['edit_file', () => edit.execute({ path: path(), old_string: 'SECRET', new_string: 'pwned' }, ws.context())],
    ] as const;

    const untouched = async () => {
      expect(await readFile(join(ws.outside, 'secret.txt'), 'utf8')).toBe('SECRET\n');
      expect(await readdir(ws.outside)).toEqual(['secret.txt']);
      expect(await readdir(`${ws.workDir}-evil`)).toEqual(['secret.txt']);
    };

    beforeEach(async () => {
      // A sibling whose name starts with the workspace's: a string-prefix test would admit it.
      await mkdir(`${ws.workDir}-evil`);
      await writeFile(join(`${ws.workDir}-evil`, 'secret.txt'), 'SECRET\n');
      await symlink(ws.outside, join(ws.workDir, 'out'));
      await symlink(join(ws.outside, 'secret.txt'), join(ws.workDir, 'secret-link.txt'));
    });

    for (const [what, path] of [
      ['a file next to the workspace', () => join(ws.outside, 'secret.txt')],
      ['a sibling folder whose name starts with the workspace name', () => `${ws.workDir}-evil/secret.txt`],
      ['a path that climbs out with ..', () => `${ws.workDir}/../outside/secret.txt`],
      ['a system file', () => '/etc/hostname'],
      ['a folder symlink inside the workspace that leads outside', () => join(ws.workDir, 'out', 'secret.txt')],
      ['a file symlink inside the workspace that leads outside', () => join(ws.workDir, 'secret-link.txt')],
    ] as const) {
      for (const [tool, attempt] of attempts(path)) {
        it(`${tool} refuses ${what}`, async () => {
          const error = await refusal(attempt());
          expect(error.code).toBe('path_outside_workspace');
          expect(error.message).toContain('outside the workspace');
          expect(error.message).not.toContain('SECRET');
          await untouched();
        });
      }
    }

    it('write_file creates nothing through a folder symlink that leads outside', async () => {
      const error = await refusal(
        write.execute({ path: join(ws.workDir, 'out', 'new', 'x.txt'), content: 'pwned' }, ws.context()),
      );
      expect(error.code).toBe('path_outside_workspace');
      await untouched();
    });
  });
});
