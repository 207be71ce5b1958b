import {
  abortReason,
  causeChain,
  errnoCode,
  errorMessage,
  findError,
  linkAbortSignal,
  raceAbort,
  throwIfAborted,
  type ToolProgress,
} from '@claw/core';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  McpError,
  ProgressNotificationSchema,
  PromptListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type ClientCapabilities,
  type GetPromptResult,
  type Prompt,
  type ReadResourceResult,
  type Resource,
  type Tool as RemoteTool,
} from '@modelcontextprotocol/sdk/types.js';
import { McpAuthStore } from './auth-store.js';
import { isAuthorizationHeader, maxTimerMs, type McpServerConfig } from './config.js';
import {
  defaultElicitationTimeoutMs,
  elicitationRequestHandler,
  type McpElicitationHandler,
} from './elicitation.js';
import {
  loginCommand,
  McpAuthError,
  McpAuthStoreError,
  McpLoginError,
  McpNeedsLoginError,
  McpRequestError,
  McpStartError,
  McpTimeoutError,
  McpUnavailableError,
} from './errors.js';
import {
  ClawOAuthProvider,
  defaultAuthorizationTimeoutMs,
  type McpOAuthOptions,
  type PendingAuthorization,
} from './oauth-provider.js';
import { listAllPages } from './pages.js';
import { workspaceRoot, type McpRoot } from './roots.js';
import type { SetTimer } from './timers.js';
import { createTransport, type OpenTransport } from './transports.js';

/**
 * Where a server is: `idle` (not started yet), `starting`, `ready`, `reconnecting` (it dropped;
 * claw tries again with backoff), `failed` (it did not start, or could not be reconnected),
 * `needs_login` (it wants an OAuth login and claw may not ask here: its error names
 * `claw mcp login <name>`), `disabled` (`"enabled": false`) or `closed`.
 */
export type McpServerState =
  | 'idle'
  | 'starting'
  | 'ready'
  | 'reconnecting'
  | 'failed'
  | 'needs_login'
  | 'disabled'
  | 'closed';

/** Something the user should know about a server: which one, what happened, what to do. */
export interface McpWarning {
  server: string;
  /** `mcp_server_skipped`, `mcp_server_disconnected`, `mcp_server_reconnected`, … */
  code: string;
  message: string;
}

/** How a dropped server is reconnected: delays double from the first to the largest. */
export interface ReconnectPolicy {
  /** Delay before the first attempt (default 1,000 ms). */
  initialDelayMs: number;
  /** The longest delay (default 30,000 ms). */
  maxDelayMs: number;
  /** Attempts before giving up (default 8); the server is then `failed`. */
  maxAttempts: number;
}

export const defaultReconnectPolicy: ReconnectPolicy = {
  initialDelayMs: 1000,
  maxDelayMs: 30_000,
  maxAttempts: 8,
};

/** What a call is given: the caller's signal, and where progress goes. */
export interface McpCallContext {
  signal?: AbortSignal;
  onProgress?: (progress: ToolProgress) => void;
}

export interface McpConnectionOptions {
  config: McpServerConfig;
  /** Where stdio servers run (their working directory). */
  workDir: string;
  /** The configuration file, for messages. */
  file: string;
  clientInfo: { name: string; version: string };
  setTimer: SetTimer;
  reconnect: ReconnectPolicy;
  /** The server's tools, prompts, resources or state changed. */
  onChange: () => void;
  onWarning: (warning: McpWarning) => void;
  /** The roots the server is told about, read when it asks (MCP-9; default: `workDir`'s). */
  roots?: () => readonly McpRoot[];
  /**
   * Answers the server's requests for input (MCP-7). Without it claw does not declare the
   * `elicitation` capability, and such a request gets "method not found".
   */
  elicitation?: McpElicitationHandler;
  /** How long a request for input waits before claw declines it (default 5 minutes). */
  elicitationTimeoutMs?: number;
  /** OAuth for a `url` server (MCP-8): whether the user may be asked, where tokens are kept. */
  oauth?: McpOAuthOptions;
  /** Where tokens are kept (one store for all servers of an `McpServers`; default: a new one). */
  authStore?: McpAuthStore;
}

/** One connection to a server, as long as it lasts. */
interface Live {
  client: Client;
  transport: OpenTransport;
  tools: RemoteTool[];
  prompts: Prompt[];
  resources: boolean;
  /** It is the connection in use (not one still starting). */
  adopted: boolean;
  /** It is being closed, or was lost: nothing more is done with it. */
  ending: boolean;
  /** A list change came while it was starting: list again before using it. */
  changedWhileStarting: boolean;
  relisting: Promise<void> | undefined;
  relistAgain: boolean;
  /** Where the progress of the calls under way goes, by progress token. */
  progress: Map<string | number, (progress: ToolProgress) => void>;
  /** The roots change it was last told about (see `rootsChanged`). */
  rootsVersion: number;
}

/**
 * One MCP server (MCP-2..5): started lazily, its tools listed (every page), kept current when it
 * says they changed, reconnected with backoff when it drops, and closed for good by `close()`
 * (HTTP session deleted, child processes killed). Calls return at once when their signal aborts
 * (the server is told with `notifications/cancelled`), and time out after the server's
 * `callTimeoutMs`.
 */
export class McpConnection {
  readonly config: McpServerConfig;
  private readonly options: McpConnectionOptions;
  private currentState: McpServerState;
  private error: string | undefined;
  private attempt = 0;
  private live: Live | undefined;
  private remoteTools: readonly RemoteTool[] = [];
  private remotePrompts: readonly Prompt[] = [];
  private offersResources = false;
  private started: Promise<void> | undefined;
  private progressTokens = 0;
  private cancelReconnect: (() => void) | undefined;
  private readonly lifetime = new AbortController();
  private readonly pending = new Set<Promise<unknown>>();
  /** Connections that finished initializing and are not closed: those told of new roots. */
  private readonly initialized = new Set<Live>();
  private rootsVersion = 0;
  /** Requests for input (elicitation) not answered yet; calls that ran out of time meanwhile. */
  private asking = 0;
  private readonly afterAsking = new Set<() => void>();
  /** OAuth (MCP-8), for a `url` server that is configured for it or may turn out to use it. */
  private readonly oauth: ClawOAuthProvider | undefined;
  private failure: Error | undefined;

  constructor(options: McpConnectionOptions) {
    this.options = options;
    this.config = options.config;
    this.currentState = options.config.enabled ? 'idle' : 'disabled';
    this.oauth = createOAuthProvider(options);
  }

  get name(): string {
    return this.config.name;
  }

  get state(): McpServerState {
    return this.currentState;
  }

  /** The last error: why it failed, dropped, or why the last reconnect attempt did not work. */
  get lastError(): string | undefined {
    return this.error;
  }

  /** Why it did not start or was given up on (`failed`, `needs_login`), as an error. */
  get lastFailure(): Error | undefined {
    return this.failure;
  }

  /** Logins (OAuth) finished by this connection: the user came back from the browser. */
  get logins(): number {
    return this.oauth?.logins ?? 0;
  }

  /** Answers from the browser refused because their `state` was not one claw was waiting for. */
  get refusedLoginAnswers(): number {
    return this.oauth?.refusedAnswers ?? 0;
  }

  /** Reconnect attempts made since the server dropped (0 when it is not reconnecting). */
  get reconnectAttempt(): number {
    return this.currentState === 'reconnecting' ? this.attempt : 0;
  }

  /** The server's tools as last listed (kept while it reconnects, so calls get a clear error). */
  get tools(): readonly RemoteTool[] {
    return this.remoteTools;
  }

  get prompts(): readonly Prompt[] {
    return this.remotePrompts;
  }

  /** True when the server offers resources. */
  get resources(): boolean {
    return this.offersResources;
  }

  /** The pid of a stdio server's process while it runs. */
  get pid(): number | undefined {
    return this.live?.transport.pid();
  }

  /**
   * Starts the server once (later calls return the same promise): resolves when it is ready or
   * has failed (then it is skipped with a warning saying why and how to fix it). Never rejects.
   */
  start(): Promise<void> {
    if (this.currentState !== 'idle') return this.started ?? Promise.resolve();
    this.started = this.firstStart();
    return this.started;
  }

  /**
   * Calls a tool. Progress notifications go to `onProgress`. Tools the server says changed
   * during the call are listed again before this returns, so the next model call sees them.
   *
   * @throws the signal's reason when it aborts (at once; the server is told asynchronously);
   *   McpTimeoutError after `callTimeoutMs`; McpUnavailableError when the server is not
   *   connected or dropped during the call; McpAuthError; McpRequestError for a JSON-RPC error.
   */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    context: McpCallContext = {},
  ): Promise<CallToolResult> {
    const { onProgress } = context;
    return this.request(context, `call of ${name}`, async (live, options) => {
      // Progress goes through claw's own token, not the SDK's `onprogress`: the SDK drops its
      // handler when the result arrives, before a last notification sent just ahead of the
      // result has been handled.
      const token = onProgress === undefined ? undefined : `claw-${(this.progressTokens += 1)}`;
      if (token !== undefined && onProgress !== undefined) live.progress.set(token, onProgress);
      try {
        const result = await live.client.callTool(
          {
            name,
            arguments: args,
            ...(token === undefined ? {} : { _meta: { progressToken: token } }),
          },
          undefined,
          options,
        );
        // Notifications sent before the result (progress, tools/list_changed) are handled…
        await new Promise((resolve) => setImmediate(resolve));
        // …and a new tool list is in before the caller goes on (MCP-5).
        await live.relisting;
        if ('toolResult' in result) {
          return { content: [{ type: 'text', text: JSON.stringify(result.toolResult) }] };
        }
        return result;
      } finally {
        if (token !== undefined) live.progress.delete(token);
      }
    });
  }

  /** Every resource the server lists (all pages). Throws as `callTool`. */
  listResources(context: McpCallContext = {}): Promise<Resource[]> {
    return this.request(context, 'resource listing', (live, options) =>
      listAllPages(async (cursor) => {
        const params = cursor === undefined ? {} : { cursor };
        const page = await live.client.listResources(params, options);
        return { items: page.resources, nextCursor: page.nextCursor };
      }));
  }

  /** Reads one resource. Throws as `callTool`. */
  readResource(uri: string, context: McpCallContext = {}): Promise<ReadResourceResult> {
    return this.request(context, `read of ${uri}`, (live, options) =>
      live.client.readResource({ uri }, options));
  }

  /** Gets a prompt with its arguments filled in. Throws as `callTool`. */
  getPrompt(
    name: string,
    args: Record<string, string>,
    context: McpCallContext = {},
  ): Promise<GetPromptResult> {
    return this.request(context, `prompt ${name}`, (live, options) =>
      live.client.getPrompt({ name, arguments: args }, options));
  }

  /**
   * Tells the server that the roots changed (`notifications/roots/list_changed`), so that it asks
   * for them again; a connection still starting is told once it is initialized. Never rejects (a
   * connection that is lost meanwhile is reconnected as usual, and asks anew).
   */
  async rootsChanged(): Promise<void> {
    this.rootsVersion += 1;
    await Promise.all([...this.initialized].map((live) => this.tellRootsChanged(live)));
  }

  /**
   * Closes the connection for good: a start or reconnect under way is stopped, the HTTP session
   * deleted, the child process (and what it started) killed. Idempotent.
   */
  async close(): Promise<void> {
    if (this.currentState !== 'closed') {
      this.setState('closed');
      this.cancelReconnect?.();
      this.cancelReconnect = undefined;
      this.lifetime.abort(new McpUnavailableError('the MCP connections were closed', this.name));
      const live = this.live;
      this.live = undefined;
      if (live !== undefined) void this.dispose(live);
    }
    // Starts under way end (and close what they made) once they see the abort.
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
    await this.oauth?.close();
  }

  private async firstStart(): Promise<void> {
    this.setState('starting');
    try {
      this.adopt(await this.open());
    } catch (error) {
      if (this.currentState === 'closed') return;
      this.error = errorMessage(error);
      this.failure = error instanceof Error ? error : new Error(this.error);
      if (error instanceof McpNeedsLoginError) {
        this.setState('needs_login');
        this.warn('mcp_server_needs_login', `${this.error} (claw goes on without its tools)`);
        return;
      }
      this.setState('failed');
      this.warn('mcp_server_skipped', `${this.error} (claw goes on without this server's tools)`);
    }
  }

  /** A new connection, initialized and with its tools (and prompts) listed. */
  private open(): Promise<Live> {
    const opening = this.openAuthorized();
    this.track(opening);
    return opening;
  }

  /**
   * Opens a connection; when the server wants a login and the user may be asked (interactive
   * OAuth), has them log in and opens it once more. A second demand is a failure, not a loop.
   */
  private async openAuthorized(): Promise<Live> {
    await this.oauth?.prepare();
    try {
      return await this.openConnection(false);
    } catch (error) {
      if (!(error instanceof LoginWanted)) throw error;
      try {
        await this.logIn(error.pending, error.transport, this.lifetime.signal);
      } catch (failure) {
        throw this.lifetime.signal.aborted ? abortReason(this.lifetime.signal) : failure;
      }
      return await this.openConnection(true);
    }
  }

  private async openConnection(loggedIn: boolean): Promise<Live> {
    const { config } = this;
    const startup = new AbortController();
    const cancelTimer = this.options.setTimer(() => startup.abort(new McpTimeoutError(
      this.name,
      'start-up',
      config.startupTimeoutMs,
      `raise "startupTimeoutMs" of "${this.name}" in ${this.options.file} if it needs longer, ` +
      'or check that it starts at all',
    )), config.startupTimeoutMs);
    const link = linkAbortSignal(this.lifetime.signal, startup.signal);
    const { elicitation } = this.options;
    const capabilities: ClientCapabilities = {
      ...(config.roots === false ? {} : { roots: { listChanged: true } }),
      // Form mode only; the SDK fills in the defaults of fields the user left out (SEP-1034).
      ...(elicitation === undefined ? {} : { elicitation: { form: { applyDefaults: true } } }),
    };
    const live: Live = {
      client: new Client(this.options.clientInfo, { capabilities }),
      transport: createTransport(config, this.options.workDir, this.oauth),
      tools: [],
      prompts: [],
      resources: false,
      adopted: false,
      ending: false,
      changedWhileStarting: false,
      relisting: undefined,
      relistAgain: false,
      progress: new Map(),
      rootsVersion: this.rootsVersion,
    };
    const { client } = live;
    if (config.roots !== false) {
      client.setRequestHandler(ListRootsRequestSchema, () => ({
        roots: [...(this.options.roots?.() ?? [workspaceRoot(this.options.workDir)])],
      }));
    }
    if (elicitation !== undefined) {
      client.setRequestHandler(ElicitRequestSchema, elicitationRequestHandler({
        server: this.name,
        handler: elicitation,
        timeoutMs: this.options.elicitationTimeoutMs ?? defaultElicitationTimeoutMs,
        setTimer: this.options.setTimer,
        lifetime: this.lifetime.signal,
        warn: (code, message) => this.warn(code, message),
        asking: () => this.askingStarted(),
      }));
    }
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.toolsChanged(live));
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => {
      this.promptsChanged(live);
    });
    client.setNotificationHandler(ProgressNotificationSchema, (notification) => {
      const { progressToken, ...progress } = notification.params;
      const listener = live.progress.get(progressToken);
      if (listener !== undefined) reportProgress(listener, progress);
    });
    client.onclose = () => this.lost(live, new McpError(ErrorCode.ConnectionClosed, 'closed'));
    client.onerror = (error) => {
      if (isConnectionLost(error, live)) this.lost(live, error);
    };
    const options: RequestOptions = { signal: link.signal, timeout: config.startupTimeoutMs };
    try {
      await raceAbort(client.connect(live.transport.transport, options), link.signal);
      live.transport.pid();
      this.initialized.add(live);
      // Roots that changed while it was initializing.
      if (live.rootsVersion !== this.rootsVersion) void this.tellRootsChanged(live);
      const capabilities = client.getServerCapabilities() ?? {};
      if (capabilities.tools !== undefined) {
        do {
          live.changedWhileStarting = false;
          live.tools = await raceAbort(listTools(client, options), link.signal);
        } while (live.changedWhileStarting);
      }
      if (capabilities.prompts !== undefined) {
        live.prompts = await raceAbort(listPrompts(client, options), link.signal);
      }
      live.resources = capabilities.resources !== undefined;
      if (live.ending) throw new McpError(ErrorCode.ConnectionClosed, 'Connection closed');
      return live;
    } catch (error) {
      await this.dispose(live);
      const wanted = this.loginWanted(error, live);
      if (wanted !== undefined && !loggedIn && !startup.signal.aborted) throw wanted;
      throw this.startError(error, live, startup.signal, wanted !== undefined);
    } finally {
      cancelTimer();
      link.dispose();
    }
  }

  private adopt(live: Live): void {
    live.adopted = true;
    this.live = live;
    this.remoteTools = live.tools;
    this.remotePrompts = live.prompts;
    this.offersResources = live.resources;
    this.attempt = 0;
    this.setState('ready');
  }

  /** The connection ended without `close()`: reconnect (MCP-5). */
  private lost(live: Live, cause: unknown): void {
    if (live.ending) return;
    live.ending = true;
    // One still starting fails on its own (its start sees `ending`).
    if (!live.adopted || this.live !== live) return;
    this.live = undefined;
    void this.dispose(live);
    this.error = this.lostReason(live, cause);
    this.attempt = 0;
    this.setState('reconnecting');
    this.warn(
      'mcp_server_disconnected',
      `MCP server "${this.name}" disconnected (${this.error}); claw reconnects in the ` +
      'background, and its tools answer with an error until then',
    );
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    this.attempt += 1;
    const { initialDelayMs, maxDelayMs } = this.options.reconnect;
    const delay = Math.min(initialDelayMs * 2 ** (this.attempt - 1), maxDelayMs);
    this.cancelReconnect = this.options.setTimer(() => {
      this.cancelReconnect = undefined;
      void this.reconnect();
    }, delay);
  }

  private async reconnect(): Promise<void> {
    if (this.currentState !== 'reconnecting') return;
    let live: Live;
    try {
      live = await this.open();
    } catch (error) {
      if (this.currentState !== 'reconnecting') return;
      this.error = errorMessage(error);
      if (error instanceof McpNeedsLoginError) {
        this.failure = error;
        this.clearLists();
        this.setState('needs_login');
        this.warn('mcp_server_needs_login', `${this.error}; its tools are off until then`);
        return;
      }
      const { maxAttempts } = this.options.reconnect;
      if (isAuthFailure(error) || this.attempt >= maxAttempts) {
        this.failure = error instanceof Error ? error : undefined;
        this.giveUp();
        return;
      }
      this.options.onChange();
      this.scheduleReconnect();
      return;
    }
    if (this.currentState !== 'reconnecting') {
      void this.dispose(live);
      return;
    }
    this.adopt(live);
    this.warn(
      'mcp_server_reconnected',
      `MCP server "${this.name}" is connected again (${live.tools.length} tools)`,
    );
  }

  private clearLists(): void {
    this.remoteTools = [];
    this.remotePrompts = [];
    this.offersResources = false;
  }

  private giveUp(): void {
    const attempts = this.attempt;
    this.clearLists();
    this.setState('failed');
    this.warn(
      'mcp_server_failed',
      `MCP server "${this.name}" could not be reconnected (${attempts} attempts; last: ` +
      `${this.error ?? 'unknown error'}); its tools are off until claw starts again`,
    );
  }

  private toolsChanged(live: Live): void {
    if (live.ending) return;
    if (!live.adopted) {
      live.changedWhileStarting = true;
      return;
    }
    if (live.relisting !== undefined) {
      live.relistAgain = true;
      return;
    }
    live.relisting = this.relist(live).finally(() => {
      live.relisting = undefined;
    });
  }

  /** Lists the tools again (every page) until no change came meanwhile. Never rejects. */
  private async relist(live: Live): Promise<void> {
    do {
      live.relistAgain = false;
      let tools: RemoteTool[];
      try {
        tools = await this.background((options) => listTools(live.client, options));
      } catch (error) {
        if (this.live !== live) return;
        if (isConnectionLost(error, live)) {
          this.lost(live, error);
          return;
        }
        this.warn(
          'mcp_list_failed',
          `MCP server "${this.name}" said its tools changed, but listing them failed ` +
          `(${errorMessage(error)}); claw keeps the tools it knew`,
        );
        return;
      }
      if (this.live !== live) return;
      live.tools = tools;
      this.remoteTools = tools;
      this.options.onChange();
    } while (live.relistAgain);
  }

  private promptsChanged(live: Live): void {
    if (live.ending || !live.adopted) return;
    const listing = this.background((options) => listPrompts(live.client, options)).then(
      (prompts) => {
        if (this.live !== live) return;
        live.prompts = prompts;
        this.remotePrompts = prompts;
        this.options.onChange();
      },
      (error: unknown) => {
        if (this.live === live && !this.lifetime.signal.aborted) {
          this.warn(
            'mcp_list_failed',
            `MCP server "${this.name}" said its prompts changed, but listing them failed ` +
            `(${errorMessage(error)}); claw keeps the prompts it knew`,
          );
        }
      },
    );
    this.track(listing);
  }

  /**
   * A request claw makes on its own (a list after a change): ended by `close()` and by the SDK's
   * call timeout, on a signal of its own (the SDK never removes its listener from the signal it is
   * given, so the connection's own signal would collect one per request).
   */
  private async background<T>(run: (options: RequestOptions) => Promise<T>): Promise<T> {
    const link = linkAbortSignal(this.lifetime.signal);
    try {
      return await run({ signal: link.signal, timeout: this.config.callTimeoutMs });
    } finally {
      link.dispose();
    }
  }

  /**
   * Runs one request on the current connection under the caller's signal and the call timeout,
   * and turns what can go wrong into claw's errors.
   */
  private async request<T>(
    context: McpCallContext,
    what: string,
    run: (live: Live, options: RequestOptions) => Promise<T>,
  ): Promise<T> {
    throwIfAborted(context.signal);
    const live = this.live;
    if (live === undefined || this.currentState !== 'ready') throw this.unavailable();
    const ms = this.config.callTimeoutMs;
    const timeout = new AbortController();
    const cancelTimer = this.callTimer(ms, () => timeout.abort(new McpTimeoutError(
      this.name,
      'call',
      ms,
      `the ${what} was canceled; raise "callTimeoutMs" of "${this.name}" in ` +
      `${this.options.file} if it needs longer, or ask for less`,
    )));
    const link = linkAbortSignal(context.signal, timeout.signal, this.lifetime.signal);
    try {
      // Abort returns at once, whatever the server does; the SDK tells it asynchronously. The
      // SDK's own timeout is off: claw's timer is the one (it waits while the user is asked).
      const options = { signal: link.signal, timeout: maxTimerMs };
      try {
        return await raceAbort(run(live, options), link.signal);
      } catch (error) {
        // The server wants a (new) login, e.g. more scopes for this call (step-up): where the
        // user may be asked, they log in and the call is made once more.
        const wanted = this.loginWanted(error, live);
        if (wanted === undefined) throw error;
        const resume = this.askingStarted();
        try {
          await this.logIn(wanted.pending, wanted.transport, link.signal);
        } finally {
          resume();
        }
        return await raceAbort(run(live, options), link.signal);
      }
    } catch (error) {
      if (context.signal?.aborted === true) throw abortReason(context.signal);
      if (timeout.signal.aborted) throw abortReason(timeout.signal);
      if (this.lifetime.signal.aborted) throw abortReason(this.lifetime.signal);
      throw this.callError(live, error, what, ms);
    } finally {
      cancelTimer();
      link.dispose();
    }
  }

  /**
   * A call's timeout: `onTimeout` after `ms`, except while the server is waiting for the user to
   * answer a request for input (elicitation, which has a timeout of its own): then the clock
   * starts again once the last question is answered. Returns the function that cancels it.
   */
  private callTimer(ms: number, onTimeout: () => void): () => void {
    let cancel: (() => void) | undefined;
    let settled = false;
    const arm = (): void => {
      cancel = this.options.setTimer(fire, ms);
    };
    const rearm = (): void => {
      if (!settled) arm();
    };
    const fire = (): void => {
      cancel = undefined;
      if (this.asking === 0) onTimeout();
      else this.afterAsking.add(rearm);
    };
    arm();
    return () => {
      settled = true;
      cancel?.();
      this.afterAsking.delete(rearm);
    };
  }

  /** The user is being asked for input on behalf of the server; calls wait (see `callTimer`). */
  private askingStarted(): () => void {
    this.asking += 1;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.asking -= 1;
      if (this.asking > 0) return;
      const waiting = [...this.afterAsking];
      this.afterAsking.clear();
      for (const rearm of waiting) rearm();
    };
  }

  private callError(live: Live, error: unknown, what: string, ms: number): Error {
    const auth = this.authError(error, 'call');
    if (auth !== undefined) return auth;
    if (isConnectionLost(error, live)) {
      this.lost(live, error);
      return new McpUnavailableError(
        `MCP server "${this.name}" lost its connection during the ${what} ` +
        `(${this.lostReason(live, error)}); claw is reconnecting: try again in a moment`,
        this.name,
        error,
      );
    }
    if (error instanceof McpError && error.code === (ErrorCode.RequestTimeout as number)) {
      return new McpTimeoutError(this.name, 'call', ms, `the ${what} was canceled`);
    }
    if (error instanceof McpError) {
      return new McpRequestError(
        `MCP server "${this.name}" answered the ${what} with an error: ${error.message}`,
        this.name,
        error.code,
        error,
      );
    }
    return new McpRequestError(
      `the ${what} on MCP server "${this.name}" failed: ${errorMessage(error)}`,
      this.name,
      undefined,
      error,
    );
  }

  private unavailable(): McpUnavailableError {
    const name = this.name;
    switch (this.currentState) {
      case 'reconnecting':
        return new McpUnavailableError(
          `MCP server "${name}" is not connected (${this.error ?? 'it dropped'}); claw is ` +
          `reconnecting (attempt ${this.attempt} of ${this.options.reconnect.maxAttempts}). ` +
          'Try again in a moment, or go on without it',
          name,
        );
      case 'failed':
        return new McpUnavailableError(
          `MCP server "${name}" is not available: ${this.error ?? 'it failed'}. Go on without ` +
          'it; the user can see its state with `claw mcp list`',
          name,
        );
      case 'closed':
        return new McpUnavailableError('the MCP connections were closed', name);
      case 'needs_login':
        return new McpUnavailableError(
          `MCP server "${name}" is not available: ${this.error ?? 'it needs a login'}. Go on ` +
          'without it; the user can log in from a terminal',
          name,
        );
      case 'disabled':
        return new McpUnavailableError(
          `MCP server "${name}" is disabled in ${this.options.file}`,
          name,
        );
      case 'idle':
      case 'starting':
      case 'ready':
        return new McpUnavailableError(
          `MCP server "${name}" is still starting; try again in a moment`,
          name,
        );
    }
  }

  private startError(
    error: unknown,
    live: Live,
    startup: AbortSignal,
    loginWantedAgain = false,
  ): Error {
    if (this.lifetime.signal.aborted) return abortReason(this.lifetime.signal);
    if (startup.aborted) return abortReason(startup);
    if (loginWantedAgain) {
      return new McpLoginError(
        `MCP server "${this.name}" asked for a login again right after claw logged in (the ` +
        'account may lack the access it asks for); run ' +
        `\`${loginCommand(this.name)}\` to log in with one that has it`,
        this.name,
        error,
      );
    }
    const auth = this.authError(error, 'start');
    if (auth !== undefined) return auth;
    const { config } = this;
    const reason = this.lostReason(live, error);
    if (config.transport === 'stdio') {
      const commandLine = [config.command, ...config.args].join(' ');
      return new McpStartError(
        `MCP server "${this.name}" could not be started (${commandLine}): ${reason}. Check ` +
        `"command" and "args" of "${this.name}" in ${this.options.file} (run the command in ` +
        'the workspace to see what it does), or set "enabled": false for it',
        this.name,
        error,
      );
    }
    return new McpStartError(
      `could not connect to MCP server "${this.name}" at ${config.url}: ${reason}. Check that ` +
      `the server is running and the "url" of "${this.name}" in ${this.options.file}, or set ` +
      '"enabled": false for it',
      this.name,
      error,
    );
  }

  /**
   * The server wants a login that the user may give here (interactive OAuth): the SDK started an
   * authorization (`redirectToAuthorization`) and turned the request down with
   * `UnauthorizedError`.
   */
  private loginWanted(error: unknown, live: Live): LoginWanted | undefined {
    const { transport } = live.transport;
    if (this.oauth === undefined || !(transport instanceof StreamableHTTPClientTransport)) {
      return undefined;
    }
    if (findError(error, UnauthorizedError) === undefined) return undefined;
    const pending = this.oauth.takePending();
    return pending === undefined ? undefined : new LoginWanted(pending, transport);
  }

  /** Has the user log in (see `ClawOAuthProvider.finishAuthorization`). */
  private async logIn(
    pending: PendingAuthorization,
    transport: StreamableHTTPClientTransport,
    signal: AbortSignal,
  ): Promise<void> {
    const oauth = this.options.oauth ?? {};
    await this.oauth?.finishAuthorization(pending, transport, {
      openUrl: oauth.openUrl,
      timeoutMs: oauth.authorizationTimeoutMs ?? defaultAuthorizationTimeoutMs,
      setTimer: this.options.setTimer,
      signal,
    });
  }

  /** The error for a refusal or a login problem, in claw's words; undefined for other errors. */
  private authError(error: unknown, during: 'start' | 'call'): Error | undefined {
    const needsLogin = findError(error, McpNeedsLoginError);
    if (needsLogin !== undefined) {
      return during === 'start'
        ? needsLogin
        : new McpNeedsLoginError(this.name, { expired: needsLogin.expired, during, cause: error });
    }
    const known = findError(error, McpLoginError) ?? findError(error, McpAuthError) ??
      findError(error, McpAuthStoreError);
    if (known !== undefined) return known;
    const status = authStatus(error);
    if (status !== undefined) {
      return new McpAuthError(this.name, status, error, { oauth: this.oauth?.usesOAuth === true });
    }
    const mismatch = resourceMismatch(error);
    if (mismatch !== undefined) {
      return new McpLoginError(
        `MCP server "${this.name}" says in its OAuth metadata that it is ${mismatch}, not the ` +
        '"url" claw reaches it at: claw does not log in to it (its token would be one for ' +
        `another server). Check the "url" of "${this.name}" in ${this.options.file}`,
        this.name,
        error,
      );
    }
    const refused = findError(error, OAuthError);
    if (refused !== undefined) {
      return new McpLoginError(
        `logging in to MCP server "${this.name}" did not succeed: the authorization server ` +
        `answered ${refused.errorCode}${refused.message === '' ? '' : ` (${refused.message})`}; ` +
        `run \`${loginCommand(this.name)}\` to log in again`,
        this.name,
        error,
      );
    }
    return undefined;
  }

  /** Why a connection ended or could not be made, in words (with a stdio server's stderr). */
  private lostReason(live: Live, cause: unknown): string {
    let reason = describeFailure(cause, this.config);
    const stderr = live.transport.stderr();
    if (stderr !== '') reason += `; it wrote to stderr: ${stderr}`;
    return reason;
  }

  private async tellRootsChanged(live: Live): Promise<void> {
    if (this.config.roots === false || live.ending) return;
    if (live.rootsVersion === this.rootsVersion) return;
    live.rootsVersion = this.rootsVersion;
    // A failure is the connection's: it is lost (and reconnected) or closing.
    await live.client.sendRootsListChanged().catch(() => undefined);
  }

  /** Ends a connection: marks it, then closes it completely in the background (tracked). */
  private dispose(live: Live): Promise<void> {
    live.ending = true;
    this.initialized.delete(live);
    const closing = live.transport.close(() => live.client.close());
    this.track(closing);
    return closing;
  }

  private track(promise: Promise<unknown>): void {
    this.pending.add(promise);
    const forget = (): void => {
      this.pending.delete(promise);
    };
    promise.then(forget, forget);
  }

  private setState(state: McpServerState): void {
    this.currentState = state;
    this.options.onChange();
  }

  private warn(code: string, message: string): void {
    this.options.onWarning({ server: this.name, code, message });
  }
}

function listTools(client: Client, options: RequestOptions): Promise<RemoteTool[]> {
  return listAllPages(async (cursor) => {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, options);
    return { items: page.tools, nextCursor: page.nextCursor };
  });
}

function listPrompts(client: Client, options: RequestOptions): Promise<Prompt[]> {
  return listAllPages(async (cursor) => {
    const page = await client.listPrompts(cursor === undefined ? {} : { cursor }, options);
    return { items: page.prompts, nextCursor: page.nextCursor };
  });
}

function reportProgress(
  onProgress: (progress: ToolProgress) => void,
  progress: { progress: number; total?: number; message?: string },
): void {
  try {
    onProgress({
      progress: progress.progress,
      ...(progress.total === undefined ? {} : { total: progress.total }),
      ...(progress.message === undefined ? {} : { message: progress.message }),
    });
  } catch {
    // A listener's failure is not the call's.
  }
}

/** The server wants a login the user may give here; what finishes it. */
class LoginWanted extends Error {
  constructor(
    readonly pending: PendingAuthorization,
    readonly transport: StreamableHTTPClientTransport,
  ) {
    super('the MCP server wants a login');
  }
}

/**
 * The OAuth provider of a `url` server: one configured with `"auth"`, or one without its own
 * `Authorization` header (it may turn out to use OAuth: a 401 and OAuth metadata say so).
 */
function createOAuthProvider(options: McpConnectionOptions): ClawOAuthProvider | undefined {
  const { config } = options;
  if (config.transport !== 'http' || !config.enabled) return undefined;
  if (config.auth === undefined && Object.keys(config.headers).some(isAuthorizationHeader)) {
    return undefined;
  }
  const oauth = options.oauth ?? {};
  return new ClawOAuthProvider({
    server: config.name,
    serverUrl: config.url,
    config: config.auth,
    store: options.authStore ?? new McpAuthStore({ file: oauth.authFile }),
    clientInfo: options.clientInfo,
    interactive: oauth.interactive === true,
    freshLogin: oauth.freshLogin === true,
    now: oauth.now ?? Date.now,
  });
}

/** The resource the metadata names when it is not the server's URL (the SDK refuses it). */
function resourceMismatch(error: unknown): string | undefined {
  for (const current of causeChain(error)) {
    if (!(current instanceof Error)) continue;
    const match = /^Protected resource (\S+) does not match expected /.exec(current.message);
    if (match !== null) return match[1];
  }
  return undefined;
}

function isAuthFailure(error: unknown): boolean {
  return error instanceof McpAuthError || error instanceof McpLoginError ||
    error instanceof McpAuthStoreError;
}

/** 401 or 403 when the server refused claw's credentials. */
function authStatus(error: unknown): number | undefined {
  for (const current of causeChain(error)) {
    if (current instanceof StreamableHTTPError && (current.code === 401 || current.code === 403)) {
      return current.code;
    }
    if (current instanceof UnauthorizedError) return 401;
  }
  return undefined;
}

const lostErrnos = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ENOTCONN', 'UND_ERR_SOCKET']);

/**
 * True when the error means the connection is gone (not that a request failed on it, nor that a
 * server refused the optional GET stream).
 */
function isConnectionLost(error: unknown, live: Live): boolean {
  for (const current of causeChain(error)) {
    if (current instanceof McpError) {
      return current.code === (ErrorCode.ConnectionClosed as number);
    }
    if (current instanceof StreamableHTTPError) {
      // 404 with a session: the server no longer knows it (it restarted), so initialize again.
      // Without one it is no such thing: a stateless server answers the optional GET stream with
      // 404 (or 405), and its requests still work (MCP-6).
      return current.code === 404 && live.transport.sessionId() !== undefined;
    }
    const code = errnoCode(current);
    if (code !== undefined && lostErrnos.has(code)) return true;
    if (current instanceof Error && /^(Not connected|SSE stream disconnected)/.test(current.message)) {
      return true;
    }
    if (current instanceof TypeError && current.message === 'fetch failed') return true;
  }
  return false;
}

function describeFailure(error: unknown, config: McpServerConfig): string {
  for (const current of causeChain(error)) {
    const code = errnoCode(current);
    if (code === 'ENOENT' && config.transport === 'stdio') {
      return `command not found: ${config.command} (install it, or give its full path)`;
    }
    if (code === 'EACCES' && config.transport === 'stdio') {
      return `permission denied running ${config.command}`;
    }
    if (code === 'ECONNREFUSED') return 'connection refused (is the server running?)';
    if (current instanceof McpError && current.code === (ErrorCode.ConnectionClosed as number)) {
      return config.transport === 'stdio' ? 'the process exited' : 'the connection was closed';
    }
  }
  return errorMessage(error);
}
