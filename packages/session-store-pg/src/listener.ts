import net from 'node:net';
import type { Duplex } from 'node:stream';
import { settlesWithin } from '@claw/core';
import pg from 'pg';

/** Options of {@link PgListener}. */
export interface PgListenerOptions {
  /** How to connect: the pool's settings (a dedicated connection, never one of the pool's). */
  config: pg.ClientConfig;
  channels: readonly string[];
  onNotification: (channel: string, payload: string) => void;
  /**
   * Called after every (re)connection, once LISTEN is in place: notifications sent while it was
   * down are lost, so whoever waits must look at the rows again.
   */
  onConnected: () => void;
  /** First wait before reconnecting, in ms; doubled up to `maxRetryMs`. Default 250. */
  retryMs?: number;
  /** Default 5000. */
  maxRetryMs?: number;
  /**
   * How long `close` waits for the server to see the connection end, in ms, before it drops the
   * socket (a database that stopped answering never does). Default 5000.
   */
  closeTimeoutMs?: number;
}

/**
 * One dedicated connection that LISTENs (SCALE-4), reconnected with backoff whenever it drops
 * (a terminated backend, a database restart). Notifications only wake readers up: the data is
 * read from rows, so one lost while reconnecting delays a reader and loses nothing.
 */
export class PgListener {
  private readonly options: PgListenerOptions;
  private client: pg.Client | undefined;
  /** The socket of each client made, to drop it when ending it politely takes too long. */
  private readonly sockets = new WeakMap<pg.Client, Duplex>();
  private connecting: Promise<void> | undefined;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private retryMs: number;
  private closed = false;

  constructor(options: PgListenerOptions) {
    this.options = options;
    this.retryMs = options.retryMs ?? 250;
  }

  /** Connects (once); later drops reconnect on their own. Resolves once listening or failed. */
  start(): Promise<void> {
    this.connecting ??= this.connect();
    return this.connecting;
  }

  /**
   * Stops listening and reconnecting. Resolves within `timeoutMs` (default: `closeTimeoutMs`)
   * and a little more: past it, the socket is dropped. Resolves true when the connection ended
   * in time, false when it had to be dropped.
   */
  async close(options: { timeoutMs?: number } = {}): Promise<boolean> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    if (client === undefined) return true;
    return this.end(client, options.timeoutMs ?? this.options.closeTimeoutMs ?? 5000);
  }

  /** Ends `client`, dropping its socket when that takes longer than `ms`. */
  private async end(client: pg.Client, ms: number): Promise<boolean> {
    const ended = client.end().catch(() => undefined);
    if (await settlesWithin(ended, ms)) return true;
    this.sockets.get(client)?.destroy();
    await settlesWithin(ended, 1000);
    return false;
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const { config } = this.options;
    const make = config.stream;
    let socket: Duplex | undefined;
    const client = new pg.Client({
      ...config,
      stream: () => (socket = make?.() ?? new net.Socket()),
    });
    if (socket !== undefined) this.sockets.set(client, socket);
    let dropped = false;
    const drop = (): void => {
      if (dropped) return;
      dropped = true;
      if (this.client === client) this.client = undefined;
      void this.end(client, this.options.closeTimeoutMs ?? 5000);
      this.retryLater();
    };
    client.on('error', drop);
    client.on('end', drop);
    client.on('notification', (message) => {
      this.options.onNotification(message.channel, message.payload ?? '');
    });
    try {
      await client.connect();
      for (const channel of this.options.channels) {
        await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      }
    } catch {
      drop();
      return;
    }
    if (dropped) return;
    if (this.closed) {
      await this.end(client, this.options.closeTimeoutMs ?? 5000);
      return;
    }
    this.client = client;
    this.retryMs = this.options.retryMs ?? 250;
    this.options.onConnected();
  }

  private retryLater(): void {
    if (this.closed) return;
    clearTimeout(this.retryTimer);
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, this.options.maxRetryMs ?? 5000);
    this.retryTimer = setTimeout(() => {
      this.connecting = this.connect();
    }, wait);
    this.retryTimer.unref();
  }
}
