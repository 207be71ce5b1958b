import {
  defaultMaxOutputBytes,
  Listeners,
  raceAbort,
  type Tool,
  type ToolDefinition,
} from '@claw/core';
import packageJson from '../package.json' with { type: 'json' };
import { McpAuthStore, mcpAuthFile } from './auth-store.js';
import { loadMcpConfig, type McpConfig } from './config.js';
import {
  McpConnection,
  defaultReconnectPolicy,
  type McpServerState,
  type McpWarning,
  type ReconnectPolicy,
} from './connection.js';
import type { McpElicitationHandler } from './elicitation.js';
import { assignToolNames } from './names.js';
import type { McpOAuthOptions } from './oauth-provider.js';
import { workspaceRoot, type McpRoot } from './roots.js';
import { defaultSetTimer, type SetTimer } from './timers.js';
import { connectionTools } from './tools.js';

export interface McpServersOptions {
  config: McpConfig;
  /**
   * The workspace: stdio servers run in it, and it is the root every server is told about
   * (MCP-9, `roots/list`; see `setWorkspace`).
   */
  workDir: string;
  /** What claw tells servers it is (default: `claw` and this package's version). */
  clientInfo?: { name: string; version: string };
  /** Bytes of output kept per call, start and end (default: bash's, 64 KiB). */
  maxOutputBytes?: number;
  /** Timers of start-up and call timeouts and of reconnect backoff (default: `setTimeout`). */
  setTimer?: SetTimer;
  reconnect?: Partial<ReconnectPolicy>;
  /**
   * Told when a server is skipped, drops, comes back or gives up, or when a request for input
   * could not be answered (default: nobody).
   */
  onWarning?: (warning: McpWarning) => void;
  /**
   * Asks the user when a server wants input (MCP-7, `elicitation/create` in form mode): give it
   * to whoever answers approvals. With it claw declares the `elicitation` capability (form mode,
   * `applyDefaults`); without it claw declares none, and servers cannot ask. Answers are checked
   * against the requested schema before they are sent (see `validateElicitationContent`).
   */
  elicitation?: McpElicitationHandler;
  /**
   * How long a request for input waits for `elicitation` to answer before claw answers `decline`
   * (default 5 minutes; apps pass their approval timeout).
   */
  elicitationTimeoutMs?: number;
  /**
   * OAuth for `url` servers (MCP-8): where tokens are kept (`authFile`; `openMcpServers` finds
   * it from the environment) and whether the user may be asked to log in (`interactive`, with
   * `openUrl`). Default: not interactive, so a server that wants a login is `needs_login`, with
   * an error naming `claw mcp login <name>`; nothing opens a browser.
   */
  oauth?: McpOAuthOptions;
}

/** One server as `claw mcp list` shows it. */
export interface McpServerStatus {
  name: string;
  transport: 'stdio' | 'http';
  state: McpServerState;
  /** The names of its tools as claw registers them (`mcp_<server>_<tool>`). */
  tools: string[];
  /** Why it failed or dropped last (kept after it reconnected). */
  lastError?: string;
  /** While reconnecting: attempts made so far. */
  reconnectAttempt?: number;
  /** A stdio server's process, while it runs. */
  pid?: number;
}

/**
 * The MCP servers of one workspace (MCP-2..5), as claw tools. Servers start in parallel on
 * `start()` (or the first `ready()`); one that fails is skipped with a warning while the others
 * work. It is a tool source the engine reads on every model call (`get`, `names`,
 * `definitions`): tools that servers add or remove, and those of a server that comes back, are
 * seen by the next call. `close()` deletes HTTP sessions and kills stdio servers.
 */
export class McpServers {
  readonly config: McpConfig;
  private readonly connections: McpConnection[];
  private readonly maxOutputBytes: number;
  private readonly listeners = new Listeners<void>();
  private current: Map<string, { tool: Tool; server: string }> | undefined;
  private starting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private root: McpRoot;

  constructor(options: McpServersOptions) {
    this.config = options.config;
    this.root = workspaceRoot(options.workDir);
    this.maxOutputBytes = options.maxOutputBytes ?? defaultMaxOutputBytes;
    const reconnect = { ...defaultReconnectPolicy, ...options.reconnect };
    const onWarning = options.onWarning ?? (() => undefined);
    // One store for every server: its writes are made one after the other.
    const authStore = new McpAuthStore({ file: options.oauth?.authFile });
    this.connections = options.config.servers.map((config) => new McpConnection({
      config,
      workDir: options.workDir,
      file: options.config.file,
      clientInfo: options.clientInfo ?? { name: 'claw', version: packageJson.version },
      setTimer: options.setTimer ?? defaultSetTimer,
      reconnect,
      onChange: () => this.changed(),
      onWarning: (warning) => {
        try {
          onWarning(warning);
        } catch {
          // Whoever shows warnings must not break the connection.
        }
      },
      roots: () => [this.root],
      ...(options.elicitation === undefined ? {} : { elicitation: options.elicitation }),
      ...(options.elicitationTimeoutMs === undefined
        ? {}
        : { elicitationTimeoutMs: options.elicitationTimeoutMs }),
      ...(options.oauth === undefined ? {} : { oauth: options.oauth }),
      authStore,
    }));
  }

  /** The roots servers are told about: the workspace's folder as a `file://` URI (MCP-9). */
  roots(): McpRoot[] {
    return [this.root];
  }

  /**
   * The workspace moved to `workDir`: it is the root servers are told about from now on, and each
   * connected server gets `notifications/roots/list_changed` (so it asks again). Stdio servers
   * still run, and restart, in the first `workDir`. Resolves once the servers were told.
   */
  async setWorkspace(workDir: string): Promise<void> {
    const root = workspaceRoot(workDir);
    if (root.uri === this.root.uri) return;
    this.root = root;
    await Promise.all(this.connections.map((connection) => connection.rootsChanged()));
  }

  /** Starts every enabled server, in parallel, once. Returns at once. */
  start(): void {
    if (this.closing !== undefined) return;
    this.starting ??= Promise.all(this.connections.map((connection) => connection.start()))
      .then(() => undefined);
  }

  /**
   * Starts the servers (if not yet) and resolves once each is ready or has failed (each within
   * its `startupTimeoutMs`). Never rejects, except with the signal's reason when it aborts.
   */
  async ready(options: { signal?: AbortSignal } = {}): Promise<void> {
    this.start();
    await raceAbort(this.starting ?? Promise.resolve(), options.signal);
  }

  /** The current tool of that name, if any. */
  get(name: string): Tool | undefined {
    return this.tools().get(name)?.tool;
  }

  /** The names of the current tools, server by server in the order of the configuration. */
  names(): string[] {
    return [...this.tools().keys()];
  }

  definitions(): ToolDefinition[] {
    return [...this.tools().values()].map((entry) => entry.tool.definition);
  }

  /** The current tools. */
  list(): Tool[] {
    return [...this.tools().values()].map((entry) => entry.tool);
  }

  /** Each configured server: its state, tools, last error. */
  status(): McpServerStatus[] {
    const byServer = new Map<string, string[]>();
    for (const [name, entry] of this.tools()) {
      const list = byServer.get(entry.server) ?? [];
      list.push(name);
      byServer.set(entry.server, list);
    }
    return this.connections.map((connection) => {
      const { pid, lastError, reconnectAttempt } = connection;
      return {
        name: connection.name,
        transport: connection.config.transport,
        state: connection.state,
        tools: byServer.get(connection.name) ?? [],
        ...(lastError === undefined ? {} : { lastError }),
        ...(reconnectAttempt === 0 ? {} : { reconnectAttempt }),
        ...(pid === undefined ? {} : { pid }),
      };
    });
  }

  /** The connection of the server of that name, if it is configured. */
  connection(name: string): McpConnection | undefined {
    return this.connections.find((connection) => connection.name === name);
  }

  /** Calls `listener` whenever tools or states change; returns the function that stops it. */
  onChange(listener: () => void): () => void {
    return this.listeners.add(listener);
  }

  /** Closes every server (HTTP sessions deleted, child processes killed). Idempotent. */
  close(): Promise<void> {
    this.closing ??= Promise.allSettled(this.connections.map((connection) => connection.close()))
      .then(() => undefined);
    return this.closing;
  }

  private tools(): Map<string, { tool: Tool; server: string }> {
    if (this.current !== undefined) return this.current;
    const entries = this.connections.flatMap((connection) =>
      connectionTools(connection, { maxOutputBytes: this.maxOutputBytes }));
    const names = assignToolNames(entries);
    const tools = new Map<string, { tool: Tool; server: string }>();
    entries.forEach((entry, index) => {
      const name = names[index] as string;
      tools.set(name, { tool: entry.build(name), server: entry.server });
    });
    this.current = tools;
    return tools;
  }

  private changed(): void {
    this.current = undefined;
    this.listeners.emit();
  }
}

export interface OpenMcpServersOptions extends Omit<McpServersOptions, 'config'> {
  /**
   * Where `${VAR}` in the configuration is looked up, and where OAuth tokens are kept
   * (`XDG_STATE_HOME`, `HOME`: see `mcpAuthFile`) unless `oauth.authFile` says.
   */
  env: Readonly<Record<string, string | undefined>>;
  signal?: AbortSignal;
}

/**
 * The MCP servers of a workspace from its `.claw/mcp.json`, not started yet; `undefined` when the
 * file does not exist. OAuth tokens are kept in the user's `mcp-auth.json` (`mcpAuthFile`).
 *
 * @throws McpConfigError when the file cannot be used (see `parseMcpConfig`).
 */
export async function openMcpServers(
  options: OpenMcpServersOptions,
): Promise<McpServers | undefined> {
  const { env, signal, ...rest } = options;
  const config = await loadMcpConfig({
    workDir: options.workDir,
    env,
    ...(signal === undefined ? {} : { signal }),
  });
  if (config === undefined) return undefined;
  const authFile = options.oauth?.authFile ?? mcpAuthFile(env);
  return new McpServers({
    ...rest,
    config,
    oauth: { ...options.oauth, ...(authFile === undefined ? {} : { authFile }) },
  });
}
