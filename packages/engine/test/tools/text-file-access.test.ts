import { existsSync } from 'node:fs';
import { link, mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TextFileAccess, ToolContext } from '@claw/core';
import { MemoryTextFiles, type TextFileCall } from '@claw/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createEditFileTool,
  createReadFileTool,
  createWriteFileTool,
  type ReadFileToolOptions,
} from '../../src/tools/index.js';
import { createTempWorkspace, refusal, type TempWorkspace } from './workspace.js';

// ACP-4: with `ToolContext.files` (an editor's file system), the file tools read and write
// through it, behind the same path checks; without it they use the disk as before.

/**
 * An `onCall` that holds every call of `method` for good (the editor never answers), and
 * `held`, which resolves once such a call has arrived.
 */
function holdCalls(method: TextFileCall['method']): {
  onCall: (call: TextFileCall) => Promise<void> | undefined;
  held: Promise<TextFileCall>;
} {
  let arrived: (call: TextFileCall) => void = () => undefined;
  const held = new Promise<TextFileCall>((resolve) => {
    arrived = resolve;
  });
  return {
    onCall: (call) => {
      if (call.method !== method) return undefined;
      arrived(call);
      return new Promise<void>(() => undefined);
    },
    held,
  };
}

describe('the file tools through an editor\'s file system (ACP-4)', () => {
  let ws: TempWorkspace;
  const read = createReadFileTool();
  const write = createWriteFileTool();
  const edit = createEditFileTool();
  const at = (path: string): string => join(ws.workDir, path);
  const through = (files: TextFileAccess, signal?: AbortSignal): ToolContext => ({
    ...ws.context(signal),
    files,
  });

  beforeEach(async () => {
    ws = await createTempWorkspace();
    await mkdir(join(ws.workDir, '.claw'));
    await writeFile(join(ws.workDir, '.claw', 'grants.json'), '{"version":1,"grants":[]}');
    await writeFile(join(ws.outside, 'secret.txt'), 'SECRET\n');
  });
  afterEach(async () => {
    await ws.remove();
  });

  describe('read_file', () => {
    it('shows the editor\'s unsaved text, not the saved file, asking by the absolute path', async () => {
      await writeFile(at('a.txt'), 'saved\n');
      const files = new MemoryTextFiles({ files: { [at('a.txt')]: 'unsaved\nchanges\n' } });
      const result = await read.execute({ path: 'a.txt' }, through(files));
      expect(result).toEqual({ content: 'unsaved\nchanges' });
      expect(files.callLog()).toEqual([`readTextFile ${at('a.txt')}`]);
    });

    it('reads a buffer the disk does not have yet; a workspace-absolute path works too', async () => {
      const files = new MemoryTextFiles({ files: { [at('new.ts')]: 'draft' } });
      expect(await read.execute({ path: 'new.ts' }, through(files))).toEqual({ content: 'draft' });
      expect(await read.execute({ path: at('new.ts') }, through(files))).toEqual({ content: 'draft' });
      expect(existsSync(at('new.ts'))).toBe(false);
    });

    it('cuts, numbers and notes the editor\'s text exactly as a local file of that text', async () => {
      const long = 'x'.repeat(50);
      const many = Array.from({ length: 30 }, (_, index) => `line ${index + 1}`).join('\n');
      const big = Array.from({ length: 9000 }, (_, index) => `row ${index} ${'y'.repeat(index % 40)}`).join('\n');
      const texts = ['', '\n', 'one', 'one\n', 'a\r\nb\r\n', `${long}\nshort\n${long}`, many, `${many}\n`, big, 'é€\n😀'];
      const cases: Array<[ReadFileToolOptions, { offset?: number; limit?: number }]> = [
        [{}, {}],
        [{}, { offset: 2 }],
        [{}, { offset: 3, limit: 4 }],
        [{}, { offset: 40 }],
        [{ maxLineChars: 10 }, {}],
        [{ maxChars: 60 }, { offset: 2 }],
        [{ defaultLimit: 5 }, {}],
        [{ maxChars: 30, maxLineChars: 100 }, { limit: 3 }],
      ];
      const files = new MemoryTextFiles();
      let compared = 0;
      for (const [index, text] of texts.entries()) {
        const path = `f${index}.txt`;
        await writeFile(at(path), text);
        // The editor holds the same text; an empty local file keeps the comparison honest.
        files.files.set(at(path), text);
        for (const [options, args] of cases) {
          const tool = createReadFileTool(options);
          const local = await tool.execute({ path, ...args }, ws.context());
          const editor = await tool.execute({ path, ...args }, through(files));
          expect(editor, `${path} ${JSON.stringify([options, args])}`).toEqual(local);
          compared += 1;
        }
      }
      expect(files.calls).toHaveLength(compared);
      // The comparison covered the notes, not only whole files.
      const cut = await createReadFileTool({ maxLineChars: 10 }).execute({ path: 'f5.txt' }, through(files));
      expect(cut.content).toContain('[2 lines longer than 10 characters cut;');
      const paged = await read.execute({ path: 'f6.txt', offset: 3, limit: 2 }, through(files));
      expect(paged.content).toBe(
        'line 3\nline 4\n\n[truncated: showing lines 3-4 of 30; call read_file with offset=5 to continue]',
      );
    });

    it('refuses the editor\'s binary text, and answers a missing file as for the disk', async () => {
      const files = new MemoryTextFiles({ files: { [at('blob.bin')]: 'PK\u0000\u0001' } });
      expect(await read.execute({ path: 'blob.bin' }, through(files))).toEqual({
        content: 'blob.bin is a binary file (it contains NUL bytes); read_file only reads text',
        isError: true,
      });
      const local = await read.execute({ path: 'gone.txt' }, ws.context());
      expect(local).toEqual({ content: 'file not found: gone.txt', isError: true });
      expect(await read.execute({ path: 'gone.txt' }, through(files))).toEqual(local);
      expect(files.callLog()).toEqual([`readTextFile ${at('blob.bin')}`, `readTextFile ${at('gone.txt')}`]);
    });

    it('refuses paths outside the workspace before the editor is asked', async () => {
      await symlink(join(ws.outside, 'secret.txt'), at('link.txt'));
      const files = new MemoryTextFiles({
        files: {
          [join(ws.outside, 'secret.txt')]: 'SECRET',
          [at('link.txt')]: 'SECRET',
          [at('ok.txt')]: 'fine',
        },
      });
      for (const path of ['../outside/secret.txt', join(ws.outside, 'secret.txt'), 'link.txt']) {
        const error = await refusal(read.execute({ path }, through(files)));
        expect(error.code).toBe('path_outside_workspace');
      }
      expect(files.calls).toEqual([]);
      expect(await read.execute({ path: 'ok.txt' }, through(files))).toEqual({ content: 'fine' });
      expect(files.callLog()).toEqual([`readTextFile ${at('ok.txt')}`]);
    });

    it('does not ask the editor about a folder or a file hard-linked from outside', async () => {
      await mkdir(at('src'));
      await link(join(ws.outside, 'secret.txt'), at('innocent.txt'));
      await writeFile(at('ok.txt'), 'on disk');
      const files = new MemoryTextFiles({
        files: { [at('src')]: 'x', [at('innocent.txt')]: 'SECRET', [at('ok.txt')]: 'in the editor' },
      });
      expect(await read.execute({ path: 'src' }, through(files))).toEqual({
        content: 'src is a directory, not a file; list it with bash, e.g. ls src',
        isError: true,
      });
      const error = await refusal(read.execute({ path: 'innocent.txt' }, through(files)));
      expect(error.code).toBe('unsafe_file');
      expect(error.message).toContain('2 hard links');
      expect(files.calls).toEqual([]);
      expect(await read.execute({ path: 'ok.txt' }, through(files))).toEqual({ content: 'in the editor' });
    });

    it('turns the editor\'s errors into error results naming the file', async () => {
      const files = new MemoryTextFiles({
        name: 'the test editor',
        files: { [at('a.txt')]: 'x' },
        onCall: (call) => {
          throw new Error(`cannot open ${call.path}: the buffer is being reloaded`);
        },
      });
      const result = await read.execute({ path: 'a.txt' }, through(files));
      expect(result).toEqual({
        content: 'could not read a.txt through the test editor: cannot open a.txt: the buffer is being reloaded',
        isError: true,
      });
    });

    it('counts any error coded file_not_found in the cause chain as a missing file', async () => {
      const asked: string[] = [];
      const files: TextFileAccess = {
        name: 'the editor',
        readTextFile: (path) => {
          asked.push(path);
          return Promise.reject(
            new Error('request failed', { cause: Object.assign(new Error('no such file'), { code: 'file_not_found' }) }),
          );
        },
      };
      expect(await read.execute({ path: 'gone.txt' }, through(files))).toEqual({
        content: 'file not found: gone.txt',
        isError: true,
      });
      expect(asked).toEqual([at('gone.txt')]);
    });

    it('stops at once on abort, even when the editor does not listen', async () => {
      for (const ignoreSignal of [false, true]) {
        const { onCall, held } = holdCalls('readTextFile');
        const files = new MemoryTextFiles({ files: { [at('a.txt')]: 'x' }, onCall, ignoreSignal });
        const controller = new AbortController();
        const reading = read.execute({ path: 'a.txt' }, through(files, controller.signal));
        await Promise.race([held, reading]);
        expect(files.calls).toHaveLength(1);
        expect(files.calls[0]?.signal.aborted).toBe(false);
        const reason = new Error('user canceled');
        controller.abort(reason);
        await expect(reading).rejects.toBe(reason);
        expect(files.calls[0]?.signal.aborted).toBe(true);
      }
    });

    it('reads the disk when the editor offers only writing (and writes go to the editor)', async () => {
      await writeFile(at('a.txt'), 'saved');
      const files = new MemoryTextFiles({ files: { [at('a.txt')]: 'unsaved' }, capabilities: { read: false } });
      expect(await read.execute({ path: 'a.txt' }, through(files))).toEqual({ content: 'saved' });
      expect(files.calls).toEqual([]);
      await write.execute({ path: 'a.txt', content: 'new' }, through(files));
      expect(files.callLog()).toEqual([`writeTextFile ${at('a.txt')}`]);
    });
  });

  describe('write_file', () => {
    it('writes to the editor, not to the disk, with the result text as for the disk', async () => {
      await writeFile(at('old.txt'), 'saved');
      const files = new MemoryTextFiles();
      expect(await write.execute({ path: 'new.txt', content: 'héllo' }, through(files))).toEqual({
        content: 'wrote 6 bytes to new.txt (created)',
      });
      expect(await write.execute({ path: 'old.txt', content: 'x' }, through(files))).toEqual({
        content: 'wrote 1 byte to old.txt (overwritten)',
      });
      expect(files.files.get(at('new.txt'))).toBe('héllo');
      expect(files.files.get(at('old.txt'))).toBe('x');
      expect(existsSync(at('new.txt'))).toBe(false);
      expect(await readFile(at('old.txt'), 'utf8')).toBe('saved');
    });

    it('leaves creating parent folders to the editor', async () => {
      const files = new MemoryTextFiles();
      const result = await write.execute({ path: 'deep/er/file.ts', content: 'x' }, through(files));
      expect(result).toEqual({ content: 'wrote 1 byte to deep/er/file.ts (created)' });
      expect(files.callLog()).toEqual([`writeTextFile ${at('deep/er/file.ts')}`]);
      expect(existsSync(at('deep'))).toBe(false);
    });

    it('refuses protected paths and paths outside the workspace before the editor is asked', async () => {
      await symlink(join(ws.workDir, '.claw'), at('state'));
      const files = new MemoryTextFiles();
      const refused: Array<[string, string]> = [
        ['.claw/grants.json', 'protected_path'],
        ['.CLAW/grants.json', 'protected_path'],
        ['state/grants.json', 'protected_path'],
        ['.git/config', 'protected_path'],
        ['.git/hooks/pre-commit', 'protected_path'],
        ['../outside/secret.txt', 'path_outside_workspace'],
        [join(ws.outside, 'secret.txt'), 'path_outside_workspace'],
      ];
      for (const [path, code] of refused) {
        const error = await refusal(write.execute({ path, content: 'pwned' }, through(files)));
        expect(error.code, path).toBe(code);
      }
      expect(files.calls).toEqual([]);
      expect(await readFile(join(ws.outside, 'secret.txt'), 'utf8')).toBe('SECRET\n');
      expect(await readFile(at('.claw/grants.json'), 'utf8')).toBe('{"version":1,"grants":[]}');
      await write.execute({ path: 'fine.txt', content: 'ok' }, through(files));
      expect(files.callLog()).toEqual([`writeTextFile ${at('fine.txt')}`]);
    });

    it('does not write over a folder or a file hard-linked from outside', async () => {
      await mkdir(at('src'));
      await link(join(ws.outside, 'secret.txt'), at('innocent.txt'));
      const files = new MemoryTextFiles();
      expect(await write.execute({ path: 'src', content: 'x' }, through(files))).toEqual({
        content: 'src is a directory; give the path of a file',
        isError: true,
      });
      const error = await refusal(write.execute({ path: 'innocent.txt', content: 'pwned' }, through(files)));
      expect(error.code).toBe('unsafe_file');
      expect(files.calls).toEqual([]);
      await write.execute({ path: 'fine.txt', content: 'ok' }, through(files));
      expect(files.calls).toHaveLength(1);
    });

    it('turns the editor\'s errors into error results naming the file', async () => {
      const files = new MemoryTextFiles({
        onCall: (call) => {
          throw Object.assign(new Error(`${call.path} is read-only in the editor`), { code: 'EROFS' });
        },
      });
      expect(await write.execute({ path: 'a.txt', content: 'x' }, through(files))).toEqual({
        content: 'could not write a.txt through the editor: a.txt is read-only in the editor',
        isError: true,
      });
      expect(files.files.size).toBe(0);
    });

    it('stops at once on abort, even when the editor does not listen', async () => {
      for (const ignoreSignal of [false, true]) {
        const { onCall, held } = holdCalls('writeTextFile');
        const files = new MemoryTextFiles({ onCall, ignoreSignal });
        const controller = new AbortController();
        const writing = write.execute({ path: 'a.txt', content: 'x' }, through(files, controller.signal));
        await Promise.race([held, writing]);
        expect(files.calls).toHaveLength(1);
        controller.abort(new Error('user canceled'));
        await expect(writing).rejects.toThrow('user canceled');
        expect(files.files.size).toBe(0);
      }
    });

    it('writes to the disk when the editor offers only reading (and reads go to the editor)', async () => {
      const files = new MemoryTextFiles({ files: { [at('a.txt')]: 'unsaved' }, capabilities: { write: false } });
      await write.execute({ path: 'a.txt', content: 'on disk' }, through(files));
      expect(await readFile(at('a.txt'), 'utf8')).toBe('on disk');
      expect(files.calls).toEqual([]);
      expect(await read.execute({ path: 'a.txt' }, through(files))).toEqual({ content: 'unsaved' });
    });
  });

  describe('edit_file', () => {
    it('edits the editor\'s unsaved text and writes the result to the editor, not the disk', async () => {
      await writeFile(at('app.ts'), 'const a = 1;\n');
      const files = new MemoryTextFiles({ files: { [at('app.ts')]: 'const a = 2;\nlog(a);\n' } });
      const result = await edit.execute(
        { path: 'app.ts', old_string: 'log(a);', new_string: "log('$&', a);" },
        through(files),
      );
      expect(result).toEqual({ content: 'replaced 1 occurrence in app.ts' });
      expect(files.files.get(at('app.ts'))).toBe("const a = 2;\nlog('$&', a);\n");
      expect(await readFile(at('app.ts'), 'utf8')).toBe('const a = 1;\n');
      expect(files.callLog()).toEqual([`readTextFile ${at('app.ts')}`, `writeTextFile ${at('app.ts')}`]);
      expect((await readdir(ws.workDir)).sort()).toEqual(['.claw', 'app.ts']);
    });

    it('applies the unique-match and replace_all rules with the same messages as on the disk', async () => {
      const text = 'x = 1;\nx = 1;\ny = 2;\n';
      await writeFile(at('on-disk.ts'), text);
      const files = new MemoryTextFiles({ files: { [at('in-editor.ts')]: text } });
      const attempts = [
        { old_string: 'x = 1;', new_string: 'x = 3;' },
        { old_string: 'z = 9;', new_string: 'z = 0;' },
        { old_string: 'y = 2;', new_string: 'y = 2;' },
        { old_string: 'x = 1;', new_string: 'x = 3;', replace_all: true },
      ];
      for (const attempt of attempts) {
        const local = await edit.execute({ path: 'on-disk.ts', ...attempt }, ws.context());
        const editor = await edit.execute({ path: 'in-editor.ts', ...attempt }, through(files));
        expect(editor.content.replaceAll('in-editor.ts', 'on-disk.ts')).toBe(local.content);
        expect(editor.isError).toBe(local.isError);
      }
      expect(files.files.get(at('in-editor.ts'))).toBe('x = 3;\nx = 3;\ny = 2;\n');
      expect(await readFile(at('on-disk.ts'), 'utf8')).toBe('x = 3;\nx = 3;\ny = 2;\n');
      const local = await edit.execute({ path: 'gone.ts', old_string: 'a', new_string: 'b' }, ws.context());
      const editor = await edit.execute({ path: 'gone.ts', old_string: 'a', new_string: 'b' }, through(files));
      expect(editor).toEqual(local);
      expect(editor.content).toBe('file not found: gone.ts; to create a file use write_file');
      expect(files.callLog().filter((call) => call.endsWith('gone.ts'))).toEqual([`readTextFile ${at('gone.ts')}`]);
    });

    it('refuses protected paths and paths outside the workspace before the editor is asked', async () => {
      const files = new MemoryTextFiles({
        files: {
          [at('.claw/grants.json')]: '{"version":1,"grants":[]}',
          [join(ws.outside, 'secret.txt')]: 'SECRET\n',
          [at('ok.txt')]: 'SECRET\n',
        },
      });
      const change = { old_string: 'SECRET', new_string: 'pwned' };
      expect((await refusal(edit.execute({ path: '.claw/grants.json', old_string: '[]', new_string: '[1]' }, through(files)))).code)
        .toBe('protected_path');
      expect((await refusal(edit.execute({ path: '../outside/secret.txt', ...change }, through(files)))).code)
        .toBe('path_outside_workspace');
      expect(files.calls).toEqual([]);
      expect(await edit.execute({ path: 'ok.txt', ...change }, through(files))).toEqual({
        content: 'replaced 1 occurrence in ok.txt',
      });
      expect(files.files.get(join(ws.outside, 'secret.txt'))).toBe('SECRET\n');
    });

    it('refuses the editor\'s binary text and reports its errors as error results', async () => {
      const binary = new MemoryTextFiles({ files: { [at('blob.bin')]: 'a\u0000b' } });
      expect(await edit.execute({ path: 'blob.bin', old_string: 'a', new_string: 'c' }, through(binary))).toEqual({
        content: 'blob.bin is a binary file (it contains NUL bytes); edit_file only edits text',
        isError: true,
      });
      expect(binary.files.get(at('blob.bin'))).toBe('a\u0000b');

      const failingWrite = new MemoryTextFiles({
        files: { [at('a.txt')]: 'old' },
        onCall: (call) => {
          if (call.method === 'writeTextFile') throw new Error('the user closed the buffer');
        },
      });
      expect(await edit.execute({ path: 'a.txt', old_string: 'old', new_string: 'new' }, through(failingWrite))).toEqual({
        content: 'could not write a.txt through the editor: the user closed the buffer',
        isError: true,
      });
      expect(failingWrite.files.get(at('a.txt'))).toBe('old');

      const failingRead = new MemoryTextFiles({
        files: { [at('a.txt')]: 'old' },
        onCall: () => {
          throw new Error('timed out');
        },
      });
      expect(await edit.execute({ path: 'a.txt', old_string: 'old', new_string: 'new' }, through(failingRead))).toEqual({
        content: 'could not read a.txt through the editor: timed out',
        isError: true,
      });
      expect(failingRead.callLog()).toEqual([`readTextFile ${at('a.txt')}`]);
    });

    it('stops at once on abort while the editor holds the write, changing nothing', async () => {
      const { onCall, held } = holdCalls('writeTextFile');
      const files = new MemoryTextFiles({
        files: { [at('a.txt')]: 'old' },
        ignoreSignal: true,
        onCall,
      });
      const controller = new AbortController();
      const editing = edit.execute({ path: 'a.txt', old_string: 'old', new_string: 'new' }, through(files, controller.signal));
      // The tool finishing first (without the editor) fails the checks below at once.
      await Promise.race([held, editing]);
      expect(files.callLog()).toEqual([`readTextFile ${at('a.txt')}`, `writeTextFile ${at('a.txt')}`]);
      controller.abort(new Error('user canceled'));
      await expect(editing).rejects.toThrow('user canceled');
      expect(files.files.get(at('a.txt'))).toBe('old');
    });

    it('edits the disk when the editor cannot both read and write', async () => {
      for (const capabilities of [{ read: false }, { write: false }]) {
        await writeFile(at('a.txt'), 'saved');
        const files = new MemoryTextFiles({ files: { [at('a.txt')]: 'unsaved' }, capabilities });
        expect(await edit.execute({ path: 'a.txt', old_string: 'saved', new_string: 'edited' }, through(files)))
          .toEqual({ content: 'replaced 1 occurrence in a.txt' });
        expect(await readFile(at('a.txt'), 'utf8')).toBe('edited');
        expect(files.calls).toEqual([]);
        // What it does offer is used by the other tools.
        if (files.readTextFile === undefined) {
          await write.execute({ path: 'a.txt', content: 'x' }, through(files));
        } else {
          await read.execute({ path: 'a.txt' }, through(files));
        }
        expect(files.calls).toHaveLength(1);
      }
    });
  });
});
