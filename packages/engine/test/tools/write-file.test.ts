import { chmod, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClawError } from '@claw/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWriteFileTool } from '../../src/tools/index.js';
import { createTempWorkspace, type TempWorkspace } from './workspace.js';

describe('write_file', () => {
  let ws: TempWorkspace;
  beforeEach(async () => {
    ws = await createTempWorkspace();
  });
  afterEach(async () => {
    await ws.remove();
  });

  it('is mutating and takes path and content', () => {
    const tool = createWriteFileTool();
    expect(tool.risk).toBe('mutating');
    expect(tool.definition.name).toBe('write_file');
    expect(tool.definition.parameters.required).toEqual(['path', 'content']);
  });

  it('creates nested parent folders and reports the bytes written', async () => {
    const result = await createWriteFileTool().execute(
      { path: 'a/b/c.txt', content: 'héllo\n' },
      ws.context(),
    );
    expect(result).toEqual({ content: 'wrote 7 bytes to a/b/c.txt (created)' });
    expect(await readFile(join(ws.workDir, 'a/b/c.txt'), 'utf8')).toBe('héllo\n');
  });

  it('overwrites an existing file, keeps its mode and leaves no temporary file', async () => {
    const file = join(ws.workDir, 'run.sh');
    await writeFile(file, 'old content that is longer');
    await chmod(file, 0o755);
    const result = await createWriteFileTool().execute(
      { path: 'run.sh', content: 'new' },
      ws.context(),
    );
    expect(result).toEqual({ content: 'wrote 3 bytes to run.sh (overwritten)' });
    expect(await readFile(file, 'utf8')).toBe('new');
    expect((await stat(file)).mode & 0o777).toBe(0o755);
    expect(await readdir(ws.workDir)).toEqual(['run.sh']);
  });

  it('refuses to replace a directory', async () => {
    await createWriteFileTool().execute({ path: 'd/x.txt', content: '' }, ws.context());
    const result = await createWriteFileTool().execute({ path: 'd', content: 'x' }, ws.context());
    expect(result).toEqual({ content: 'd is a directory; give the path of a file', isError: true });
  });

  it('refuses a path outside the workspace and writes nothing there', async () => {
    const attempt = createWriteFileTool().execute(
      { path: '../outside/evil/x.txt', content: 'pwned' },
      ws.context(),
    );
    const error: unknown = await attempt.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ClawError);
    expect((error as ClawError).code).toBe('path_outside_workspace');
    expect(await readdir(ws.outside)).toEqual([]);
    expect(await readdir(ws.workDir)).toEqual([]);
  });

  it('rejects with the reason of an aborted signal and writes nothing', async () => {
    const controller = new AbortController();
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(
      createWriteFileTool().execute({ path: 'x.txt', content: 'x' }, ws.context(controller.signal)),
    ).rejects.toBe(reason);
    expect(await readdir(ws.workDir)).toEqual([]);
  });
});
