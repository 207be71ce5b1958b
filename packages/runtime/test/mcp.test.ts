// MCP through the whole runtime (MCP-1..5, RT-2): a workspace's .claw/mcp.json, the factory's
// connections, the engine's model requests and tool calls, the approval gate, close(). The
// workspaces here are trusted (`trustWorkspaces`, as `--trust-workspace`): an untrusted one's
// servers are never started (TRUST-2, see factory-trust.test.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ApprovalHandler, ApprovalPrompt } from '@claw/approval';
import { isUserError, type Message, type ModelRequest, type ToolProgressReport } from '@claw/core';
import type { McpWarning } from '@claw/mcp';
import { afterEach, describe, expect, it } from 'vitest';
import { inspectMcpServers } from '../src/index.js';
import { cleanUp, scriptedFactory, settings, tempWorkspace } from './helpers.js';

const require = createRequire(import.meta.url);
const everythingBin = path.join(
  path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist',
  'index.js',
);
const filesystemBin = path.join(
  path.dirname(require.resolve('@modelcontextprotocol/server-filesystem/package.json')),
  'dist',
  'index.js',
);
// The in-repo SDK test server and the HTTP wrapper of server-everything live with @claw/mcp's tests.
const fixtures = fileURLToPath(new URL('../../mcp/test/fixtures/', import.meta.url));
const testServer = path.join(fixtures, 'test-server.mjs');
const everythingHttp = path.join(fixtures, 'everything-http.mjs');

const children = new Set<ChildProcess>();

afterEach(async () => {
  await cleanUp();
  for (const child of children) child.kill('SIGKILL');
  children.clear();
});

async function workspaceWith(mcpServers: Record<string, unknown>): Promise<string> {
  const workDir = await tempWorkspace('claw-runtime-mcp-');
  await mkdir(path.join(workDir, '.claw'), { recursive: true });
  await writeFile(path.join(workDir, '.claw', 'mcp.json'), JSON.stringify({ mcpServers }));
  return workDir;
}

async function startHttp(script: string): Promise<string> {
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(child);
  const port = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.setEncoding('utf8').on('data', (text: string) => {
      out += text;
      const match = /listening (\d+)/.exec(out);
      if (match?.[1] !== undefined) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`${script} exited (${code})`)));
  });
  return `http://127.0.0.1:${port}/mcp`;
}

/** Settings that trust every workspace's `.claw/mcp.json` (TRUST-2), else as `settings()`. */
const trusted = (overrides: Parameters<typeof settings>[0] = {}) =>
  settings({ trustWorkspaces: true, ...overrides });

/** Answers every question with allow_once and keeps what was asked. */
function recordingHandler(): { handler: ApprovalHandler; asked: ApprovalPrompt[] } {
  const asked: ApprovalPrompt[] = [];
  return {
    asked,
    handler: {
      approve: async (prompt) => {
        asked.push(prompt);
        return 'allow_once';
      },
    },
  };
}

function toolNames(request: ModelRequest): string[] {
  return (request.tools ?? []).map((tool) => tool.name);
}

function observations(history: readonly Message[]) {
  return history.flatMap((message) => message.role === 'tool'
    ? [{ content: message.content, isError: message.isError === true }]
    : []);
}

/** Runs (a zombie is not running; /proc tells them apart on Linux). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = `/proc/${pid}/stat`;
  if (!existsSync('/proc/self')) return true;
  try {
    const text = readFileSync(stat, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

describe.each(['stdio', 'http'] as const)('server-everything over %s through the engine', (transport) => {
  it('lists its tools to the model and calls echo and get-sum, the approval gate asking first', async () => {
    const server = transport === 'stdio'
      ? { command: process.execPath, args: [everythingBin] }
      : { url: await startHttp(everythingHttp) };
    const workDir = await workspaceWith({ everything: server });
    const requests: ModelRequest[] = [];
    const { factory } = scriptedFactory([
      (request) => {
        requests.push(request);
        return {
          toolCalls: [
            { id: 'c1', name: 'mcp_everything_echo', arguments: { message: 'hi there' } },
            { id: 'c2', name: 'mcp_everything_get-sum', arguments: { a: 2, b: 3 } },
          ],
        };
      },
      (request) => {
        requests.push(request);
        return { text: 'done' };
      },
    ], { settings: trusted({ approval: 'ask' }) });
    const { handler, asked } = recordingHandler();
    const runtime = await factory.createRuntime({ workDir, approvalHandler: handler });
    const result = await runtime.start('use the everything server').wait();
    expect(result.status).toBe('completed');
    expect(toolNames(requests[0] as ModelRequest)).toEqual(expect.arrayContaining([
      'read_file', 'bash', 'mcp_everything_echo', 'mcp_everything_get-sum', 'mcp_everything_get_prompt',
    ]));
    expect(asked.map((prompt) => [prompt.toolName, prompt.risk])).toEqual([
      ['mcp_everything_echo', 'dangerous'],
      ['mcp_everything_get-sum', 'dangerous'],
    ]);
    expect(observations(runtime.session.history())).toEqual([
      { content: 'Echo: hi there', isError: false },
      { content: 'The sum of 2 and 3 is 5.', isError: false },
    ]);
  });
});

describe('server-filesystem (stdio) through the engine', () => {
  it('writes and reads through claw; a path the server refuses is an error Observation', async () => {
    const workDir = await tempWorkspace('claw-runtime-mcp-fs-');
    const allowed = path.join(workDir, 'allowed');
    await mkdir(allowed);
    await mkdir(path.join(workDir, '.claw'));
    await writeFile(path.join(workDir, '.claw', 'mcp.json'), JSON.stringify({
      // "roots": false: it keeps its own root (with claw's, MCP-9, it would take the workspace).
      mcpServers: { fs: { command: process.execPath, args: [filesystemBin, allowed], roots: false } },
    }));
    // Inside the workspace (claw's policy lets it through), outside the server's root.
    await writeFile(path.join(workDir, 'secret.txt'), 'not for the server');
    const { factory } = scriptedFactory([
      { toolCalls: [{ id: 'w', name: 'mcp_fs_write_file', arguments: { path: path.join(allowed, 'a.txt'), content: 'written by claw' } }] },
      { toolCalls: [{ id: 'r', name: 'mcp_fs_read_text_file', arguments: { path: path.join(allowed, 'a.txt') } }] },
      { toolCalls: [{ id: 'x', name: 'mcp_fs_read_text_file', arguments: { path: path.join(workDir, 'secret.txt') } }] },
      { text: 'done' },
    ], { settings: trusted() });
    const runtime = await factory.createRuntime({ workDir });
    expect((await runtime.start('files').wait()).status).toBe('completed');
    expect(await readFile(path.join(allowed, 'a.txt'), 'utf8')).toBe('written by claw');
    const [written, read, refused] = observations(runtime.session.history());
    expect(written?.isError).toBe(false);
    expect(read).toEqual({ content: 'written by claw', isError: false });
    expect(refused?.isError).toBe(true);
    expect(refused?.content).toContain('Access denied - path outside allowed directories');
    expect(refused?.content).not.toContain('not for the server');
  });
});

describe('MCP in the runtime', () => {
  it('a tool added by tools/list_changed is offered on the very next model call', async () => {
    const workDir = await workspaceWith({ test: { command: process.execPath, args: [testServer] } });
    const { factory } = scriptedFactory([
      (request) => {
        expect(toolNames(request)).not.toContain('mcp_test_added_tool');
        return { toolCalls: [{ id: 'c1', name: 'mcp_test_add_tool', arguments: {} }] };
      },
      (request) => {
        expect(toolNames(request)).toContain('mcp_test_added_tool');
        return { toolCalls: [{ id: 'c2', name: 'mcp_test_added_tool', arguments: {} }] };
      },
      { text: 'done' },
    ], { settings: trusted() });
    const runtime = await factory.createRuntime({ workDir });
    const result = await runtime.start('add a tool, then use it').wait();
    expect(result.error).toBeUndefined();
    expect(result.status).toBe('completed');
    const [added, used] = observations(runtime.session.history());
    expect(added).toEqual({ content: 'added added_tool', isError: false });
    expect(used?.content).toMatch(/^added_tool from \d+$/);
  });

  it('an isError result and a crashed server are error Observations; the run goes on', async () => {
    const warnings: McpWarning[] = [];
    const workDir = await workspaceWith({ test: { command: process.execPath, args: [testServer] } });
    const { factory } = scriptedFactory([
      { toolCalls: [{ id: 'c1', name: 'mcp_test_fail', arguments: {} }] },
      { toolCalls: [{ id: 'c2', name: 'mcp_test_crash', arguments: {} }] },
      { toolCalls: [{ id: 'c3', name: 'mcp_test_alpha', arguments: {} }] },
      { text: 'gave up on it' },
    ], {
      settings: trusted(),
      mcp: { onWarning: (warning) => warnings.push(warning), reconnect: { initialDelayMs: 60_000 } },
    });
    const runtime = await factory.createRuntime({ workDir });
    const result = await runtime.start('try the test server').wait();
    expect(result.status).toBe('completed');
    const [failed, crashed, outage] = observations(runtime.session.history());
    expect(failed).toEqual({ content: 'it failed on purpose', isError: true });
    expect(crashed?.isError).toBe(true);
    expect(crashed?.content).toMatch(/^Error: mcp_test_crash failed: MCP server "test" lost its connection during the call of crash/);
    expect(outage?.isError).toBe(true);
    expect(outage?.content).toContain('MCP server "test" is not connected (the process exited); claw is reconnecting');
    expect(warnings.map((warning) => warning.code)).toEqual(['mcp_server_disconnected']);
  });

  it('progress of a long-running tool reaches the reporter, and canceling it ends the task at once', async () => {
    const workDir = await workspaceWith({ everything: { command: process.execPath, args: [everythingBin] } });
    const { factory } = scriptedFactory([
      {
        toolCalls: [{
          id: 'c1',
          name: 'mcp_everything_trigger-long-running-operation',
          arguments: { duration: 600, steps: 6000 },
        }],
      },
    ], { settings: trusted() });
    const runtime = await factory.createRuntime({ workDir });
    const progress: ToolProgressReport[] = [];
    let firstProgress: () => void = () => undefined;
    const reported = new Promise<void>((resolve) => {
      firstProgress = resolve;
    });
    const task = runtime.start('run the long operation', {
      onToolProgress: (report) => {
        progress.push(report);
        firstProgress();
      },
    });
    await reported;
    expect(progress[0]).toEqual({
      toolCallId: 'c1',
      toolName: 'mcp_everything_trigger-long-running-operation',
      progress: 1,
      total: 6000,
    });
    // Ten minutes of work left: only the cancellation can end this task within the test.
    task.cancel();
    const result = await task.wait();
    expect(result.status).toBe('canceled');
    expect(observations(runtime.session.history())).toEqual([{ content: 'tool call canceled', isError: true }]);
  });

  it('connections are opened lazily: nothing starts before a runtime (or mcpServers) needs them', async () => {
    const log = path.join(await tempWorkspace(), 'server.log');
    const workDir = await workspaceWith({ test: { command: process.execPath, args: [testServer, '--log', log] } });
    const { factory } = scriptedFactory([], { settings: trusted() });
    await factory.isolation();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(existsSync(log)).toBe(false);
    await factory.createRuntime({ workDir });
    await (await factory.mcpServers(workDir))?.ready();
    expect(readFileSync(log, 'utf8')).toContain('"event":"list"');
  });

  it('without .claw/mcp.json there are no MCP tools and no error', async () => {
    const workDir = await tempWorkspace();
    let tools: string[] = [];
    const { factory } = scriptedFactory([(request) => {
      tools = toolNames(request);
      return { text: 'ok' };
    }]);
    expect(await factory.mcpServers(workDir)).toBeUndefined();
    const runtime = await factory.createRuntime({ workDir });
    expect((await runtime.start('hi').wait()).status).toBe('completed');
    expect(tools).toEqual(['read_file', 'write_file', 'edit_file', 'bash', 'spawn_subagent']);
  });

  it('a configuration that cannot be used fails createRuntime as a user error, holding nothing', async () => {
    const workDir = await workspaceWith({
      remote: { url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer ${REMOTE_TOKEN}' } },
    });
    const { factory } = scriptedFactory([], { settings: trusted() });
    const error = await factory.createRuntime({ workDir }).catch((caught: unknown) => caught);
    expect(isUserError(error)).toBe(true);
    expect((error as Error).message).toContain('MCP server "remote": headers.Authorization uses ${REMOTE_TOKEN}');
    expect(factory.openSessions).toBe(0);
    // Fixed: read again.
    const fixed = scriptedFactory([], {
      settings: trusted(),
      env: { REMOTE_TOKEN: 't' },
      mcp: { enabled: true },
    }).factory;
    expect(await fixed.mcpServers(workDir)).toBeDefined();
  });

  it('one set of connections per workspace for the whole factory; close() leaves no child process (by pid)', async () => {
    const workDir = await workspaceWith({
      everything: { command: process.execPath, args: [everythingBin] },
      test: { command: process.execPath, args: [testServer] },
    });
    const { factory } = scriptedFactory([{ text: 'a' }, { text: 'b' }], { settings: trusted() });
    const one = await factory.createRuntime({ workDir, sessionId: 'one' });
    const two = await factory.createRuntime({ workDir, sessionId: 'two' });
    await one.start('a').wait();
    await two.start('b').wait();
    const servers = await factory.mcpServers(workDir);
    expect(await factory.mcpServers(path.join(workDir, '.'))).toBe(servers);
    const pids = (servers?.status() ?? []).map((status) => status.pid);
    expect(pids).toHaveLength(2);
    expect(pids.every((pid) => typeof pid === 'number' && running(pid))).toBe(true);
    await factory.close();
    expect(pids.filter((pid) => running(pid ?? -1))).toEqual([]);
    expect(servers?.status().map((status) => status.state)).toEqual(['closed', 'closed']);
  });
});

describe('inspectMcpServers (claw mcp list)', () => {
  it('starts the servers, reports each (state, tools, last error), and closes them', async () => {
    const workDir = await workspaceWith({
      test: { command: process.execPath, args: [testServer] },
      broken: { command: 'claw-no-such-mcp-server' },
      off: { command: 'whatever', enabled: false },
    });
    const listing = await inspectMcpServers({ workDir, env: {} });
    expect(listing?.file).toBe(path.join(workDir, '.claw', 'mcp.json'));
    const [test, broken, off] = listing?.servers ?? [];
    expect(test).toMatchObject({ name: 'test', state: 'ready', transport: 'stdio' });
    expect(test?.tools).toContain('mcp_test_alpha');
    expect(broken).toMatchObject({ name: 'broken', state: 'failed', tools: [] });
    expect(broken?.lastError).toContain('command not found: claw-no-such-mcp-server');
    expect(off).toMatchObject({ name: 'off', state: 'disabled', tools: [] });
    expect(running(test?.pid ?? -1)).toBe(false);
    expect(await inspectMcpServers({ workDir: await tempWorkspace(), env: {} })).toBeUndefined();
    expect(await readFile(path.join(workDir, '.claw', 'mcp.json'), 'utf8')).toContain('mcpServers');
  });
});
