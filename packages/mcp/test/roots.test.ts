// MCP-9: claw declares roots (listChanged) and answers roots/list with the workspace; a new
// workspace is announced with notifications/roots/list_changed. Against a real SDK server.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { workspaceRoot } from '../src/index.js';
import { cleanUp, openServers, run, tempDir } from './helpers.js';
import { startSdkHttpServer, type SdkHttpServer } from './sdk-http-server.js';

const started: SdkHttpServer[] = [];

afterEach(async () => {
  await cleanUp();
  await Promise.all(started.splice(0).map((server) => server.close()));
});

function rootOf(folder: string) {
  return { uri: pathToFileURL(folder).href, name: path.basename(folder) };
}

describe('roots', () => {
  it('are declared, and roots/list answers with the workspace as a file:// URI', async () => {
    const server = await startSdkHttpServer();
    started.push(server);
    const workDir = await tempDir();
    const { servers } = openServers({ remote: { url: server.url } }, { workDir });
    await servers.ready();
    expect(server.initializations).toEqual([{ roots: { listChanged: true } }]);
    const listed = await run(servers.get('mcp_remote_roots'), {});
    expect(JSON.parse(listed.content)).toEqual({ roots: [rootOf(workDir)] });
    expect(servers.roots()).toEqual([rootOf(workDir)]);
  });

  it('setWorkspace() tells the server (roots/list_changed), and it lists the new root', async () => {
    const server = await startSdkHttpServer();
    started.push(server);
    const [first, second] = [await tempDir(), await tempDir()];
    const { servers, warnings } = openServers({ remote: { url: server.url } }, { workDir: first });
    await servers.ready();
    const told = server.nextRootsChange();
    await servers.setWorkspace(second);
    await told;
    const listed = await run(servers.get('mcp_remote_roots'), {});
    expect(JSON.parse(listed.content)).toEqual({ roots: [rootOf(second)] });
    expect(warnings).toEqual([]);
  });

  it('a server configured with "roots": false is told none, and not told of a new workspace', async () => {
    const server = await startSdkHttpServer();
    started.push(server);
    const { servers } = openServers({ remote: { url: server.url, roots: false } }, { workDir: await tempDir() });
    await servers.ready();
    expect(server.initializations).toEqual([{}]);
    const listed = await run(servers.get('mcp_remote_roots'), {});
    expect(listed.isError).toBe(true);
    // Method not found: claw answers roots/list only when it declared roots.
    expect(JSON.parse(listed.content)).toMatchObject({ code: -32601 });
    let told = false;
    void server.nextRootsChange().then(() => {
      told = true;
    });
    await servers.setWorkspace(await tempDir());
    // A notification would have gone before this call's request, over the same session.
    await run(servers.get('mcp_remote_add'), { a: 1, b: 1 });
    expect(told).toBe(false);
  });

  it('workspaceRoot names a folder by its last part and resolves relative paths', () => {
    expect(workspaceRoot('/home/ann/project')).toEqual({ uri: 'file:///home/ann/project', name: 'project' });
    expect(workspaceRoot('/')).toEqual({ uri: 'file:///', name: '/' });
    expect(workspaceRoot('a b').uri).toBe(pathToFileURL(path.resolve('a b')).href);
    expect(workspaceRoot('a b').uri).toMatch(/\/a%20b$/);
  });
});
