// The page's one WebSocket (CH-4): hello first, typed sends, parsed events, and reconnects with
// backoff. No React here.
import {
  protocolVersion,
  serverEventSchema,
  type ClientMessage,
  type ServerEvent,
} from '@claw/channel/protocol';
import type { ConnectionStatus } from './state/types.js';

/** The part of the browser's WebSocket this client uses (a fake in tests). */
export interface SocketLike {
  readonly readyState: number;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

export interface ProtocolClientOptions {
  url: string;
  token: string;
  onEvent: (event: ServerEvent) => void;
  onStatus: (status: ConnectionStatus, detail?: string) => void;
  createSocket?: (url: string) => SocketLike;
  random?: () => number;
  /** Reports what did not parse (default: console.warn). */
  log?: (message: string, detail?: unknown) => void;
}

const openState = 1;
const unauthorizedClose = 4001;
const unsupportedClose = 4002;
const pingEveryMs = 25_000;
const pongWithinMs = 10_000;

/**
 * The wait before reconnect attempt `attempt` (0-based): exponential from 500 ms, capped at
 * 10 s, with jitter (50–100 % of it) so that many tabs do not come back in step.
 */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(10_000, 500 * 2 ** Math.min(attempt, 10));
  return Math.round(ceiling * (0.5 + random() * 0.5));
}

/** `ws://host/ws` or `wss://host/ws` for the page's own origin. */
export function socketUrl(location: { protocol: string; host: string }): string {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`;
}

export class ProtocolClient {
  private readonly options: ProtocolClientOptions;
  private socket: SocketLike | undefined;
  private ready = false;
  private stopped = true;
  private attempt = 0;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  private lastHeard = 0;
  private status: ConnectionStatus = 'disconnected';

  constructor(options: ProtocolClientOptions) {
    this.options = options;
  }

  /** True once `welcome` came on the current socket. */
  get connected(): boolean {
    return this.ready;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.attempt = 0;
    this.connect();
  }

  /** Closes the socket and stops reconnecting. */
  stop(status: ConnectionStatus = 'disconnected', detail?: string): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.stopHeartbeat();
    const socket = this.socket;
    this.socket = undefined;
    this.ready = false;
    socket?.close(1000, 'closed by the page');
    this.setStatus(status, detail);
  }

  /** Sends a message once the server welcomed this socket; false when it could not. */
  send(message: ClientMessage): boolean {
    if (!this.ready || this.socket?.readyState !== openState) return false;
    this.socket.send(JSON.stringify(message));
    return true;
  }

  /** Reconnects now instead of waiting out the backoff (the browser came back online). */
  retryNow(): void {
    if (this.stopped || this.socket !== undefined) return;
    clearTimeout(this.retryTimer);
    this.connect();
  }

  private connect(): void {
    this.setStatus(this.attempt === 0 ? 'connecting' : 'reconnecting');
    // The browser's WebSocket types its handlers with DOM events; SocketLike only needs their data.
    const create =
      this.options.createSocket ?? ((url: string) => new WebSocket(url) as unknown as SocketLike);
    let socket: SocketLike;
    try {
      socket = create(this.options.url);
    } catch (error) {
      this.options.log?.('could not open the WebSocket', error);
      this.scheduleRetry();
      return;
    }
    this.socket = socket;
    socket.onopen = () => {
      socket.send(JSON.stringify({ type: 'hello', token: this.options.token, protocol: protocolVersion }));
    };
    socket.onmessage = (message) => {
      if (socket === this.socket) this.receive(message.data);
    };
    socket.onclose = (event) => {
      if (socket === this.socket) this.closed(event.code, event.reason);
    };
    socket.onerror = () => undefined;
  }

  private receive(data: unknown): void {
    this.lastHeard = Date.now();
    let value: unknown;
    try {
      value = JSON.parse(String(data));
    } catch {
      this.warn('dropped a message that is not JSON', data);
      return;
    }
    const parsed = serverEventSchema.safeParse(value);
    if (!parsed.success) {
      this.warn('dropped an event that does not match the protocol', value);
      return;
    }
    const event = parsed.data;
    if (event.type === 'welcome') {
      this.ready = true;
      this.attempt = 0;
      this.startHeartbeat();
      this.setStatus('connected');
    } else if (event.type === 'error' && event.code === 'unauthorized') {
      this.options.onEvent(event);
      this.stop('unauthorized', event.message);
      return;
    } else if (event.type === 'error' && event.code === 'unsupported_protocol') {
      this.options.onEvent(event);
      this.stop('disconnected', event.message);
      return;
    }
    this.options.onEvent(event);
  }

  private closed(code: number, reason: string): void {
    this.socket = undefined;
    this.ready = false;
    this.stopHeartbeat();
    if (this.stopped) return;
    if (code === unauthorizedClose) {
      this.stop('unauthorized', reason || 'the server refused the token');
      return;
    }
    if (code === unsupportedClose) {
      this.stop('disconnected', reason || 'the server speaks another protocol version');
      return;
    }
    this.scheduleRetry(reason);
  }

  private scheduleRetry(reason?: string): void {
    this.socket = undefined;
    const delay = backoffDelay(this.attempt, this.options.random);
    this.attempt += 1;
    this.setStatus('reconnecting', reason || undefined);
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }

  /** A socket that went silent (no pong) is closed, so the reconnect starts. */
  private startHeartbeat(): void {
    this.stopHeartbeat();
    this.lastHeard = Date.now();
    this.heartbeat = setInterval(() => {
      if (Date.now() - this.lastHeard > pingEveryMs + pongWithinMs) {
        const socket = this.socket;
        this.closed(4000, 'no answer from the server');
        socket?.close(4000, 'no answer');
        return;
      }
      this.send({ type: 'ping' });
    }, pingEveryMs);
  }

  private stopHeartbeat(): void {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  private setStatus(status: ConnectionStatus, detail?: string): void {
    if (status === this.status && detail === undefined) return;
    this.status = status;
    this.options.onStatus(status, detail);
  }

  private warn(message: string, detail: unknown): void {
    (this.options.log ?? ((text, extra) => console.warn(text, extra)))(message, detail);
  }
}
