import path from 'node:path';
import {
  checkWorkspaceTrust,
  describeWorkspaceSettings,
  inspectMcpServers,
  resolveWorkDir,
  type McpListing,
  type RuntimeFactory,
  type WorkspaceTrust,
} from '@claw/runtime';
import type { Command } from './args.js';
import type { CliIo } from './cli.js';
import { exitStatus } from './exit-status.js';
import { reportFailure } from './failure.js';
import { Output } from './output.js';
import { colourWanted, createStyle, type Style } from './style.js';
import { visible } from './terminal-text.js';
import { trustCommand } from './trust.js';

type McpServerStatus = McpListing['servers'][number];

/**
 * `claw mcp list`: starts the workspace's MCP servers, waits until each is ready or has failed,
 * prints each one (state, tools, last error) and closes them. Exit status 0 when every enabled
 * server is ready (or there is no `.claw/mcp.json`), 1 when one failed, 2 for a configuration
 * that cannot be used.
 */
export async function runMcpList(
  command: Extract<Command, { kind: 'mcp-list' }>,
  io: CliIo,
): Promise<number> {
  const stdout = new Output(io.stdout);
  const stderr = new Output(io.stderr);
  const style = createStyle(colourWanted(io.stdout, io.env));
  try {
    const workDir = await resolveWorkDir(command.workdir, io.cwd);
    // An untrusted workspace's servers are not started, not even to list them (TRUST-2).
    const trust = await checkWorkspaceTrust(workDir, {
      env: io.env,
      trustAll: command.trustWorkspace,
    });
    if (!trust.trusted && trust.files.some((file) => file.name === 'mcp.json')) {
      await stdout.write(await untrustedText(trust, command.workdir, style));
      return exitStatus.failed;
    }
    const listing = await inspectMcpServers({ workDir, env: io.env });
    if (listing === undefined) {
      await stdout.write(noServersText(workDir));
      return exitStatus.completed;
    }
    await stdout.write(listingText(listing, style));
    const failed = listing.servers.some((server) => server.state === 'failed');
    return failed ? exitStatus.failed : exitStatus.completed;
  } catch (error) {
    return reportFailure(error, stderr, createStyle(colourWanted(io.stderr, io.env)));
  }
}

async function untrustedText(
  trust: WorkspaceTrust,
  workdir: string | undefined,
  style: Style,
): Promise<string> {
  const summaries = await describeWorkspaceSettings(trust);
  const lines = summaries.find((summary) => summary.name === 'mcp.json')?.lines ?? [];
  const why = trust.reason === 'changed' ? 'its settings changed since you trusted it' : 'it is not trusted';
  const command = trustCommand(workdir);
  return `${style.yellow(`The MCP servers of this workspace are not started: ${why}.`)} They would be:\n` +
    lines.map((line) => `  ${visible(line)}\n`).join('') +
    `Run \`${command}\` to trust it (or pass --trust-workspace to list them once).\n`;
}

function noServersText(workDir: string): string {
  return `No MCP servers: ${path.join(workDir, '.claw', 'mcp.json')} does not exist.\n` +
    'To add one, write it like this (secrets stay in the environment, as ${VAR}):\n' +
    '  {"mcpServers": {"files": {"command": "npx", "args": ["-y", "some-mcp-server"]},\n' +
    '                  "docs": {"url": "https://example.com/mcp",\n' +
    '                           "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}}}\n';
}

/** The listing: one block per server, in the order of the file. */
export function listingText(listing: McpListing, style: Style): string {
  const lines = [`MCP servers in ${listing.file}:`];
  for (const server of listing.servers) {
    lines.push(
      `  ${style.bold(server.name)} (${server.transport}): ${stateText(server, style)}` +
      (server.state === 'disabled' ? '' : `, ${count(server.tools.length, 'tool')}`),
    );
    if (server.tools.length > 0) lines.push(`    tools: ${visible(server.tools.join(', '))}`);
    if (server.lastError !== undefined) lines.push(`    last error: ${visible(server.lastError)}`);
  }
  return `${lines.join('\n')}\n`;
}

function stateText(server: McpServerStatus, style: Style): string {
  switch (server.state) {
    case 'ready':
      return style.green('ready');
    case 'failed':
      return style.red('failed');
    case 'reconnecting':
      return style.yellow(`reconnecting (attempt ${server.reconnectAttempt ?? 1})`);
    case 'disabled':
      return style.dim('disabled ("enabled": false)');
    case 'idle':
    case 'starting':
    case 'closed':
      return server.state;
  }
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/**
 * The REPL's start-up line about MCP (once every server is ready or has failed): how many MCP
 * tools are on, from which servers, and which were skipped. `undefined` without `.claw/mcp.json`.
 *
 * @throws McpConfigError when the file cannot be used.
 */
export async function mcpStartupLine(
  factory: RuntimeFactory,
  workDir: string,
  style: Style,
): Promise<string | undefined> {
  const servers = await factory.mcpServers(workDir);
  if (servers === undefined) return undefined;
  await servers.ready();
  const status = servers.status();
  const on = status.filter((server) => server.state === 'ready');
  const failed = status.filter((server) => server.state === 'failed');
  const tools = on.reduce((sum, server) => sum + server.tools.length, 0);
  let line = `MCP: ${count(tools, 'tool')} on from ${count(on.length, 'server')}` +
    (on.length === 0 ? '' : ` (${on.map((server) => server.name).join(', ')})`);
  if (failed.length > 0) {
    line += `; not started: ${failed.map((server) => server.name).join(', ')} ` +
      '(see the warning above, or `claw mcp list`)';
    return style.yellow(line);
  }
  return style.dim(line);
}
