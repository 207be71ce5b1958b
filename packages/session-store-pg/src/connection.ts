import net from 'node:net';
import { ClawError, errorMessage } from '@claw/core';
import type pg from 'pg';
import { PgSessionError } from './errors.js';

/**
 * How every PostgreSQL connection of a log bounds its waits (LIFE-2): a database that stops
 * answering (packets dropped, not refused) ends each wait with an error, never a hang.
 */
export interface PgConnectionSettings {
  /**
   * Connecting (TCP, TLS, start-up), and waiting for a free connection of the pool, in ms.
   * URL parameter `connect_timeout` (seconds, as libpq reads it).
   */
  connectTimeoutMs: number;
  /**
   * The server's `statement_timeout`: a statement running, or waiting on a lock, this long is
   * cancelled. URL parameter `statement_timeout` (ms).
   */
  statementTimeoutMs: number;
  /**
   * A query with no answer at all for this long fails on the client's side (the server cannot
   * cancel what it never received) and its connection is dropped. URL parameter `query_timeout`
   * (ms). Above `statementTimeoutMs`, so that a database that answers says why itself.
   */
  queryTimeoutMs: number;
  /**
   * The server's `idle_in_transaction_session_timeout`: a connection idle inside a transaction
   * this long is ended, with its locks, so an instance frozen in the middle of a write cannot hold
   * a session's row past its lease. URL parameter `idle_in_transaction_session_timeout` (ms).
   */
  idleInTransactionTimeoutMs: number;
  /** TCP keep-alive on every connection. URL parameter `keepalives` (`0` turns it off). */
  keepAlive: boolean;
  /**
   * Idle time before the first keep-alive probe, in ms: a dead peer of an idle connection (the
   * LISTEN one above all) is noticed. URL parameter `keepalives_idle` (seconds, as libpq).
   */
  keepAliveInitialDelayMs: number;
}

/** {@link PgConnectionSettings}, each optional (a default, or the URL's parameter, applies). */
export type PgConnectionOptions = Partial<PgConnectionSettings>;

/**
 * The defaults: 5 s to connect, 10 s for a statement, 15 s for any answer at all, 5 s idle in a
 * transaction (half the default lease), keep-alive probes after 10 s idle.
 */
export const defaultConnectionSettings: Readonly<PgConnectionSettings> = Object.freeze({
  connectTimeoutMs: 5_000,
  statementTimeoutMs: 10_000,
  queryTimeoutMs: 15_000,
  idleInTransactionTimeoutMs: 5_000,
  keepAlive: true,
  keepAliveInitialDelayMs: 10_000,
});

/** Unless given, the query timeout is the statement timeout and this much more. */
const queryTimeoutMarginMs = 5_000;

/** The URL parameters read, each with its setting and its unit (ms per unit). */
const urlParameters = {
  connect_timeout: ['connectTimeoutMs', 1000],
  statement_timeout: ['statementTimeoutMs', 1],
  query_timeout: ['queryTimeoutMs', 1],
  idle_in_transaction_session_timeout: ['idleInTransactionTimeoutMs', 1],
  keepalives_idle: ['keepAliveInitialDelayMs', 1000],
} as const;

/**
 * The settings for `connectionString`: `given` over the URL's own parameters over the defaults;
 * and the URL without those parameters (the pool is given the settings instead).
 *
 * @throws RangeError when a timeout is not a whole number above 0.
 */
export function connectionSettingsOf(
  connectionString: string,
  given: PgConnectionOptions = {},
): { settings: PgConnectionSettings; connectionString: string } {
  const fromUrl: PgConnectionOptions = {};
  let stripped = connectionString;
  let url: URL | undefined;
  try {
    url = new URL(connectionString);
  } catch {
    // Not a URL (e.g. key=value pairs): nothing to read from it.
  }
  if (url !== undefined) {
    let found = false;
    for (const [name, [setting, unit]] of Object.entries(urlParameters)) {
      const text = url.searchParams.get(name);
      if (text === null) continue;
      found = true;
      url.searchParams.delete(name);
      fromUrl[setting] = whole(`the URL parameter ${name}`, text) * unit;
    }
    const keepalives = url.searchParams.get('keepalives');
    if (keepalives !== null) {
      found = true;
      url.searchParams.delete('keepalives');
      fromUrl.keepAlive = keepalives.trim() !== '0';
    }
    if (found) stripped = url.toString();
  }
  const chosen = { ...fromUrl, ...definedOf(given) };
  const settings: PgConnectionSettings = {
    ...defaultConnectionSettings,
    ...chosen,
    queryTimeoutMs: chosen.queryTimeoutMs ?? (chosen.statementTimeoutMs === undefined
      ? defaultConnectionSettings.queryTimeoutMs
      : chosen.statementTimeoutMs + queryTimeoutMarginMs),
  };
  for (const [name, value] of Object.entries(settings)) {
    if (typeof value === 'number') whole(name, value);
  }
  return { settings, connectionString: stripped };
}

function definedOf(options: PgConnectionOptions): PgConnectionOptions {
  const defined: PgConnectionOptions = Object.fromEntries(
    Object.entries(options).filter(([, value]) => value !== undefined),
  );
  return defined;
}

function whole(name: string, value: string | number): number {
  const number = typeof value === 'number' ? value : Number(value.trim());
  if (!Number.isSafeInteger(number) || number <= 0 || (typeof value === 'string' && value.trim() === '')) {
    throw new RangeError(`${name} must be a whole number above 0; got ${JSON.stringify(value)}`);
  }
  return number;
}

/** The `pg` settings of a pool (or client) that bounds its waits with `settings`. */
export function poolConfigOf(settings: PgConnectionSettings): pg.PoolConfig {
  return {
    connectionTimeoutMillis: settings.connectTimeoutMs,
    statement_timeout: settings.statementTimeoutMs,
    query_timeout: settings.queryTimeoutMs,
    idle_in_transaction_session_timeout: settings.idleInTransactionTimeoutMs,
    keepAlive: settings.keepAlive,
    keepAliveInitialDelayMillis: settings.keepAliveInitialDelayMs,
  };
}

/**
 * The settings a pool was made with, as far as its options tell (a pool made elsewhere may set
 * none: then waits it does not bound are not named in errors).
 */
export function connectionSettingsOfPool(pool: pg.Pool): Partial<PgConnectionSettings> {
  const options = pool.options as pg.PoolConfig;
  const positive = (value: unknown) =>
    typeof value === 'number' && value > 0 ? value : undefined;
  return definedOf({
    connectTimeoutMs: positive(options.connectionTimeoutMillis),
    statementTimeoutMs: positive(options.statement_timeout),
    queryTimeoutMs: positive(options.query_timeout),
    idleInTransactionTimeoutMs: positive(options.idle_in_transaction_session_timeout),
    keepAlive: options.keepAlive,
    keepAliveInitialDelayMs: positive(options.keepAliveInitialDelayMillis),
  });
}

/**
 * The sockets of a pool's connections (and of a LISTEN connection made with its options), so
 * that a shutdown the database does not answer can drop them (LIFE-2): a connection ended
 * politely waits for the server's goodbye, which a database that stopped answering never sends.
 */
export class SocketSet {
  private readonly sockets = new Set<net.Socket>();

  /** For `pg`'s `stream` option: a new socket, tracked until it closes. */
  readonly stream = (): net.Socket => {
    const socket = new net.Socket();
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    return socket;
  };

  get size(): number {
    return this.sockets.size;
  }

  /** Drops every socket at once. */
  destroyAll(): void {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }
}

/**
 * A connection of `pool` for a transaction, until its `release`. While it is checked out, an
 * error of its connection (dropped, ended by the server for idling in a transaction) reaches the
 * query in flight, or the next one: it never goes unhandled (which would end the process).
 */
export async function checkOut(pool: pg.Pool): Promise<pg.PoolClient> {
  const client = await pool.connect();
  const ignore = (): void => undefined;
  client.on('error', ignore);
  const release = client.release.bind(client);
  client.release = (error?: Error | boolean) => {
    client.removeListener('error', ignore);
    release(error);
  };
  return client;
}

/**
 * What went wrong, in words, when `error` says PostgreSQL could not be reached or did not answer
 * in time; undefined for any other error (a constraint, a bad statement).
 */
export function unavailableReason(
  error: unknown,
  settings: Partial<PgConnectionSettings>,
): string | undefined {
  // claw's own errors say what happened already.
  if (!(error instanceof Error) || error instanceof ClawError) return undefined;
  const ms = (value: number | undefined) => (value === undefined ? '' : ` within ${value} ms`);
  const code = (error as { code?: unknown }).code;
  const message = error.message;
  if (message === 'Query read timeout') {
    return `PostgreSQL did not answer${ms(settings.queryTimeoutMs)} (query timeout)`;
  }
  if (code === '57014' && /statement timeout/.test(message)) {
    return 'PostgreSQL cancelled the statement: it ran or waited on a lock past the statement ' +
      `timeout${settings.statementTimeoutMs === undefined ? '' : ` (${settings.statementTimeoutMs} ms)`}`;
  }
  if (code === '25P03') {
    return 'PostgreSQL ended the connection, idle inside a transaction past its timeout' +
      `${settings.idleInTransactionTimeoutMs === undefined ? '' : ` (${settings.idleInTransactionTimeoutMs} ms)`}`;
  }
  if (/timeout exceeded when trying to connect|connection timeout|timeout expired/i.test(message)) {
    return `claw could not connect to PostgreSQL${ms(settings.connectTimeoutMs)} (connect timeout)`;
  }
  const errno = typeof code === 'string' ? code : '';
  if (/^(ECONNREFUSED|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN)$/.test(errno)) {
    return `claw could not reach PostgreSQL (${errorMessage(error)})`;
  }
  if (
    /^(ECONNRESET|EPIPE)$/.test(errno) ||
    // 57P01-57P03: the server is shutting down, crashed or not accepting connections yet.
    /^57P0[1-3]$/.test(errno) ||
    /Connection terminated|not queryable/.test(message)
  ) {
    return `claw lost its connection to PostgreSQL (${errorMessage(error)})`;
  }
  return undefined;
}

/**
 * `error` as `store_unavailable` (LIFE-2), naming what was being done and what timed out, when
 * PostgreSQL could not be reached or did not answer in time; else undefined.
 */
export function storeUnavailable(
  error: unknown,
  doing: string,
  settings: Partial<PgConnectionSettings>,
): PgSessionError | undefined {
  if (error instanceof PgSessionError) return error.code === 'store_unavailable' ? error : undefined;
  const reason = unavailableReason(error, settings);
  if (reason === undefined) return undefined;
  return new PgSessionError(
    `${reason} while ${doing}. Check that the database is up and reachable from this machine.`,
    { code: 'store_unavailable', cause: error },
  );
}
