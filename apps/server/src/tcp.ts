import type { Socket } from 'node:net';
import type { ChannelConnection, CloseReason } from '@claw/channel';
import type { ConnectionHub } from './connections.js';

/** Client messages waiting to be handled before the transport stops reading (backpressure). */
const maxPendingMessages = 256;
/** How long a closing connection may take to send its last lines before it is cut. */
const closeGraceMs = 2000;

// A browser can be made to send a form or fetch to any local port; its request starts like HTTP.
// SEC-5: such a connection is hung up on before any of its lines runs.
const httpLike = /^(GET|POST|PUT|PATCH|DELETE|OPTIONS|HEAD|CONNECT|TRACE) |^Host:/i;
const longestHttpMethod = 'OPTIONS '.length;

/**
 * Serves one TCP client: JSON lines in and out (CH-1), through a channel connection of the hub.
 * Lines longer than the limit (with or without their newline), invalid UTF-8 and bad messages
 * get an `error` line and the connection goes on; a first line that looks like HTTP closes it at
 * once (SEC-5). Output is written as it is flushed by the socket: a write settles once the socket
 * handed its bytes to the system, so what the socket holds (`writableLength`) stays in the
 * connection's bounded queue and counts (LIFE-2), and a client that stops reading fills it and is
 * closed with a `client_too_slow` error line (CH-5, `serverOutboundLimits`).
 */
export function serveTcpSocket(socket: Socket, hub: ConnectionHub): void {
  socket.setNoDelay(true);
  socket.setKeepAlive(true, hub.limits.heartbeatMs);
  socket.on('error', () => undefined);
  const refusal = hub.refusal();
  if (refusal !== undefined) {
    socket.end(`${JSON.stringify({ type: 'error', ...refusal })}\n`);
    setTimeout(() => socket.destroy(), closeGraceMs).unref();
    return;
  }
  let closed = false;
  const closeSocket = (reason: CloseReason | undefined): void => {
    if (closed) return;
    closed = true;
    // The protocol already said why (an `error` event) except when the queue itself gave up.
    if (reason?.code === 'client_too_slow') {
      socket.write(`${JSON.stringify({ type: 'error', ...reason })}\n`);
    }
    socket.end();
    setTimeout(() => socket.destroy(), closeGraceMs).unref();
  };
  const connection = hub.connect('tcp', {
    write: (json) => write(socket, `${json}\n`),
    writeBatch: (items) => write(socket, `${items.map((item) => item.json).join('\n')}\n`),
    close: closeSocket,
  });
  void connection.closed.then(closeSocket);
  const reader = new LineReader(connection, socket, hub.limits.maxMessageBytes);
  socket.on('data', (chunk: Buffer) => reader.push(chunk));
  socket.on('close', () => {
    closed = true;
    void connection.close({ code: 'disconnected', message: 'the client disconnected' });
  });
}

function write(socket: Socket, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (socket.destroyed) {
      reject(new Error('the connection is closed'));
      return;
    }
    socket.write(text, (error) => (error instanceof Error ? reject(error) : resolve()));
  });
}

/** Splits the byte stream into lines, checks each, and hands them to the connection in order. */
class LineReader {
  private readonly connection: ChannelConnection;
  private readonly socket: Socket;
  private readonly maxBytes: number;
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** In a line that was too long: drop bytes up to its newline. */
  private skipping = false;
  private firstLine = true;
  private inFlight = 0;

  constructor(connection: ChannelConnection, socket: Socket, maxBytes: number) {
    this.connection = connection;
    this.socket = socket;
    this.maxBytes = maxBytes;
  }

  push(chunk: Buffer): void {
    let rest = chunk;
    if (this.firstLine && this.looksLikeHttp(rest)) {
      this.socket.destroy();
      return;
    }
    for (;;) {
      const newline = rest.indexOf(0x0a);
      if (newline === -1) break;
      const tail = rest.subarray(0, newline);
      rest = rest.subarray(newline + 1);
      if (this.skipping) {
        this.skipping = false;
        continue;
      }
      this.pending.push(tail);
      this.pendingBytes += tail.length;
      this.line(this.take());
      if (this.socket.destroyed) return;
    }
    if (rest.length === 0 || this.skipping) return;
    this.pending.push(rest);
    this.pendingBytes += rest.length;
    if (this.pendingBytes > this.maxBytes) {
      // Over the limit with no newline yet: say so now, and drop the rest of that line.
      this.take();
      this.skipping = true;
      this.refuse('message_too_large', `message too large: over ${this.maxBytes} bytes`);
    }
  }

  /** The first bytes of a connection that start like an HTTP request (checked on every chunk
   * until the first line is complete, so a request split across packets is caught too). */
  private looksLikeHttp(chunk: Buffer): boolean {
    const head = Buffer.concat([...this.pending, chunk.subarray(0, longestHttpMethod)]);
    const text = head.subarray(0, longestHttpMethod).toString('latin1');
    if (httpLike.test(text)) return true;
    // Not HTTP once a line ended or there is enough to tell.
    if (chunk.includes(0x0a) || head.length >= longestHttpMethod) this.firstLine = false;
    return false;
  }

  private take(): Buffer {
    const [only] = this.pending;
    const line =
      this.pending.length === 1 && only !== undefined ? only : Buffer.concat(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    return line;
  }

  private line(bytes: Buffer): void {
    const body = bytes.at(-1) === 0x0d ? bytes.subarray(0, -1) : bytes;
    if (body.length === 0) return;
    if (body.length > this.maxBytes) {
      this.refuse(
        'message_too_large',
        `message too large: ${body.length} bytes, the limit is ${this.maxBytes}`,
      );
      return;
    }
    let text: string;
    try {
      text = this.decoder.decode(body);
    } catch {
      this.refuse('invalid_utf8', 'the line is not valid UTF-8: send JSON text encoded as UTF-8');
      return;
    }
    this.track(this.connection.handleLine(text));
  }

  private refuse(code: string, message: string): void {
    this.track(this.connection.refuseMessage(code, message));
  }

  /** Stops reading while too many messages wait, so a flood cannot grow memory without bound. */
  private track(handled: Promise<void>): void {
    this.inFlight += 1;
    if (this.inFlight === maxPendingMessages) this.socket.pause();
    void handled.finally(() => {
      this.inFlight -= 1;
      if (this.inFlight === maxPendingMessages - 1 && !this.socket.destroyed) this.socket.resume();
    });
  }
}
