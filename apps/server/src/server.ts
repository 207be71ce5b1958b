import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import path from 'node:path';
import type { InboundTaskClock } from '@claw/a2a/server';
import type { RuntimeFactory } from '@claw/runtime';
import type { SharedSessionLog } from '@claw/session-store';
import { A2aEndpoints, defaultA2aApprovalTimeoutMs } from './a2a.js';
import { ConnectionHub, defaultConnectionLimits, type ConnectionLimits } from './connections.js';
import { createHttpRoutes } from './http.js';
import { OriginPolicy } from './security.js';
import { ServerSessions, type ServerSessionsOptions, type SetTimer } from './sessions.js';
import { serveTcpSocket } from './tcp.js';
import { WebSocketTransport } from './websocket.js';

export interface ClawServerOptions {
  /** Builds the runtimes of every session; the server closes it when it stops. */
  factory: RuntimeFactory;
  /** The workspace roots sessions may use (SEC-7); the first is the default. */
  workspaces: readonly string[];
  /** Required in `hello` on every connection and as the API's bearer token (SEC-2). */
  token: string;
  /** Default 127.0.0.1. The caller checks the address may be used (SEC-1). */
  host?: string;
  /** Default 8080; 0 picks a free port. */
  tcpPort?: number;
  /** Default 8081; 0 picks a free port. */
  httpPort?: number;
  /** More origins allowed to open WebSockets (SEC-3). */
  allowOrigins?: readonly string[];
  /** A session nobody watches is unloaded after this long (CH-10). Default 30 minutes. */
  idleTimeoutMs?: number;
  /**
   * The store several instances share (SCALE-4), so that a session another instance owns is
   * served here too (see `ServerSessionsOptions.relay`).
   */
  relay?: { log: SharedSessionLog; pollMs?: number };
  /** Told of a stored session that cannot be read (see `ServerSessionsOptions.onUnreadable`). */
  onUnreadableSession?: ServerSessionsOptions['onUnreadable'];
  /**
   * The server's error log: one line for each failure in the background, where nobody waits for
   * it (a session that cannot be stored when it is unloaded, a takeover that fails). The server
   * goes on after each (LIFE-2). Default: not told.
   */
  onError?: (line: string) => void;
  /** The sessions' idle timeouts and heartbeats (default `setTimeout`); tests drive them. */
  setTimer?: SetTimer;
  limits?: Partial<ConnectionLimits>;
  /** The web console's built files; served at `/`. */
  consoleDir?: string;
  /** What `welcome` says the server is. */
  version: string;
  /**
   * claw as an A2A agent (A2A-2, A2A-3, TRUST-6): how long a tool call of an inbound task waits
   * for an operator's answer before it is denied (default 60 s; with no controller connected it
   * is denied at once), and the timers (tests drive them); how many inbound tasks run at once
   * (default 8; more are refused), how long a finished one stays answerable by `GetTask`
   * (default 24 h), how many finished ones are remembered at most (default 10,000), and the
   * time of the task store (tests drive it).
   */
  a2a?: {
    approvalTimeoutMs?: number;
    setTimer?: (callback: () => void, ms: number) => () => void;
    maxTasks?: number;
    taskRetentionMs?: number;
    maxRememberedTasks?: number;
    taskClock?: InboundTaskClock;
  };
}

/** Where the server listens, once it does. */
export interface ServerAddress {
  host: string;
  tcp: number;
  http: number;
}

/** How `stop` ends running tasks. */
export interface StopOptions {
  /** Running tasks may finish within this long, then are canceled (CH-7). Default 10 s. */
  graceMs?: number;
  /** Aborting it ends the grace at once (a second signal). */
  now?: AbortSignal;
}

/**
 * claw-server (CH-6): a TCP port for JSON lines and an HTTP port for the WebSocket endpoint
 * `/ws`, health, the console and the API, both on one set of sessions (`ServerSessions`) that
 * outlive their connections. `stop()` shuts down in order (CH-7): stop accepting, tell every
 * client (`server_stopping`), give running tasks the grace, cancel the rest (their histories stay
 * paired), store every session, close the connections (WebSocket 1001).
 */
export class ClawServer {
  private readonly options: ClawServerOptions;
  private readonly sessions: ServerSessions;
  private readonly hub: ConnectionHub;
  private readonly websocket: WebSocketTransport;
  private readonly tcpServer: TcpServer;
  private readonly httpServer: HttpServer;
  private readonly a2a: A2aEndpoints;
  private policy: OriginPolicy | undefined;
  private address: ServerAddress | undefined;
  private stopping: Promise<void> | undefined;

  constructor(options: ClawServerOptions) {
    this.options = options;
    const workspaces = options.workspaces.map((workspace) => path.resolve(workspace));
    this.sessions = new ServerSessions({
      factory: options.factory,
      workspaces,
      idleTimeoutMs: options.idleTimeoutMs ?? 30 * 60_000,
      ...(options.relay === undefined ? {} : { relay: options.relay }),
      ...(options.onUnreadableSession === undefined
        ? {}
        : { onUnreadable: options.onUnreadableSession }),
      ...(options.onError === undefined ? {} : { onError: options.onError }),
      ...(options.setTimer === undefined ? {} : { setTimer: options.setTimer }),
    });
    const limits = { ...defaultConnectionLimits, ...options.limits };
    this.hub = new ConnectionHub({
      sessions: this.sessions,
      workspaces,
      token: options.token,
      server: { name: 'claw-server', version: options.version },
      limits,
      ...(options.relay === undefined
        ? {}
        : { instanceTag: options.relay.log.relayParts().replication.instanceId.slice(0, 8) }),
    });
    const policy = (): OriginPolicy => {
      if (this.policy === undefined) throw new Error('the server is not listening yet');
      return this.policy;
    };
    this.websocket = new WebSocketTransport({ hub: this.hub, policy, token: options.token });
    const { approvalTimeoutMs, ...a2a } = options.a2a ?? {};
    this.a2a = new A2aEndpoints({
      ...a2a,
      sessions: this.sessions,
      hasController: (sessionId) => this.hub.hasController(sessionId),
      workDir: workspaces[0] ?? path.resolve('.'),
      version: options.version,
      approvalTimeoutMs: approvalTimeoutMs ?? defaultA2aApprovalTimeoutMs,
    });
    this.tcpServer = createTcpServer((socket) => serveTcpSocket(socket, this.hub));
    this.httpServer = createHttpServer(
      createHttpRoutes({
        token: options.token,
        policy,
        ready: () => this.address !== undefined && this.stopping === undefined,
        sessions: () => this.sessions.welcome(),
        unreadableSessions: () => this.sessions.unreadableSessions(),
        consoleDir: options.consoleDir,
        a2a: this.a2a,
      }),
    );
    // Slow or silent HTTP clients do not hold sockets for long (a WebSocket is not affected).
    this.httpServer.headersTimeout = 10_000;
    this.httpServer.requestTimeout = 30_000;
    this.httpServer.on('upgrade', (request, socket, head: Buffer) =>
      this.websocket.handleUpgrade(request, socket, head),
    );
    this.httpServer.on('clientError', (_error, socket) => socket.destroy());
  }

  /**
   * Listens on both ports.
   *
   * @throws the listen error (e.g. EADDRINUSE) after closing what was opened.
   */
  async start(): Promise<ServerAddress> {
    const host = this.options.host ?? '127.0.0.1';
    await this.sessions.init();
    try {
      const tcp = await listen(this.tcpServer, host, this.options.tcpPort ?? 8080);
      const http = await listen(this.httpServer, host, this.options.httpPort ?? 8081);
      this.policy = new OriginPolicy({
        port: http,
        host,
        allowOrigins: this.options.allowOrigins ?? [],
      });
      this.address = { host, tcp, http };
      return this.address;
    } catch (error) {
      this.tcpServer.close();
      this.httpServer.close();
      throw error;
    }
  }

  /** How many clients are connected now. */
  get connections(): number {
    return this.hub.size;
  }

  /** How many sessions are loaded now. */
  get loadedSessions(): number {
    return this.sessions.loaded;
  }

  /**
   * Lets `sessionId` go at once, whoever watches it: its task is stopped (its tool processes
   * killed) and it is unloaded, so that opening it again reads it from the store. For a session
   * this instance no longer owns (SCALE-2, `lease_lost`).
   */
  dropSession(sessionId: string, reason: Error): Promise<void> {
    return this.sessions.dropSession(sessionId, reason);
  }

  /** Stops the server in order (see the class); idempotent. */
  stop(options: StopOptions = {}): Promise<void> {
    this.stopping ??= this.shutDown(options);
    return this.stopping;
  }

  private async shutDown(options: StopOptions): Promise<void> {
    const graceMs = options.graceMs ?? 10_000;
    const closedTcp = new Promise((resolve) => this.tcpServer.close(resolve));
    const closedHttp = new Promise((resolve) => this.httpServer.close(resolve));
    this.hub.beginStop({ type: 'server_stopping', grace_ms: graceMs });
    const grace = new AbortController();
    const timer = setTimeout(() => grace.abort(), graceMs);
    const now = options.now;
    const onNow = (): void => grace.abort();
    if (now?.aborted === true) grace.abort();
    now?.addEventListener('abort', onNow, { once: true });
    try {
      await this.sessions.tasksDone(grace.signal);
    } finally {
      clearTimeout(timer);
      now?.removeEventListener('abort', onNow);
    }
    // What still runs is canceled (histories paired); the clients get the tasks' last events
    // (the subscriptions hand them over within a turn of the event loop), then are closed, then
    // every session is stored and released.
    await this.sessions.cancelAll(new Error('the server is stopping'));
    await new Promise((resolve) => setImmediate(resolve));
    await this.hub.flush(2000);
    await this.hub.closeAll({ code: 'server_stopping', message: 'the server stopped' });
    await this.sessions.close();
    await this.a2a.close();
    await this.options.factory.close();
    this.websocket.close();
    this.httpServer.closeAllConnections();
    await Promise.all([closedTcp, closedHttp]);
  }
}

function listen(server: TcpServer | HttpServer, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    server.listen({ host, port }, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
