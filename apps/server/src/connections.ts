import {
  ChannelConnection,
  defaultOutboundLimits,
  type ChannelWriter,
  type CloseReason,
  type OutboundLimits,
  type ServerEvent,
} from '@claw/channel';
import type { ServerSessions } from './sessions.js';

/** A transport's name: it prefixes connection names and the session ids it makes. */
export type TransportKind = 'tcp' | 'ws';

/** The limits of SEC-6 that apply to every connection, whatever its transport. */
export interface ConnectionLimits {
  /** Most connections at once, TCP and WebSocket together. Default 1,024. */
  maxConnections: number;
  /** Largest client message in bytes. Default 1 MiB. */
  maxMessageBytes: number;
  /** Most sessions open on one connection. Default 64. */
  maxSessionsPerConnection: number;
  /** A connection that sent no `hello` by then is closed. Default 10 s. */
  helloTimeoutMs: number;
  /** Heartbeat ping interval; a peer that missed the last pong is dropped. Default 30 s. */
  heartbeatMs: number;
  /** The outbound bound of each connection (CH-5); fields not given are `serverOutboundLimits`'. */
  outbound?: OutboundLimits;
}

/**
 * The outbound bound of every connection (CH-5, LIFE-2): 1,024 events or 4 MiB, what the
 * transport holds included (see the writers in the transports: a write settles only once the
 * socket handed its bytes to the system, and until then they stay in the queue and count). A
 * connection that stays at its bound (its text deltas merged, CH-5) for a second is closed as too
 * slow: WebSocket 4008, on TCP an `error` line; it reconnects with its cursor. An event larger than
 * the bound goes out alone, and must be taken within that second too.
 */
export const serverOutboundLimits: Required<OutboundLimits> = {
  ...defaultOutboundLimits,
  maxStallMs: 1000,
};

export const defaultConnectionLimits: ConnectionLimits = {
  maxConnections: 1024,
  maxMessageBytes: 1024 * 1024,
  maxSessionsPerConnection: 64,
  helloTimeoutMs: 10_000,
  heartbeatMs: 30_000,
};

export interface ConnectionHubOptions {
  sessions: ServerSessions;
  workspaces: readonly string[];
  token: string;
  server: { name: string; version: string };
  limits: ConnectionLimits;
  /**
   * This instance, when several share a store (SCALE-4): it is part of connection names (who
   * answered an approval, on every instance) and of the ids of new sessions, which must not
   * collide with another instance's.
   */
  instanceTag?: string;
}

/**
 * Every client connection of the server, TCP and WebSocket alike: each is a `ChannelConnection`
 * (the protocol, CH-1 to CH-11) on the server's shared sessions, with the token required first
 * and the limits of SEC-6. The hub counts them against the connection limit, names them
 * (`tcp-N`, `ws-N`, with `@<instance>` when instances share a store: `by` of an approval
 * they answer), and reaches all of them at shutdown.
 */
export class ConnectionHub {
  private readonly options: ConnectionHubOptions;
  private readonly connections = new Set<ChannelConnection>();
  private readonly counters: Record<TransportKind, number> = { tcp: 0, ws: 0 };
  private stopping = false;

  constructor(options: ConnectionHubOptions) {
    this.options = options;
  }

  get limits(): ConnectionLimits {
    return this.options.limits;
  }

  /** Connections open now. */
  get size(): number {
    return this.connections.size;
  }

  /** Why a new connection is refused now (the limit, or the server stopping); else undefined. */
  refusal(): { code: string; message: string } | undefined {
    if (this.stopping) {
      return { code: 'server_stopping', message: 'the server is stopping; connect again later' };
    }
    if (this.connections.size >= this.options.limits.maxConnections) {
      return {
        code: 'too_many_connections',
        message:
          `the server has ${this.connections.size} connections, the most it takes; close one ` +
          'or try again later',
      };
    }
    return undefined;
  }

  /** A connection for a new client of a transport; the transport feeds it and writes for it. */
  connect(kind: TransportKind, writer: ChannelWriter): ChannelConnection {
    this.counters[kind] += 1;
    const { limits, sessions, instanceTag } = this.options;
    const connection = new ChannelConnection({
      name: `${kind}-${this.counters[kind]}${instanceTag === undefined ? '' : `@${instanceTag}`}`,
      runtimes: sessions,
      writer,
      workspaces: this.options.workspaces,
      token: this.options.token,
      helloTimeoutMs: limits.helloTimeoutMs,
      sessions: () => sessions.welcome(),
      unreadableSessions: () => sessions.unreadableSessions(),
      server: this.options.server,
      newSessionId: () => sessions.newSessionId(
        `${kind}-channel-session${instanceTag === undefined ? '' : `-${instanceTag}`}`,
      ),
      maxMessageBytes: limits.maxMessageBytes,
      maxSessions: limits.maxSessionsPerConnection,
      outbound: { ...serverOutboundLimits, ...limits.outbound },
    });
    this.connections.add(connection);
    void connection.closed.then(() => this.connections.delete(connection));
    return connection;
  }

  /** True when a connected client controls the session (it can answer its approvals). */
  hasController(sessionId: string): boolean {
    for (const connection of this.connections) {
      if (connection.controls(sessionId)) return true;
    }
    return false;
  }

  /** From now on new connections are refused; every open one is told (`server_stopping`). */
  beginStop(event: ServerEvent): void {
    this.stopping = true;
    for (const connection of this.connections) connection.send(event);
  }

  /** Waits (at most `timeoutMs`) for what was sent to reach the clients. */
  async flush(timeoutMs: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.allSettled([...this.connections].map((connection) => connection.flush())),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
  }

  /** Closes every connection (each transport says it its way: WebSocket 1001, TCP end). */
  async closeAll(reason: CloseReason): Promise<void> {
    await Promise.allSettled([...this.connections].map((connection) => connection.close(reason)));
  }
}
