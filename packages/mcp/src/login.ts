import { McpAuthStore } from './auth-store.js';
import type { McpConfig, McpHttpServerConfig } from './config.js';
import { McpConfigError, McpLoginError } from './errors.js';
import { McpServers } from './manager.js';
import type { SetTimer } from './timers.js';

export interface McpLoginOptions {
  /** The workspace's MCP configuration (`loadMcpConfig`). */
  config: McpConfig;
  /** The server's name in it. */
  server: string;
  /** The workspace (the root the server is told about). */
  workDir: string;
  /** Where the token is kept (`mcpAuthFile` of the environment). */
  authFile: string;
  /**
   * Shows the user the login page: opens a browser, or prints the URL. The browser comes back to
   * a listener on 127.0.0.1 (a port the system picks) with the code.
   */
  openUrl: (url: URL, server: string) => Promise<void> | void;
  /** How long to wait for the browser to come back (default 5 minutes). */
  authorizationTimeoutMs?: number;
  clientInfo?: { name: string; version: string };
  setTimer?: SetTimer;
  now?: () => number;
  signal?: AbortSignal;
}

/** How `loginMcpServer` went. */
export interface McpLoginResult {
  server: string;
  url: string;
  /** True: the user logged in and the new token is kept; false: the server let claw in without. */
  loggedIn: boolean;
  /** The server's tools, as claw registers them (`mcp_<server>_<tool>`). */
  tools: string[];
  /** Where the token is kept. */
  authFile: string;
}

/**
 * `claw mcp login <name>` (MCP-8): connects to the server as claw does, logging in with OAuth
 * whatever token is kept (discovery, dynamic registration or the configured client, PKCE, the
 * login page shown with `openUrl`, the browser back on 127.0.0.1 with the right `state`), keeps
 * the new token in `authFile` and lists the tools with it.
 *
 * @throws McpConfigError when there is no such server, or it is a command or disabled;
 *   McpLoginError (or the error the connection failed with) when the login did not succeed; the
 *   signal's reason when it aborts.
 */
export async function loginMcpServer(options: McpLoginOptions): Promise<McpLoginResult> {
  const config = httpServer(options.config, options.server, 'log in to');
  const servers = new McpServers({
    config: { file: options.config.file, servers: [config] },
    workDir: options.workDir,
    ...(options.clientInfo === undefined ? {} : { clientInfo: options.clientInfo }),
    ...(options.setTimer === undefined ? {} : { setTimer: options.setTimer }),
    // Logging in is all it does: no reconnecting behind the user's back.
    reconnect: { maxAttempts: 0 },
    oauth: {
      interactive: true,
      freshLogin: true,
      openUrl: options.openUrl,
      authFile: options.authFile,
      ...(options.authorizationTimeoutMs === undefined
        ? {}
        : { authorizationTimeoutMs: options.authorizationTimeoutMs }),
      ...(options.now === undefined ? {} : { now: options.now }),
    },
  });
  try {
    await servers.ready(options.signal === undefined ? {} : { signal: options.signal });
    const connection = servers.connection(config.name);
    const [status] = servers.status();
    if (connection === undefined || status?.state !== 'ready') {
      throw connection?.lastFailure ?? new McpLoginError(
        `logging in to MCP server "${config.name}" did not succeed: ` +
        `${status?.lastError ?? 'it did not start'}`,
        config.name,
      );
    }
    return {
      server: config.name,
      url: config.url,
      loggedIn: connection.logins > 0,
      tools: status.tools,
      authFile: options.authFile,
    };
  } finally {
    await servers.close();
  }
}

export interface McpLogoutOptions {
  config: McpConfig;
  server: string;
  /** Where tokens are kept (`mcpAuthFile` of the environment). */
  authFile: string;
}

/** How `logoutMcpServer` went. */
export interface McpLogoutResult {
  server: string;
  url: string;
  /** True when a token (or a registration) was kept for the server and is now removed. */
  removed: boolean;
  authFile: string;
}

/**
 * `claw mcp logout <name>` (MCP-8): removes what claw keeps for the server's URL (its tokens and
 * the client claw registered as) from `authFile`. Servers that share the URL share the login.
 *
 * @throws McpConfigError when there is no such server, or it is a command;
 *   McpAuthStoreError when the file cannot be read or written.
 */
export async function logoutMcpServer(options: McpLogoutOptions): Promise<McpLogoutResult> {
  const config = httpServer(options.config, options.server, 'log out of', { disabled: true });
  const removed = await new McpAuthStore({ file: options.authFile }).remove(config.url);
  return { server: config.name, url: config.url, removed, authFile: options.authFile };
}

function httpServer(
  config: McpConfig,
  name: string,
  action: string,
  allow: { disabled?: boolean } = {},
): McpHttpServerConfig {
  const { file } = config;
  const fail = (message: string): never => {
    throw new McpConfigError(message, { file, server: name });
  };
  const server = config.servers.find((candidate) => candidate.name === name);
  if (server === undefined) {
    const names = config.servers.map((candidate) => candidate.name);
    return fail(`there is no MCP server "${name}" in ${file}` +
      (names.length === 0 ? '' : `; its servers are: ${names.join(', ')}`));
  }
  if (server.transport !== 'http') {
    return fail(`MCP server "${name}" is a command that claw starts, not a "url" server: it ` +
      `takes its credentials from "env", and there is nothing to ${action}`);
  }
  if (!server.enabled && allow.disabled !== true) {
    return fail(`MCP server "${name}" is disabled ("enabled": false) in ${file}: enable it, ` +
      `then ${action} it`);
  }
  return server;
}
