import type { Readable } from 'node:stream';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { McpServerConfig } from './config.js';
import { descendantPids, isAlive, killAll, waitUntilGone } from './process-tree.js';
import { StderrTail } from './stderr-tail.js';

/** How long closing may wait for an HTTP server to delete its session. */
const terminateSessionMs = 2000;

/** A started SDK transport and what claw needs to close it completely. */
export interface OpenTransport {
  transport: StdioClientTransport | StreamableHTTPClientTransport;
  /** What a stdio server wrote to stderr lately ('' for HTTP). */
  stderr(): string;
  /** The child's pid (stdio, once started). */
  pid(): number | undefined;
  /** The session id an HTTP server gave (none for stdio, nor for a stateless server). */
  sessionId(): string | undefined;
  /**
   * Ends the connection for good: an HTTP session is deleted (DELETE, MCP-3), a child process
   * and everything it started (an `npx` launcher's children) are killed. Never rejects.
   */
  close(close: () => Promise<void>): Promise<void>;
}

/**
 * The SDK transport for a server: stdio (the child runs in the workspace with the SDK's minimal
 * environment plus the configured `env`; its stderr is kept, not shown) or Streamable HTTP with
 * the configured headers, and with `authProvider` (OAuth, MCP-8) when given: the SDK then sends
 * its access token, and logs in or refreshes through it when the server answers 401.
 */
export function createTransport(
  config: McpServerConfig,
  workDir: string,
  authProvider?: OAuthClientProvider,
): OpenTransport {
  if (config.transport === 'http') {
    const transport = new StreamableHTTPClientTransport(new URL(config.url), {
      requestInit: { headers: { ...config.headers } },
      ...(authProvider === undefined ? {} : { authProvider }),
    });
    return {
      transport,
      stderr: () => '',
      pid: () => undefined,
      sessionId: () => transport.sessionId,
      close: async (close) => {
        await boundedBy(transport.terminateSession().catch(() => undefined), terminateSessionMs);
        await close().catch(() => undefined);
      },
    };
  }
  const transport = new StdioClientTransport({
    command: config.command,
    args: [...config.args],
    env: { ...config.env },
    cwd: workDir,
    stderr: 'pipe',
  });
  const tail = new StderrTail(transport.stderr as Readable | null);
  let lastPid: number | undefined;
  return {
    transport,
    stderr: () => tail.lines(),
    pid: () => {
      lastPid = transport.pid ?? lastPid;
      return lastPid;
    },
    sessionId: () => undefined,
    close: async (close) => {
      // Only a child the SDK still holds: the pid of one that exited may belong to another now.
      const pid = transport.pid ?? undefined;
      // Found before the launcher goes: its children are re-parented once it has exited.
      const below = pid === undefined ? [] : await descendantPids(pid);
      // The SDK ends stdin, then sends SIGTERM, then SIGKILL to the child.
      await close().catch(() => undefined);
      const left = [...(pid !== undefined && isAlive(pid) ? [pid] : []), ...below.filter(isAlive)];
      killAll(left);
      // Gone before close() returns, so that nothing outlives claw when it exits right after.
      await waitUntilGone(left);
    },
  };
}

function boundedBy(promise: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}
