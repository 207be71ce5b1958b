import { spawn } from 'node:child_process';
import path from 'node:path';
import { ClawUserError, errorMessage, isUserError } from '@claw/core';
import type { McpConfig, McpLoginResult } from '@claw/mcp';
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
import { exitStatus, statusForSignal } from './exit-status.js';
import { reportFailure } from './failure.js';
import { Output } from './output.js';
import { colourWanted, createStyle, type Style } from './style.js';
import { visible } from './terminal-text.js';
import { shellWord, trustCommand } from './trust.js';

type McpServerStatus = McpListing['servers'][number];
type McpCommand = Extract<Command, { kind: 'mcp' }>;

interface McpStreams {
  stdout: Output;
  stderr: Output;
  style: Style;
}

/** `claw mcp list|login|logout`. */
export async function runMcp(command: McpCommand, io: CliIo): Promise<number> {
  const streams: McpStreams = {
    stdout: new Output(io.stdout),
    stderr: new Output(io.stderr),
    style: createStyle(colourWanted(io.stdout, io.env)),
  };
  try {
    switch (command.action) {
      case 'list':
        return await runMcpList(command, io, streams);
      case 'login':
        return await runMcpLogin(command, io, streams);
      case 'logout':
        return await runMcpLogout(command, io, streams);
    }
  } catch (error) {
    return reportFailure(error, streams.stderr, createStyle(colourWanted(io.stderr, io.env)));
  }
}

/**
 * `claw mcp list`: starts the workspace's MCP servers, waits until each is ready or has failed,
 * prints each one (state, tools, last error) and closes them. Exit status 0 when every enabled
 * server is ready (or there is no `.claw/mcp.json`), 1 when one failed or needs a login, 2 for a
 * configuration that cannot be used.
 */
async function runMcpList(command: McpCommand, io: CliIo, streams: McpStreams): Promise<number> {
  const { stdout, style } = streams;
  const workDir = await trustedWorkDir(command, io, streams);
  if (workDir === undefined) return exitStatus.failed;
  const listing = await inspectMcpServers({ workDir, env: io.env });
  if (listing === undefined) {
    await stdout.write(noServersText(workDir));
    return exitStatus.completed;
  }
  await stdout.write(listingText(listing, style, command.workdir));
  const unusable = listing.servers.some((server) =>
    server.state === 'failed' || server.state === 'needs_login');
  return unusable ? exitStatus.failed : exitStatus.completed;
}

/**
 * `claw mcp login <name>` (MCP-8): logs in to a `url` server of the workspace with OAuth. The
 * login page opens in the browser (BROWSER, else the system's opener; the URL is printed too),
 * the browser comes back to claw on 127.0.0.1, and the token is kept in the user's state folder
 * (`$XDG_STATE_HOME/claw/mcp-auth.json`, 0600), never in the workspace. Exit 0 when logged in (or
 * when the server asked for no login), 1 when the login failed, 2 for a name or configuration
 * that cannot be used, 130 on Ctrl-C.
 */
async function runMcpLogin(command: McpCommand, io: CliIo, streams: McpStreams): Promise<number> {
  const { stdout, style } = streams;
  const name = command.server ?? '';
  const workDir = await trustedWorkDir(command, io, streams);
  if (workDir === undefined) return exitStatus.failed;
  const { loginMcpServer } = await import('@claw/mcp');
  const { config, authFile } = await loginSetting(workDir, io);
  const canceled = new AbortController();
  let interrupted: NodeJS.Signals | undefined;
  const release = io.interrupts.handle((signal) => {
    interrupted = signal;
    canceled.abort(new Error('login canceled'));
  });
  let result: McpLoginResult;
  try {
    result = await loginMcpServer({
      config,
      server: name,
      workDir,
      authFile,
      signal: canceled.signal,
      openUrl: async (url, server) => {
        await stdout.line(`To log in to MCP server "${visible(server)}", open this page (claw ` +
          'opens it in your browser):');
        await stdout.line(`  ${url.href}`);
        const problem = await openBrowser(url.href, io.env);
        if (problem !== undefined) {
          await stdout.line(style.yellow(`claw could not open a browser (${visible(problem)}): ` +
            'open the page yourself.'));
        }
        await stdout.line(style.dim('Waiting for the browser to come back (up to 5 minutes; ' +
          'Ctrl-C to stop)…'));
      },
    });
  } catch (error) {
    if (interrupted !== undefined) {
      await stdout.line('Login canceled: no token was kept.');
      return statusForSignal(interrupted);
    }
    if (isUserError(error)) throw error;
    await streams.stderr.line(`${style.red('claw:')} ${visible(errorMessage(error))}`);
    return exitStatus.failed;
  } finally {
    release();
  }
  const tools = `${count(result.tools.length, 'tool')}` +
    (result.tools.length === 0 ? '' : ` (${visible(result.tools.join(', '))})`);
  if (!result.loggedIn) {
    await stdout.line(`MCP server "${visible(name)}" let claw in without a login (it does not ` +
      `ask for OAuth), so nothing was kept: ${tools}.`);
    return exitStatus.completed;
  }
  await stdout.line(style.green(`Logged in to MCP server "${visible(name)}": ${tools}.`));
  await stdout.line(`The token is kept in ${result.authFile} (only you can read it), never in the ` +
    `workspace; claw uses it from its next start. \`${mcpCommand('logout', name, command.workdir)}\` ` +
    'removes it.');
  return exitStatus.completed;
}

/** `claw mcp logout <name>`: removes the token claw keeps for the server. Exit 0; 2: bad name. */
async function runMcpLogout(command: McpCommand, io: CliIo, streams: McpStreams): Promise<number> {
  const { stdout } = streams;
  const name = command.server ?? '';
  const workDir = await resolveWorkDir(command.workdir, io.cwd);
  const { logoutMcpServer } = await import('@claw/mcp');
  const { config, authFile } = await loginSetting(workDir, io);
  const result = await logoutMcpServer({ config, server: name, authFile });
  await stdout.line(result.removed
    ? `Logged out of MCP server "${visible(name)}": its token was removed from ${authFile}.`
    : `claw keeps no token for MCP server "${visible(name)}" (${visible(result.url)}): nothing ` +
      'to remove.');
  return exitStatus.completed;
}

/**
 * The workspace folder when its MCP servers may be started: an untrusted workspace's are not,
 * not even to list them or log in (TRUST-2); then this says so and how to trust it.
 */
async function trustedWorkDir(
  command: McpCommand,
  io: CliIo,
  streams: McpStreams,
): Promise<string | undefined> {
  const workDir = await resolveWorkDir(command.workdir, io.cwd);
  const trust = await checkWorkspaceTrust(workDir, {
    env: io.env,
    trustAll: command.trustWorkspace,
  });
  if (!trust.trusted && trust.files.some((file) => file.name === 'mcp.json')) {
    await streams.stdout.write(await untrustedText(trust, command.workdir, streams.style));
    return undefined;
  }
  return workDir;
}

/** The workspace's MCP configuration and the file tokens are kept in, or why there are none. */
async function loginSetting(
  workDir: string,
  io: CliIo,
): Promise<{ config: McpConfig; authFile: string }> {
  const { loadMcpConfig, mcpAuthFile } = await import('@claw/mcp');
  const config = await loadMcpConfig({ workDir, env: io.env });
  if (config === undefined) {
    throw new ClawUserError(
      `there are no MCP servers: ${path.join(workDir, '.claw', 'mcp.json')} does not exist ` +
      '(`claw mcp list` shows how to add one)',
      { code: 'usage' },
    );
  }
  const authFile = mcpAuthFile(io.env);
  if (authFile === undefined) {
    throw new ClawUserError(
      'claw cannot keep a login token: neither HOME nor XDG_STATE_HOME is set (to an absolute ' +
      'path); set one',
      { code: 'usage' },
    );
  }
  return { config, authFile };
}

/**
 * Opens `url` in the user's browser, with no shell in between: the program BROWSER names (the URL
 * its only argument), else the system's opener (`open` on macOS, `xdg-open` elsewhere, the URL
 * handler on Windows). Resolves once it started, with undefined, or with why it could not.
 */
function openBrowser(
  url: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<string | undefined> {
  const browser = env.BROWSER;
  const [program, args] = browser !== undefined && browser !== ''
    ? [browser, [url]]
    : process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['rundll32', ['url.dll,FileProtocolHandler', url]]
        : ['xdg-open', [url]];
  return new Promise((resolve) => {
    try {
      const child = spawn(program, args, { detached: true, stdio: 'ignore', env: { ...env } });
      child.once('error', (error) => resolve(`${program}: ${errorMessage(error)}`));
      child.once('spawn', () => {
        child.unref();
        resolve(undefined);
      });
    } catch (error) {
      resolve(`${program}: ${errorMessage(error)}`);
    }
  });
}

/** `claw mcp <action> <server>`, with `--workdir` when one was given; quoted for a shell. */
function mcpCommand(action: string, server: string, workdir: string | undefined): string {
  return `claw mcp ${action} ${shellWord(server)}` +
    (workdir === undefined ? '' : ` --workdir ${shellWord(workdir)}`);
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

/**
 * The listing: one block per server, in the order of the file. A server that needs a login says
 * the command that logs in to it (with this `--workdir`).
 */
export function listingText(listing: McpListing, style: Style, workdir?: string): string {
  const lines = [`MCP servers in ${listing.file}:`];
  for (const server of listing.servers) {
    lines.push(
      `  ${style.bold(server.name)} (${server.transport}): ${stateText(server, style)}` +
      (server.state === 'disabled' ? '' : `, ${count(server.tools.length, 'tool')}`),
    );
    if (server.tools.length > 0) lines.push(`    tools: ${visible(server.tools.join(', '))}`);
    if (server.state === 'needs_login') {
      lines.push(`    log in: ${visible(mcpCommand('login', server.name, workdir))}`);
    }
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
    case 'needs_login':
      return style.yellow('needs login');
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
  const needLogin = status.filter((server) => server.state === 'needs_login');
  const tools = on.reduce((sum, server) => sum + server.tools.length, 0);
  let line = `MCP: ${count(tools, 'tool')} on from ${count(on.length, 'server')}` +
    (on.length === 0 ? '' : ` (${on.map((server) => server.name).join(', ')})`);
  if (failed.length > 0) {
    line += `; not started: ${failed.map((server) => server.name).join(', ')} ` +
      '(see the warning above, or `claw mcp list`)';
  }
  if (needLogin.length > 0) {
    // The REPL never opens a browser: the user logs in from a terminal, then starts claw again.
    line += `; needs login: ${needLogin.map((server) => server.name).join(', ')} (run ` +
      `${needLogin.map((server) => `\`${mcpCommand('login', server.name, undefined)}\``).join(', ')})`;
  }
  return failed.length > 0 || needLogin.length > 0 ? style.yellow(line) : style.dim(line);
}
