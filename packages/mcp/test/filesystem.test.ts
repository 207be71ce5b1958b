// Against the real @modelcontextprotocol/server-filesystem (stdio), rooted in a temporary folder.
// It takes the client's roots (MCP-9: the workspace) in place of the folders on its command line,
// unless the server is configured with "roots": false.
import { mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { cleanUp, eventually, filesystemBin, openServers, run, tempDir } from './helpers.js';

afterEach(cleanUp);

/** The server with `allowed` as the workspace (claw's root) and on its command line. */
async function filesystem() {
  const root = await tempDir();
  const allowed = path.join(root, 'allowed');
  await mkdir(allowed);
  const { servers, warnings } = openServers(
    { fs: { command: process.execPath, args: [filesystemBin, allowed] } },
    { workDir: allowed },
  );
  await servers.ready();
  expect(warnings).toEqual([]);
  return { root, allowed, servers };
}

async function allowedDirectories(servers: ReturnType<typeof openServers>['servers']): Promise<string> {
  return (await run(servers.get('mcp_fs_list_allowed_directories'), {})).content;
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

it('takes the workspace (claw\'s root) in place of the folder on its command line', async () => {
  // As the server names them (it resolves links).
  const [workspace, other] = [await realpath(await tempDir()), await realpath(await tempDir())];
  await writeFile(path.join(workspace, 'here.txt'), 'in the workspace');
  await writeFile(path.join(other, 'there.txt'), 'elsewhere');
  const { servers } = openServers(
    { fs: { command: process.execPath, args: [filesystemBin, other] } },
    { workDir: workspace },
  );
  await servers.ready();
  // It asks for the roots once initialized, and answers calls meanwhile.
  await eventually(async () => (await allowedDirectories(servers)).includes(workspace), 'it took the roots');
  expect(await allowedDirectories(servers)).not.toContain(other);
  expect((await run(servers.get('mcp_fs_read_text_file'), { path: path.join(workspace, 'here.txt') })).content)
    .toBe('in the workspace');
  expect((await run(servers.get('mcp_fs_read_text_file'), { path: path.join(other, 'there.txt') })).isError).toBe(true);
});

it('with "roots": false it keeps the folder on its command line', async () => {
  const [workspace, other] = [await realpath(await tempDir()), await realpath(await tempDir())];
  await writeFile(path.join(workspace, 'here.txt'), 'in the workspace');
  await writeFile(path.join(other, 'there.txt'), 'elsewhere');
  const { servers } = openServers(
    { fs: { command: process.execPath, args: [filesystemBin, other], roots: false } },
    { workDir: workspace },
  );
  await servers.ready();
  expect((await run(servers.get('mcp_fs_read_text_file'), { path: path.join(other, 'there.txt') })).content).toBe('elsewhere');
  expect((await run(servers.get('mcp_fs_read_text_file'), { path: path.join(workspace, 'here.txt') })).isError).toBe(true);
  expect(await allowedDirectories(servers)).not.toContain(workspace);
});
