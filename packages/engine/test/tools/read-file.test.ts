import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClawError } from '@claw/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { builtinTools, createReadFileTool } from '../../src/tools/index.js';
import { createTempWorkspace, type TempWorkspace } from './workspace.js';

function numberedLines(count: number): string {
  return Array.from({ length: count }, (_, index) => `line ${index + 1}`).join('\n') + '\n';
}

describe('read_file', () => {
  let ws: TempWorkspace;
  beforeEach(async () => {
    ws = await createTempWorkspace();
  });
  afterEach(async () => {
    await ws.remove();
  });

  it('is safe, only reads, and exposes path, offset and limit to the model', () => {
    const tool = createReadFileTool();
    expect(tool.risk).toBe('safe');
    // Its intent need not be flushed before it runs (SES-8); the other built-in tools change files.
    expect(tool.readOnly).toBe(true);
    expect(builtinTools().filter((each) => each.readOnly === true).map((each) => each.definition.name))
      .toEqual(['read_file']);
    expect(tool.definition.name).toBe('read_file');
    expect(Object.keys(tool.definition.parameters.properties as object)).toEqual([
      'path',
      'offset',
      'limit',
    ]);
    expect(tool.definition.parameters.required).toEqual(['path']);
  });

  it('returns the raw text of a small file', async () => {
    await writeFile(join(ws.workDir, 'a.txt'), 'alpha\n  beta\ngamma');
    const result = await createReadFileTool().execute({ path: 'a.txt' }, ws.context());
    expect(result).toEqual({ content: 'alpha\n  beta\ngamma' });
  });

  it('shows a whole small file as it is, up to each limit exactly, and cuts one past it', async () => {
    const read = async (text: string, options = {}, args = {}): Promise<string> => {
      await writeFile(join(ws.workDir, 'f.txt'), text);
      const tool = createReadFileTool(options);
      return (await tool.execute({ path: 'f.txt', ...args }, ws.context())).content;
    };
    expect(await read('\n')).toBe('');
    expect(await read('a\n\n')).toBe('a\n');
    expect(await read('x\r\ny\n')).toBe('x\r\ny');
    expect(await read('é\n€')).toBe('é\n€');
    // Characters: 9 of them fit 9; the 10th is cut with a note.
    expect(await read('abcd\nefgh\n', { maxChars: 9 })).toBe('abcd\nefgh');
    expect(await read('abcd\nefghi\n', { maxChars: 9 })).toBe(
      'abcd\n\n[truncated: showing lines 1-1 of 2; call read_file with offset=2 to continue]',
    );
    // Line length: 4 fits 4; 5 is cut.
    expect(await read('abcd\nab', { maxLineChars: 4 })).toBe('abcd\nab');
    expect(await read('abcde\nab', { maxLineChars: 4 })).toMatch(/^abcd \[line cut: showing 4 of 5/);
    // Lines: 3 fit a limit of 3; 4 do not.
    expect(await read('1\n2\n3\n', {}, { limit: 3 })).toBe('1\n2\n3');
    expect(await read('1\n2\n3\n4', {}, { limit: 3 })).toBe(
      '1\n2\n3\n\n[truncated: showing lines 1-3 of 4; call read_file with offset=4 to continue]',
    );
    expect(await read('1\n2\n3\n', {}, { offset: 2 })).toBe('2\n3');
  });

  it('returns the lines from offset (1-based) up to limit and says how to continue', async () => {
    await writeFile(join(ws.workDir, 'n.txt'), numberedLines(10));
    const tool = createReadFileTool();
    const middle = await tool.execute({ path: 'n.txt', offset: 3, limit: 2 }, ws.context());
    expect(middle.isError).toBeUndefined();
    expect(middle.content).toBe(
      'line 3\nline 4\n\n' +
      '[truncated: showing lines 3-4 of 10; call read_file with offset=5 to continue]',
    );
    const end = await tool.execute({ path: 'n.txt', offset: 9, limit: 5 }, ws.context());
    expect(end.content).toBe('line 9\nline 10');
  });

  it('cuts at the default line limit with the exact continuation note', async () => {
    await writeFile(join(ws.workDir, 'big.txt'), numberedLines(8123));
    const result = await createReadFileTool().execute({ path: 'big.txt' }, ws.context());
    const lines = result.content.split('\n');
    expect(lines[0]).toBe('line 1');
    expect(lines[1999]).toBe('line 2000');
    expect(lines[2000]).toBe('');
    expect(lines[2001]).toBe(
      '[truncated: showing lines 1-2000 of 8123; call read_file with offset=2001 to continue]',
    );
    expect(lines).toHaveLength(2002);
  });

  it('cuts at the character cap and continues from the first line not shown', async () => {
    // Each line is "line N" (6-7 chars) plus a newline; 30 characters hold 4 lines.
    await writeFile(join(ws.workDir, 'n.txt'), numberedLines(10));
    const tool = createReadFileTool({ maxChars: 30 });
    const result = await tool.execute({ path: 'n.txt' }, ws.context());
    expect(result.content).toBe(
      'line 1\nline 2\nline 3\nline 4\n\n' +
      '[truncated: showing lines 1-4 of 10; call read_file with offset=5 to continue]',
    );
  });

  it('cuts very long lines and says how to read the rest', async () => {
    await writeFile(join(ws.workDir, 'long.txt'), `short\n${'x'.repeat(50)}\nend\n`);
    const tool = createReadFileTool({ maxLineChars: 10 });
    const result = await tool.execute({ path: 'long.txt' }, ws.context());
    expect(result.content).toBe(
      'short\nxxxxxxxxxx [line cut: showing 10 of 50 characters]\nend\n\n' +
      "[1 line longer than 10 characters cut; read the rest with bash, e.g. sed -n '2p' long.txt | cut -c 11-]",
    );
  });

  it('refuses an offset past the end of the file', async () => {
    await writeFile(join(ws.workDir, 'n.txt'), numberedLines(3));
    const result = await createReadFileTool().execute({ path: 'n.txt', offset: 7 }, ws.context());
    expect(result).toEqual({
      content: 'offset 7 is past the end of n.txt, which has 3 lines',
      isError: true,
    });
  });

  it('says so for an empty file', async () => {
    await writeFile(join(ws.workDir, 'empty.txt'), '');
    const result = await createReadFileTool().execute({ path: 'empty.txt' }, ws.context());
    expect(result).toEqual({ content: '[empty file]' });
  });

  it('refuses a directory', async () => {
    await mkdir(join(ws.workDir, 'src'));
    const result = await createReadFileTool().execute({ path: 'src' }, ws.context());
    expect(result).toEqual({
      content: 'src is a directory, not a file; list it with bash, e.g. ls src',
      isError: true,
    });
  });

  it('refuses a binary file (a NUL byte in the first 8 KB)', async () => {
    const bytes = Buffer.concat([Buffer.from('PK'), Buffer.from([0, 1, 2]), Buffer.from('rest')]);
    await writeFile(join(ws.workDir, 'blob.bin'), bytes);
    const result = await createReadFileTool().execute({ path: 'blob.bin' }, ws.context());
    expect(result).toEqual({
      content: 'blob.bin is a binary file (it contains NUL bytes); read_file only reads text',
      isError: true,
    });
  });

  it('reports a missing file with its workspace-relative path only', async () => {
    const result = await createReadFileTool().execute({ path: './docs/none.md' }, ws.context());
    expect(result).toEqual({ content: 'file not found: docs/none.md', isError: true });
    expect(result.content).not.toContain(ws.root);
  });

  it('lets a path outside the workspace fail with path_outside_workspace', async () => {
    await writeFile(join(ws.outside, 'secret.txt'), 'secret');
    const attempt = createReadFileTool().execute({ path: '../outside/secret.txt' }, ws.context());
    const error: unknown = await attempt.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ClawError);
    expect((error as ClawError).code).toBe('path_outside_workspace');
  });

  it('rejects with the reason of an already aborted signal', async () => {
    await writeFile(join(ws.workDir, 'a.txt'), 'alpha');
    const controller = new AbortController();
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(
      createReadFileTool().execute({ path: 'a.txt' }, ws.context(controller.signal)),
    ).rejects.toBe(reason);
  });
});
