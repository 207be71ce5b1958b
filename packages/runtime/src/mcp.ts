import { access } from 'node:fs/promises';
import path from 'node:path';
import type {
  McpElicitationAnswer,
  McpElicitationRequest,
  McpServers,
  McpServerStatus,
  McpWarning,
  OpenMcpServersOptions,
  ReconnectPolicy,
} from '@claw/mcp';
import { linkAbortSignal, type SetTimer, type Tool } from '@claw/core';
import type { ToolSource } from '@claw/engine';
import { PerWorkspace } from './per-workspace.js';
import type { ElicitationQuestion, SessionApprovals } from './session-approvals.js';

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
  /**
   * How long a server's request for input (MCP-7) waits for an answer before claw declines it:
   * apps pass the time they give an approval. Default: `@claw/mcp`'s (5 minutes).
   */
  elicitationTimeoutMs?: number;
}

/** Asks a session's user for what a workspace's server wants (MCP-7), given which servers ask. */
export type WorkspaceElicitation = (
  request: McpElicitationRequest,
  servers: McpServers | undefined,
) => Promise<McpElicitationAnswer>;

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
   * @param elicitation asks for what a server wants (MCP-7); without it servers cannot ask.
   */
  constructor(
    private readonly options: McpOptions,
    private readonly env: Readonly<Record<string, string | undefined>>,
    private readonly trusted: (root: string) => Promise<boolean>,
    private readonly elicitation?: WorkspaceElicitation,
  ) {
    this.workspaces = new PerWorkspace(async (root) => {
      const { onWarning, setTimer, reconnect, elicitationTimeoutMs } = this.options;
      if (!(await this.trusted(root))) return undefined;
      const ask = this.elicitation;
      // Servers ask only once started, by which time `made.servers` is set.
      const made: { servers?: McpServers } = {};
      made.servers = await openIfConfigured({
        workDir: root,
        env: this.env,
        ...(setTimer === undefined ? {} : { setTimer }),
        ...(reconnect === undefined ? {} : { reconnect }),
        ...(onWarning === undefined ? {} : { onWarning: (warning) => onWarning(warning, root) }),
        ...(ask === undefined ? {} : { elicitation: (request) => ask(request, made.servers) }),
        ...(elicitationTimeoutMs === undefined ? {} : { elicitationTimeoutMs }),
      });
      return made.servers;
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

/** A session open here that servers' requests for input may go to (MCP-7). */
interface InputRoute {
  /** Its questions, once it is open. */
  approvals: () => SessionApprovals | undefined;
  /** The workspace's servers its tasks use. */
  workspace: McpServers | undefined;
  /** Its calls in flight, by server. */
  calls: Map<string, number>;
  /** Whether it runs a task. */
  busy: () => boolean;
}

/**
 * Where the requests for input of MCP servers go (MCP-7): to whoever answers the approvals of the
 * session that asked. A session's own servers ask that session. A workspace's servers are shared
 * by the sessions open on it, and a request does not say which call it is part of: it goes to the
 * sessions with a call to that server in flight (else to those running a task); when several
 * could answer, each is asked and the first answer wins. With no session, or none with anyone
 * who could answer, it is declined.
 */
export class ElicitationRoutes {
  private readonly routes = new Set<InputRoute>();

  /**
   * Sends a workspace's servers' requests to a session: returns the workspace's tools as its tasks
   * must see them (their calls counted) and the undo.
   */
  add(options: {
    approvals: () => SessionApprovals | undefined;
    workspace: McpServers | undefined;
    busy: () => boolean;
  }): { tools: ToolSource | undefined; remove: () => void } {
    const route: InputRoute = { ...options, calls: new Map() };
    this.routes.add(route);
    return {
      tools: options.workspace === undefined
        ? undefined
        : countedCalls(options.workspace, route.calls),
      remove: () => void this.routes.delete(route),
    };
  }

  /** A request of a workspace's servers (see the class). */
  ask(
    request: McpElicitationRequest,
    servers: McpServers | undefined,
  ): Promise<McpElicitationAnswer> {
    const mine = [...this.routes].filter(
      (route) => route.workspace === servers && route.approvals() !== undefined,
    );
    const calling = mine.filter((route) => (route.calls.get(request.server) ?? 0) > 0);
    const chosen = calling.length > 0 ? calling : mine.filter((route) => route.busy());
    const sessions = chosen.map((route) => route.approvals()!);
    const able = sessions.filter((approvals) => approvals.canElicit());
    // Nobody to ask: the first of them says so in its events (and declines).
    const asked = able.length > 0 ? able : sessions.slice(0, 1);
    if (asked.length === 0) return Promise.resolve({ action: 'decline' });
    return askSessions(request, asked);
  }
}

/** Asks one session (a session's own servers) for what a server wants (MCP-7). */
export function askSession(
  request: McpElicitationRequest,
  approvals: SessionApprovals,
): Promise<McpElicitationAnswer> {
  return askSessions(request, [approvals]);
}

async function askSessions(
  request: McpElicitationRequest,
  sessions: readonly SessionApprovals[],
): Promise<McpElicitationAnswer> {
  const { validateElicitationContent } = await import('@claw/mcp');
  const question: ElicitationQuestion = {
    server: request.server,
    message: request.message,
    requestedSchema: request.requestedSchema,
    validate: (content) => validateElicitationContent(request.requestedSchema, content),
  };
  if (sessions.length === 1) return sessions[0]!.elicit(question, request.signal);
  // Several sessions are asked: the first answer wins and the others' questions are withdrawn.
  const settled = new AbortController();
  const link = linkAbortSignal(request.signal, settled.signal);
  try {
    return await Promise.any(sessions.map((approvals) => approvals.elicit(question, link.signal)));
  } catch (error) {
    throw error instanceof AggregateError ? (error.errors[0] as Error) : error;
  } finally {
    settled.abort(new Error('another session answered'));
    link.dispose();
  }
}

/** The workspace's tools, each call counted by server while it runs. */
function countedCalls(servers: McpServers, calls: Map<string, number>): ToolSource {
  return {
    names: () => servers.names(),
    definitions: () => servers.definitions(),
    get: (name) => {
      const tool = servers.get(name);
      if (tool === undefined) return undefined;
      const server = servers.status().find((status) => status.tools.includes(name))?.name;
      if (server === undefined) return tool;
      const counted: Tool = {
        definition: tool.definition,
        risk: tool.risk,
        ...(tool.readOnly === undefined ? {} : { readOnly: tool.readOnly }),
        ...(tool.parseArguments === undefined
          ? {}
          : { parseArguments: (args: unknown) => tool.parseArguments!(args) }),
        execute: async (args, context) => {
          calls.set(server, (calls.get(server) ?? 0) + 1);
          try {
            return await tool.execute(args, context);
          } finally {
            const left = (calls.get(server) ?? 1) - 1;
            if (left > 0) calls.set(server, left);
            else calls.delete(server);
          }
        },
      };
      return counted;
    },
  };
}
