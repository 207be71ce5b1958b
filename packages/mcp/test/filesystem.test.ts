// Against the real @modelcontextprotocol/server-filesystem (stdio), rooted in a temporary folder.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { cleanUp, filesystemBin, openServers, run, tempDir } from './helpers.js';

afterEach(cleanUp);

async function filesystem() {
  const root = await tempDir();
  const allowed = path.join(root, 'allowed');
  await mkdir(allowed);
  const { servers, warnings } = openServers({
    fs: { command: process.execPath, args: [filesystemBin, allowed] },
  });
  await servers.ready();
  expect(warnings).toEqual([]);
  return { root, allowed, servers };
}

it('writes and reads files through claw', async () => {
  const { allowed, servers } = await filesystem();
  const file = path.join(allowed, 'notes', 'todo.txt');
  await mkdir(path.dirname(file));
  const written = await run(servers.get('mcp_fs_write_file'), { path: file, content: 'buy milk\n' });
  expect(written.isError).toBe(false);
  expect(await readFile(file, 'utf8')).toBe('buy milk\n');
  await writeFile(path.join(allowed, 'other.txt'), 'from disk');
  const read = await run(servers.get('mcp_fs_read_text_file'), { path: path.join(allowed, 'other.txt') });
  expect(read).toEqual({ content: 'from disk', isError: false });
});

it('a path outside its root, refused by the server, is an error result', async () => {
  const { root, servers } = await filesystem();
  const outside = path.join(root, 'secret.txt');
  await writeFile(outside, 'not for you');
  const read = await run(servers.get('mcp_fs_read_text_file'), { path: outside });
  expect(read.isError).toBe(true);
  expect(read.content).toMatch(/Access denied - path outside allowed directories/);
  expect(read.content).not.toContain('not for you');
});
