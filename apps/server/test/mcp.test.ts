// claw-server with a workspace that has MCP servers: a skipped server is said on stderr, and
// stopping the server stops every MCP server it started.
import { mkdir, mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeOpenAIServer } from '@claw/testing/node';
import { afterEach, expect, it } from 'vitest';
import { WsClient, cleanUp as cleanUpClients } from './helpers.js';
import { ServerProcess, killServers, serverEnv } from './process.js';
import { elicitServerLaunch } from '../../../packages/runtime/test/fixtures/elicit-server-launch.mjs';

const testServer = fileURLToPath(new URL('../../../packages/mcp/test/fixtures/test-server.mjs', import.meta.url));
const folders: string[] = [];

let model: FakeOpenAIServer | undefined;

afterEach(async () => {
  await model?.close();
  model = undefined;
  await cleanUpClients();
  await killServers();
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

async function folder(): Promise<string> {
  const made = await mkdtemp(path.join(tmpdir(), 'claw-server-mcp-'));
  folders.push(made);
  return made;
}

/** Test servers running in `workDir` (their command line holds the fixture's path). */
async function serversIn(workDir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(testServer) && (await readlink(`/proc/${entry}/cwd`).catch(() => '')) === workDir) {
      pids.push(Number(entry));
    }
  }
  return pids;
}

it('opening a session starts the workspace\'s MCP servers, warns about a broken one, and SIGTERM stops them all', async () => {
  const cwd = await folder();
  const workDir = await folder();
  await mkdir(path.join(workDir, '.claw'));
  await writeFile(path.join(workDir, '.claw', 'mcp.json'), JSON.stringify({
    mcpServers: {
      test: { command: process.execPath, args: [testServer, '--linger'] },
      broken: { command: 'claw-no-such-mcp-server' },
    },
  }));
  const portFile = path.join(cwd, 'ports.json');
  const server = new ServerProcess(
    [
      '--demo', '--workdir', workDir, '--tcp-port', '0', '--http-port', '0', '--port-file', portFile,
      // The workspace's mcp.json is used only when it is trusted (TRUST-2).
      '--trust-workspace',
    ],
    { env: serverEnv(), cwd },
  );
  const ports = await server.ports(portFile);
  const client = await WsClient.connect(ports.http);
  await client.hello(server.token());
  client.send({ type: 'open', session_id: 'with-mcp' });
  await client.next('session_opened');
  const deadline = Date.now() + 10_000;
  while (!server.stderr.includes('MCP server "broken"') && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  expect(server.stderr).toContain(`mcp (${workDir}): MCP server "broken" could not be started (claw-no-such-mcp-server)`);
  expect(await serversIn(workDir)).toHaveLength(1);
  server.signal('SIGTERM');
  expect(await server.exited).toBe(0);
  expect(await serversIn(workDir)).toEqual([]);
});

// An MCP server (the SDK's, on stdio) whose `ask` tool asks the user for input and answers with
// what it got back.
const askServer = {
  ...elicitServerLaunch(),
  risk: 'safe',
};

it('declines a request for input nobody answers after the time an approval waits (--idle-timeout-ms, MCP-7)', async () => {
  const cwd = await folder();
  const workDir = await folder();
  await mkdir(path.join(workDir, '.claw'));
  await writeFile(path.join(workDir, '.claw', 'mcp.json'), JSON.stringify({ mcpServers: { sdk: askServer } }));
  const form = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
  model = await FakeOpenAIServer.start({
    turns: [
      { toolCalls: [{ id: 'call-ask', name: 'mcp_sdk_ask', arguments: JSON.stringify({ message: 'Who are you?', requestedSchema: form }) }] },
      { text: 'thanks' },
    ],
  });
  const portFile = path.join(cwd, 'ports.json');
  const idleTimeoutMs = 1_500;
  const server = new ServerProcess(
    [
      '--workdir', workDir, '--tcp-port', '0', '--http-port', '0', '--port-file', portFile,
      '--trust-workspace', '--idle-timeout-ms', String(idleTimeoutMs),
    ],
    { env: serverEnv({ OPENAI_API_KEY: 'test', OPENAI_BASE_URL: model.baseURL }), cwd },
  );
  const ports = await server.ports(portFile);
  // A client stays connected (the session is watched, never idle) and does not answer.
  const client = await WsClient.connect(ports.http);
  await client.hello(server.token());
  client.send({ type: 'open', session_id: 'asked' });
  await client.next('session_opened');
  client.send({ type: 'prompt', content: 'who am I?' });
  const request = await client.next('elicitation_request');
  const asked = Date.now();
  const resolved = await client.next('elicitation_resolved', (event) => event.request_id === request.request_id);
  expect(resolved).toMatchObject({ action: 'decline', by: 'timeout' });
  expect(Date.now() - asked).toBeGreaterThanOrEqual(idleTimeoutMs - 100);
  const result = await client.next('tool_result');
  expect(JSON.parse(result.result)).toEqual({ action: 'decline' });
  await client.next('task_completed');
  expect(server.stderr).toContain(`and no answer came within ${idleTimeoutMs} ms; claw declined`);
});
