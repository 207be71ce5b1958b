import { ClawError } from '@claw/core';

/**
 * `.claw/mcp.json` cannot be used: not JSON, a server that breaks the rules, or a `${VAR}` that is
 * not set. The user fixes it (`userError`), so `claw` exits 2. Code `mcp_config_invalid`.
 */
export class McpConfigError extends ClawError {
  /** The file that was read. */
  readonly file: string;
  /** The server the problem is in, when it is in one. */
  readonly server: string | undefined;

  constructor(message: string, options: { file: string; server?: string; cause?: unknown }) {
    super(message, { code: 'mcp_config_invalid', cause: options.cause, userError: true });
    this.file = options.file;
    this.server = options.server;
  }
}

/** Something went wrong with one MCP server; `server` names it as `.claw/mcp.json` does. */
export class McpServerError extends ClawError {
  readonly server: string;

  constructor(message: string, options: { code: string; server: string; cause?: unknown }) {
    super(message, { code: options.code, cause: options.cause });
    this.server = options.server;
  }
}

/** The server refused claw's credentials (HTTP 401 or 403). Code `mcp_auth_failed`. */
export class McpAuthError extends McpServerError {
  /** The HTTP status: 401 or 403. */
  readonly status: number;

  /**
   * @param options.oauth the credentials were OAuth tokens claw got by logging in (MCP-8): the
   *   message says to log in again instead of pointing at `headers`.
   */
  constructor(server: string, status: number, cause?: unknown, options: { oauth?: boolean } = {}) {
    const refused = `MCP server "${server}" refused claw's credentials (HTTP ${status} ` +
      `${status === 401 ? 'Unauthorized' : 'Forbidden'})`;
    super(
      options.oauth === true
        ? `${refused} although claw logged in to it with OAuth: run \`${loginCommand(server)}\` ` +
        'to log in again (with an account that may use it), then start claw again'
        : `${refused}: check the "headers" of "${server}" in .claw/mcp.json (e.g. ` +
          '"Authorization": "Bearer ${TOKEN}") and that the token in the environment variable is ' +
          'valid, or set "auth": "oauth" if the server logs users in with OAuth; then start claw ' +
          'again',
      { code: 'mcp_auth_failed', server, cause },
    );
    this.status = status;
  }
}

/**
 * The server wants the user to log in (OAuth, MCP-8) and claw may not ask here: no token is kept
 * for it, or the one kept has expired and could not be refreshed. Servers, `-p` and the REPL never
 * open a browser; the user runs {@link McpNeedsLoginError.command}. Code `mcp_needs_login`.
 */
export class McpNeedsLoginError extends McpServerError {
  /** What the user runs to log in: `claw mcp login <server>`. */
  readonly command: string;
  /** A token was kept, but it expired and could not be refreshed. */
  readonly expired: boolean;

  /**
   * @param options.expired a token was kept, but it expired and could not be refreshed.
   * @param options.during `start` (default, said to the user): the server is skipped until claw
   *   starts again; `call` (the failed tool call's result, read by the model): the next call uses
   *   the new token as soon as there is one, and the model is told to ask the user for the login
   *   rather than run the command itself (it waits for a browser).
   */
  constructor(
    server: string,
    options: { expired?: boolean; during?: 'start' | 'call'; cause?: unknown } = {},
  ) {
    const command = loginCommand(server);
    const again = options.expired === true
      ? ' again (the token claw kept for it has expired and could not be refreshed)'
      : '';
    super(
      options.during === 'call'
        ? `MCP server "${server}" needs the user to log in${again}: ask them to run ` +
        `\`${command}\` in a terminal in this workspace (it opens their browser, so do not run ` +
        'it yourself), then try the call again'
        : `MCP server "${server}" needs you to log in${again}: run \`${command}\` in this ` +
          'workspace, then start claw again',
      { code: 'mcp_needs_login', server, cause: options.cause },
    );
    this.command = command;
    this.expired = options.expired === true;
  }
}

/**
 * Logging in to a server (OAuth, MCP-8) did not finish: nobody came back from the browser in
 * time, the authorization server refused, or the code could not be exchanged for a token. Code
 * `mcp_login_failed`.
 */
export class McpLoginError extends McpServerError {
  constructor(message: string, server: string, cause?: unknown) {
    super(message, { code: 'mcp_login_failed', server, cause });
  }
}

/**
 * Where OAuth tokens are kept (`mcp-auth.json`) cannot be read or written. Code
 * `mcp_auth_store_failed`; a file that is not claw's is the user's to fix (`userError`).
 */
export class McpAuthStoreError extends ClawError {
  readonly file: string;

  constructor(message: string, options: { file: string; cause?: unknown; userError?: boolean }) {
    super(message, {
      code: 'mcp_auth_store_failed',
      cause: options.cause,
      userError: options.userError === true,
    });
    this.file = options.file;
  }
}

/** The command that logs in to a server: `claw mcp login <name>`, the name quoted for a shell. */
export function loginCommand(server: string): string {
  return `claw mcp login ${shellWord(server)}`;
}

function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/** The server did not start or answer within its time. Code `mcp_timeout`. */
export class McpTimeoutError extends McpServerError {
  constructor(server: string, what: 'start-up' | 'call', ms: number, hint: string) {
    super(
      `MCP server "${server}" did not ${what === 'start-up' ? 'start up' : 'answer the call'} ` +
      `within ${ms} ms; ${hint}`,
      { code: 'mcp_timeout', server },
    );
  }
}

/** The server could not be started or reached. Code `mcp_start_failed`. */
export class McpStartError extends McpServerError {
  constructor(message: string, server: string, cause?: unknown) {
    super(message, { code: 'mcp_start_failed', server, cause });
  }
}

/**
 * A call was made while the server is not connected (it dropped and claw is reconnecting, it
 * failed, or the connections were closed), or the connection was lost during the call. Code
 * `mcp_unavailable`.
 */
export class McpUnavailableError extends McpServerError {
  constructor(message: string, server: string, cause?: unknown) {
    super(message, { code: 'mcp_unavailable', server, cause });
  }
}

/** The server answered a request with a JSON-RPC error. Code `mcp_request_failed`. */
export class McpRequestError extends McpServerError {
  /** The JSON-RPC error code, when the server sent one. */
  readonly rpcCode: number | undefined;

  constructor(message: string, server: string, rpcCode: number | undefined, cause?: unknown) {
    super(message, { code: 'mcp_request_failed', server, cause });
    this.rpcCode = rpcCode;
  }
}
