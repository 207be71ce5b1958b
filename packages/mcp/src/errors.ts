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

  constructor(server: string, status: number, cause?: unknown) {
    super(
      `MCP server "${server}" refused claw's credentials (HTTP ${status} ` +
      `${status === 401 ? 'Unauthorized' : 'Forbidden'}): check the "headers" of "${server}" ` +
      'in .claw/mcp.json (e.g. "Authorization": "Bearer ${TOKEN}") and that the token in the ' +
      'environment variable is valid, then start claw again',
      { code: 'mcp_auth_failed', server, cause },
    );
    this.status = status;
  }
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
