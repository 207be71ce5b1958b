import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClawError } from '@claw/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEditFileTool } from '../../src/tools/index.js';
import { createTempWorkspace, type TempWorkspace } from './workspace.js';

describe('edit_file', () => {
  let ws: TempWorkspace;
  let file: string;
  beforeEach(async () => {
    ws = await createTempWorkspace();
    file = join(ws.workDir, 'app.ts');
    await writeFile(file, 'const a = 1;\nconst b = 1;\nlog(a);\n');
  });
  afterEach(async () => {
    await ws.remove();
  });

  it('is mutating and takes path, old_string, new_string and replace_all', () => {
    const tool = createEditFileTool();
    expect(tool.risk).toBe('mutating');
    expect(tool.definition.name).toBe('edit_file');
    expect(Object.keys(tool.definition.parameters.properties as object)).toEqual([
      'path',
      'old_string',
      'new_string',
      'replace_all',
    ]);
    expect(tool.definition.parameters.required).toEqual(['path', 'old_string', 'new_string']);
  });

  it('replaces a unique occurrence', async () => {
    const result = await createEditFileTool().execute(
      { path: 'app.ts', old_string: 'const b = 1;', new_string: 'const b = 2;' },
      ws.context(),
    );
    expect(result).toEqual({ content: 'replaced 1 occurrence in app.ts' });
    expect(await readFile(file, 'utf8')).toBe('const a = 1;\nconst b = 2;\nlog(a);\n');
    expect(await readdir(ws.workDir)).toEqual(['app.ts']);
  });

  it('keeps $ patterns in new_string literal', async () => {
    await createEditFileTool().execute(
      { path: 'app.ts', old_string: 'log(a);', new_string: "log('$&$1');" },
      ws.context(),
    );
    expect(await readFile(file, 'utf8')).toBe("const a = 1;\nconst b = 1;\nlog('$&$1');\n");
  });

  it('reports zero matches with a hint and leaves the file alone', async () => {
    const result = await createEditFileTool().execute(
      { path: 'app.ts', old_string: 'const  a = 1;', new_string: 'x' },
      ws.context(),
    );
    expect(result).toEqual({
      content:
        'old_string was not found in app.ts; read the file first and copy the text exactly ' +
        '(whitespace, indentation and line endings must match)',
      isError: true,
    });
    expect(await readFile(file, 'utf8')).toBe('const a = 1;\nconst b = 1;\nlog(a);\n');
  });

  it('reports two matches without replace_all and changes nothing', async () => {
    const result = await createEditFileTool().execute(
      { path: 'app.ts', old_string: ' = 1;', new_string: ' = 3;' },
      ws.context(),
    );
    expect(result).toEqual({
      content:
        'old_string occurs 2 times in app.ts; add surrounding context to make it unique, ' +
        'or set replace_all to true to replace every occurrence',
      isError: true,
    });
    expect(await readFile(file, 'utf8')).toBe('const a = 1;\nconst b = 1;\nlog(a);\n');
  });

  it('replaces every occurrence with replace_all', async () => {
    const result = await createEditFileTool().execute(
      { path: 'app.ts', old_string: ' = 1;', new_string: ' = 3;', replace_all: true },
      ws.context(),
    );
    expect(result).toEqual({ content: 'replaced 2 occurrences in app.ts' });
    expect(await readFile(file, 'utf8')).toBe('const a = 3;\nconst b = 3;\nlog(a);\n');
  });

  it('refuses identical strings, an empty old_string and a missing file', async () => {
    const tool = createEditFileTool();
    expect(
      await tool.execute({ path: 'app.ts', old_string: 'log', new_string: 'log' }, ws.context()),
    ).toEqual({
      content: 'old_string and new_string are identical; there is nothing to change',
      isError: true,
    });
    expect(
      await tool.execute({ path: 'app.ts', old_string: '', new_string: 'x' }, ws.context()),
    ).toEqual({
      content: 'old_string must not be empty; use write_file to create or replace a whole file',
      isError: true,
    });
    expect(tool.parseArguments?.({ path: 'app.ts', old_string: '', new_string: 'x' }).success)
      .toBe(false);
    expect(
      await tool.execute({ path: 'nope.ts', old_string: 'a', new_string: 'b' }, ws.context()),
    ).toEqual({ content: 'file not found: nope.ts; to create a file use write_file', isError: true });
  });

  it('lets a path outside the workspace fail with path_outside_workspace', async () => {
    await writeFile(join(ws.outside, 'x.txt'), 'a');
    const error: unknown = await createEditFileTool()
      .execute({ path: '../outside/x.txt', old_string: 'a', new_string: 'b' }, ws.context())
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ClawError);
    expect((error as ClawError).code).toBe('path_outside_workspace');
    expect(await readFile(join(ws.outside, 'x.txt'), 'utf8')).toBe('a');
  });
});
