import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { sameToken, type CloseReason } from '@claw/channel';
import { WebSocketServer, type WebSocket } from 'ws';
import type { ConnectionHub } from './connections.js';
import { refuseUpgrade } from './http-replies.js';
import { tokenInQuery, type OriginPolicy } from './security.js';

/** Close codes of the protocol's reasons (4000–4999 are the application's own). */
const closeCodes: Record<string, number> = {
  client_too_slow: 4008,
  unauthorized: 4001,
  unsupported_protocol: 4002,
  server_stopping: 1001,
  write_failed: 1011,
};

/** Client messages waiting to be handled before the transport stops reading (backpressure). */
const maxPendingMessages = 256;

export interface WebSocketTransportOptions {
  hub: ConnectionHub;
  /** The Host and Origin checks (SEC-3); known once the HTTP port is. */
  policy: () => OriginPolicy;
  token: string;
}

/**
 * The WebSocket endpoint `/ws` (CH-6): one channel connection per socket, one JSON message per
 * text frame. The upgrade is refused (403) before any handshake for a foreign `Origin` (a web
 * page) or `Host` (DNS rebinding), and (400) for a token in the URL (SEC-2, SEC-3); frames over
 * the size limit close with 1009 (ws' `maxPayload`), a binary frame gets an `error` and the socket
 * goes on. A heartbeat drops peers that stopped answering pings (SEC-6). A client that stays at
 * its outbound bound is closed with 4008 (CH-5, `serverOutboundLimits`); at shutdown every socket
 * closes with 1001.
 */
export class WebSocketTransport {
  private readonly options: WebSocketTransportOptions;
  private readonly server: WebSocketServer;
  private readonly alive = new Map<WebSocket, boolean>();
  private readonly heartbeat: ReturnType<typeof setInterval>;

  constructor(options: WebSocketTransportOptions) {
    this.options = options;
    const { limits } = options.hub;
    this.server = new WebSocketServer({
      noServer: true,
      maxPayload: limits.maxMessageBytes,
      perMessageDeflate: false,
      clientTracking: false,
    });
    this.heartbeat = setInterval(() => this.beat(), limits.heartbeatMs);
    this.heartbeat.unref();
  }

  /** Sockets open now. */
  get size(): number {
    return this.alive.size;
  }

  /** The HTTP server's `upgrade` event. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => undefined);
    const url = new URL(request.url ?? '/', 'http://localhost');
    const policy = this.options.policy();
    const hostProblem = policy.hostProblem(request.headers.host);
    if (hostProblem !== undefined) return refuseUpgrade(socket, 403, 'forbidden_host', hostProblem);
    const originProblem = policy.originProblem(request.headers.origin);
    if (originProblem !== undefined) {
      return refuseUpgrade(socket, 403, 'forbidden_origin', originProblem);
    }
    if (url.pathname !== '/ws') {
      return refuseUpgrade(socket, 404, 'not_found', 'the WebSocket endpoint is /ws');
    }
    const valueIsToken = [...url.searchParams.values()].some((value) =>
      sameToken(value, this.options.token),
    );
    if (tokenInQuery(url) || valueIsToken) {
      return refuseUpgrade(
        socket,
        400,
        'token_in_url',
        'never put the token in a URL (it ends up in logs and history): connect to /ws and send ' +
        '{"type":"hello","token":…,"protocol":1} as the first message',
      );
    }
    const refusal = this.options.hub.refusal();
    if (refusal !== undefined) return refuseUpgrade(socket, 503, refusal.code, refusal.message);
    this.server.handleUpgrade(request, socket, head, (ws) => this.serve(ws, socket));
  }

  /** Stops the heartbeat; sockets are closed through their connections. */
  close(): void {
    clearInterval(this.heartbeat);
  }

  private serve(ws: WebSocket, socket: Duplex): void {
    this.alive.set(ws, true);
    ws.on('pong', () => this.alive.set(ws, true));
    ws.on('error', () => undefined);
    let closed = false;
    const closeSocket = (reason: CloseReason): void => {
      if (closed) return;
      closed = true;
      ws.close(closeCodes[reason.code] ?? 1000, closeText(reason.message));
      // A peer that never answers the close handshake is cut.
      setTimeout(() => ws.terminate(), 2000).unref();
    };
    // A write settles once ws handed the frame to the system (its callback): until then the
    // event stays in the connection's queue, so what ws holds (`bufferedAmount`) counts against
    // the connection's outbound bound (LIFE-2) and a client that stops reading fills it.
    const connection = this.options.hub.connect('ws', {
      write: (json) =>
        new Promise<void>((resolve, reject) => {
          if (ws.readyState !== ws.OPEN) {
            reject(new Error('the WebSocket is closed'));
            return;
          }
          ws.send(json, (error) => (error instanceof Error ? reject(error) : resolve()));
        }),
      // What waits goes out together: the socket is corked while the frames are handed to ws, so
      // they leave in one system call instead of one per event; resolves once the last is sent.
      writeBatch: (items) =>
        new Promise<void>((resolve, reject) => {
          if (ws.readyState !== ws.OPEN) {
            reject(new Error('the WebSocket is closed'));
            return;
          }
          const last = items.length - 1;
          socket.cork();
          try {
            items.forEach(({ json }, index) => {
              ws.send(
                json,
                index === last
                  ? (error) => (error instanceof Error ? reject(error) : resolve())
                  : undefined,
              );
            });
          } finally {
            socket.uncork();
          }
        }),
      close: closeSocket,
    });
    void connection.closed.then(closeSocket);
    let inFlight = 0;
    ws.on('message', (data, isBinary) => {
      const handled = isBinary
        ? connection.refuseMessage(
            'binary_not_supported',
            'binary frames are not part of the protocol: send each message as a JSON text frame',
          )
        : connection.handleLine(messageText(data));
      inFlight += 1;
      if (inFlight === maxPendingMessages) ws.pause();
      void handled.finally(() => {
        inFlight -= 1;
        if (inFlight === maxPendingMessages - 1) ws.resume();
      });
    });
    ws.on('close', () => {
      closed = true;
      this.alive.delete(ws);
      void connection.close({ code: 'disconnected', message: 'the client disconnected' });
    });
  }

  private beat(): void {
    for (const [ws, alive] of this.alive) {
      if (!alive) {
        ws.terminate();
        continue;
      }
      this.alive.set(ws, false);
      ws.ping();
    }
  }
}

function messageText(data: Buffer | ArrayBuffer | Buffer[]): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.from(data).toString('utf8');
}

/** A close frame's reason is at most 123 bytes. */
function closeText(message: string): string {
  const bytes = Buffer.from(message, 'utf8');
  if (bytes.length <= 123) return message;
  return `${bytes.subarray(0, 119).toString('utf8').replace(/\uFFFD$/, '')}…`;
}
