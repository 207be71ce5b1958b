// `claw mcp list` and the REPL's MCP start-up line, with the built claw and the in-repo SDK test
// server of @claw/mcp (started by claw from its path, as a workspace's .claw/mcp.json says).
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { baseEnv, ClawProcess, cleanUp, eventually, tempDir } from './helpers.js';

afterEach(cleanUp);

const testServer = fileURLToPath(new URL('../../../packages/mcp/test/fixtures/test-server.mjs', import.meta.url));

async function workspaceWith(mcpServers: Record<string, unknown>): Promise<string> {
  const workDir = await tempDir();
  await mkdir(path.join(workDir, '.claw'));
  await writeFile(path.join(workDir, '.claw', 'mcp.json'), JSON.stringify({ mcpServers }));
  return workDir;
}

const allTools = [
  'alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'add_tool', 'slow', 'crash', 'fail', 'revoke', 'inspect',
].map((name) => `mcp_test_${name}`);

describe('claw mcp list', () => {
  it('shows each server: state, transport, tool count and names, last error; exit 1 when one failed', async () => {
    const workDir = await workspaceWith({
      test: { command: process.execPath, args: [testServer] },
      broken: { command: 'claw-no-such-mcp-server' },
      off: { command: 'whatever', enabled: false },
    });
    // The workspace's own servers start only when it is trusted (TRUST-2): here for this run.
    const result = await ClawProcess.run(['mcp', 'list', '--workdir', workDir, '--trust-workspace']);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe([
      `MCP servers in ${path.join(workDir, '.claw', 'mcp.json')}:`,
      '  test (stdio): ready, 12 tools',
      `    tools: ${allTools.join(', ')}`,
      '  broken (stdio): failed, 0 tools',
      '    last error: MCP server "broken" could not be started (claw-no-such-mcp-server): command not found: ' +
      'claw-no-such-mcp-server (install it, or give its full path). Check "command" and "args" of "broken" in ' +
      `${path.join(workDir, '.claw', 'mcp.json')} (run the command in the workspace to see what it does), or set ` +
      '"enabled": false for it',
      '  off (stdio): disabled ("enabled": false)',
      '',
    ].join('\n'));
    expect(result.status).toBe(1);
  });

  it('exits 0 when every server is up, and leaves no server process behind', async () => {
    const workDir = await workspaceWith({ test: { command: process.execPath, args: [testServer, '--linger'] } });
    const result = await ClawProcess.run(['mcp', 'list', '--trust-workspace'], { cwd: workDir });
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('test (stdio): ready, 12 tools');
    expect(await eventually(async () => (await serverProcesses(workDir)).length === 0)).toBe(true);
  });

  it('without .claw/mcp.json says so and how to add one (exit 0)', async () => {
    const workDir = await tempDir();
    const result = await ClawProcess.run(['mcp', 'list', '--workdir', workDir]);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`No MCP servers: ${path.join(workDir, '.claw', 'mcp.json')} does not exist.`);
    expect(result.stdout).toContain('"mcpServers"');
  });

  it('a configuration error exits 2 naming the variable and the server', async () => {
    const workDir = await workspaceWith({
      remote: { url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer ${REMOTE_TOKEN}' } },
    });
    const result = await ClawProcess.run(['mcp', 'list', '--workdir', workDir, '--trust-workspace']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('MCP server "remote": headers.Authorization uses ${REMOTE_TOKEN}, but the environment variable REMOTE_TOKEN is not set');
  });

  it('usage errors: no subcommand, an unknown one, an option it does not take', async () => {
    for (const [args, message] of [
      [['mcp'], '`claw mcp` needs a subcommand: `claw mcp list`'],
      [['mcp', 'add'], 'unknown subcommand "mcp add"'],
      [['mcp', 'list', 'now'], 'unexpected argument "now" after `claw mcp list`'],
      [['mcp', 'list', '-p', 'x'], '`claw mcp list` takes only --workdir, not --prompt'],
    ] as const) {
      const result = await ClawProcess.run(args);
      expect(result.status).toBe(2);
      expect(result.stderr).toContain(message);
    }
  });

  it('--help names the command and the file', async () => {
    const result = await ClawProcess.run(['--help']);
    expect(result.stdout).toContain('claw mcp list [--workdir <dir>]');
    expect(result.stdout).toContain('mcp.json           MCP servers whose tools claw offers as mcp_<server>_<tool>');
  });
});

describe('the REPL', () => {
  it('says how many MCP tools are on at start-up, and warns about a server it skipped', async () => {
    const workDir = await workspaceWith({
      test: { command: process.execPath, args: [testServer] },
      broken: { command: 'claw-no-such-mcp-server' },
    });
    // Trusted for this run: the REPL does not ask, and starts the workspace's servers.
    const claw = ClawProcess.start(['--workdir', workDir, '--trust-workspace'], {
      env: baseEnv({ OPENAI_API_KEY: 'unused', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' }),
    });
    await claw.waitFor('claw> ');
    expect(claw.stdout).not.toContain('Trust this workspace?');
    expect(claw.stdout).toContain(
      'MCP: 12 tools on from 1 server (test); not started: broken (see the warning above, or `claw mcp list`)',
    );
    expect(claw.stderr).toContain('claw: MCP server "broken" could not be started (claw-no-such-mcp-server)');
    claw.send('/exit');
    expect(await claw.exited).toBe(0);
    expect(await eventually(async () => (await serverProcesses(workDir)).length === 0)).toBe(true);
  });

  it('says nothing about MCP when the workspace has no .claw/mcp.json', async () => {
    const workDir = await tempDir();
    const claw = ClawProcess.start(['--workdir', workDir], {
      env: baseEnv({ OPENAI_API_KEY: 'unused', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' }),
    });
    await claw.waitFor('claw> ');
    expect(claw.stdout).not.toContain('MCP');
    claw.send('/exit');
    expect(await claw.exited).toBe(0);
  });
});

/** Test servers claw started for this workspace (the fixture's path in their command line, cwd the workspace). */
async function serverProcesses(workDir: string): Promise<number[]> {
  const { readdir, readFile, readlink } = await import('node:fs/promises');
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (!cmdline.includes(testServer)) continue;
    const cwd = await readlink(`/proc/${entry}/cwd`).catch(() => '');
    if (cwd === workDir) pids.push(Number(entry));
  }
  return pids;
}
