import { access } from 'node:fs/promises';
import path from 'node:path';
import type {
  McpServers,
  McpServerStatus,
  McpWarning,
  OpenMcpServersOptions,
  ReconnectPolicy,
  SetTimer,
} from '@claw/mcp';
import { PerWorkspace } from './per-workspace.js';

/**
 * `@claw/mcp` (the MCP SDK, its schemas and JSON Schema validator) is loaded only for a workspace
 * that has `.claw/mcp.json`: claw starts as fast without MCP as before (PERF-2).
 */
async function openIfConfigured(options: OpenMcpServersOptions): Promise<McpServers | undefined> {
  // The file @claw/mcp reads (its `mcpConfigFile`); a missing one means no MCP.
  const file = path.join(options.workDir, '.claw', 'mcp.json');
  const exists = await access(file).then(() => true, () => false);
  if (!exists) return undefined;
  const { openMcpServers } = await import('@claw/mcp');
  return openMcpServers(options);
}

/** How a factory runs the MCP servers of its workspaces (`<workDir>/.claw/mcp.json`). */
export interface McpOptions {
  /**
   * Told when a server is skipped (with why and how to fix it), drops, comes back or is given up
   * on. Default: nobody (the state is still in `claw mcp list`).
   */
  onWarning?: (warning: McpWarning, workDir: string) => void;
  /** Timers of start-up and call timeouts and of reconnect backoff (tests drive them). */
  setTimer?: SetTimer;
  reconnect?: Partial<ReconnectPolicy>;
  /** False: no MCP servers at all, whatever the workspaces configure. Default true. */
  enabled?: boolean;
}

/**
 * The MCP servers of each workspace, opened once per factory (MCP-4: shared by every runtime of
 * the process) and started lazily, all servers of a workspace in parallel. The file is read once
 * per factory (a file added or changed later counts from the next start of claw), except that a
 * configuration that cannot be loaded is not kept: fixing it and opening a runtime again reads it
 * anew.
 */
export class WorkspaceMcp {
  private readonly workspaces: PerWorkspace<McpServers | undefined>;
  private closing: Promise<void> | undefined;

  /**
   * @param trusted whether a workspace's settings files may be used (TRUST-2): the servers of an
   *   untrusted one are never started, and no `${VAR}` is filled for them.
   */
  constructor(
    private readonly options: McpOptions,
    private readonly env: Readonly<Record<string, string | undefined>>,
    private readonly trusted: (root: string) => Promise<boolean>,
  ) {
    this.workspaces = new PerWorkspace(async (root) => {
      const { onWarning, setTimer, reconnect } = this.options;
      if (!(await this.trusted(root))) return undefined;
      return openIfConfigured({
        workDir: root,
        env: this.env,
        ...(setTimer === undefined ? {} : { setTimer }),
        ...(reconnect === undefined ? {} : { reconnect }),
        ...(onWarning === undefined ? {} : { onWarning: (warning) => onWarning(warning, root) }),
      });
    });
  }

  /**
   * The workspace's servers, starting (not waited for); `undefined` without `.claw/mcp.json` or
   * when the workspace is not trusted.
   *
   * @throws McpConfigError when the file cannot be used.
   */
  async servers(workDir: string): Promise<McpServers | undefined> {
    if (this.options.enabled === false || this.closing !== undefined) return undefined;
    const servers = await this.workspaces.get(workDir);
    servers?.start();
    return servers;
  }

  /** Closes the servers of every workspace (HTTP sessions deleted, children killed). */
  close(): Promise<void> {
    this.closing ??= Promise.allSettled(
      this.workspaces.all().map(async (opening) => (await opening)?.close()),
    ).then(() => undefined);
    return this.closing;
  }
}

/** What `claw mcp list` shows: the configuration file and each server's state. */
export interface McpListing {
  file: string;
  servers: McpServerStatus[];
}

/**
 * Starts the MCP servers of a workspace, waits until each is ready or has failed, and returns
 * their state, then closes them (`claw mcp list`). `undefined` when the workspace has no
 * `.claw/mcp.json`.
 *
 * @throws McpConfigError when the file cannot be used; the signal's reason when it aborts.
 */
export async function inspectMcpServers(options: {
  workDir: string;
  env: Readonly<Record<string, string | undefined>>;
  onWarning?: (warning: McpWarning) => void;
  signal?: AbortSignal;
}): Promise<McpListing | undefined> {
  const servers = await openIfConfigured({
    workDir: path.resolve(options.workDir),
    env: options.env,
    ...(options.onWarning === undefined ? {} : { onWarning: options.onWarning }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  if (servers === undefined) return undefined;
  try {
    await servers.ready(options.signal === undefined ? {} : { signal: options.signal });
    return { file: servers.config.file, servers: servers.status() };
  } finally {
    await servers.close();
  }
}
