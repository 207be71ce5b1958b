import { SessionLogError, type LogRecord } from '@claw/session-store';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  PgListener,
  PgSessionError,
  PgSessionLog,
  SessionLeaseLostError,
  defaultConnectionSettings,
  type PgConnectionOptions,
} from '../src/index.js';
import { TcpProxy, postgresAvailable } from '../src/testing/index.js';
import { closeLogs, emptySnapshot, openLog, sharedCluster } from './fixtures.js';

// LIFE-2: a database that stops answering (packets dropped, not refused) must not hang a write,
// a lease renewal, `hello` (opening the store, taking a lease) or shutdown. The database sits
// behind a proxy that can turn into a black hole: the sockets stay open, nothing is answered.

/** Short timeouts: each wait below ends within seconds, yet not at a busy machine's hiccup. */
const short: PgConnectionOptions = {
  connectTimeoutMs: 1_000,
  statementTimeoutMs: 1_000,
  queryTimeoutMs: 1_500,
  idleInTransactionTimeoutMs: 1_000,
  keepAliveInitialDelayMs: 1_000,
};

/** Far beyond every timeout above: reaching it means the call hung. */
const hangsAfterMs = 10_000;

type Outcome = { settled: 'resolved'; value: unknown } | { settled: 'rejected'; error: unknown } | { settled: 'hung' };

/** How `promise` ended, or `hung` when it had not ended `hangsAfterMs` later. */
async function outcome(promise: Promise<unknown>): Promise<Outcome> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<Outcome>((resolve) => {
    timer = setTimeout(() => resolve({ settled: 'hung' }), hangsAfterMs);
  });
  try {
    return await Promise.race([
      promise.then(
        (value): Outcome => ({ settled: 'resolved', value }),
        (error: unknown): Outcome => ({ settled: 'rejected', error }),
      ),
      hung,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function record(seq: number): LogRecord {
  const change = { type: 'append' as const, messages: [{ role: 'user' as const, content: `m${seq}` }] };
  return { seq, at: '2030-01-01T00:00:01.000Z', change };
}

describe.skipIf(!postgresAvailable())('PgSessionLog against a database that stopped answering (LIFE-2)', () => {
  const { freshDatabase } = sharedCluster();
  const proxies: TcpProxy[] = [];
  afterEach(async () => {
    // The proxies first: a log still waiting on one is set free.
    await Promise.allSettled(proxies.splice(0).map((proxy) => proxy.close()));
    await closeLogs();
  });

  /** A fresh database behind a new proxy: its URL through the proxy, and the proxy. */
  async function behindProxy(): Promise<{ url: string; direct: string; proxy: TcpProxy }> {
    const direct = await freshDatabase();
    const proxy = await TcpProxy.start({ port: Number(new URL(direct).port) });
    proxies.push(proxy);
    return { url: proxy.url(direct), direct, proxy };
  }

  it('fails a write with store_unavailable naming the query timeout, instead of hanging', async () => {
    const { url, proxy } = await behindProxy();
    const log = await openLog(url, { instanceId: 'a', connection: short });
    await log.acquire('s');
    await log.compact('s', emptySnapshot('s'));
    await log.append('s', [record(1)], { sync: true });

    proxy.blackHole();
    const write = await outcome(log.append('s', [record(2)], { sync: true }));
    expect(write.settled).toBe('rejected');
    const error = (write as { error: unknown }).error;
    expect(error).toBeInstanceOf(SessionLogError);
    expect(error).toMatchObject({ code: 'session_write_failed' });
    const cause = (error as Error).cause;
    expect(cause).toBeInstanceOf(PgSessionError);
    expect(cause).toMatchObject({ code: 'store_unavailable' });
    expect((error as Error).message).toMatch(/did not answer within 1500 ms \(query timeout\)/);

    // A connection of its own is no way round: connecting times out too.
    const more = await outcome(Promise.all(
      ['t1', 't2', 't3'].map((id) => log.compact(id, emptySnapshot(id)).catch((failure: unknown) => failure)),
    ));
    expect(more.settled).toBe('resolved');
    for (const failure of (more as { value: unknown[] }).value) {
      expect(failure).toBeInstanceOf(SessionLogError);
      expect((failure as Error).cause).toMatchObject({ code: 'store_unavailable' });
    }
  });

  it('refuses to open the store (hello) and to take a lease with store_unavailable, instead of hanging', async () => {
    const { url, proxy } = await behindProxy();
    const log = await openLog(url, { instanceId: 'a', connection: short });
    proxy.blackHole();

    const lease = await outcome(log.acquire('s'));
    expect(lease.settled).toBe('rejected');
    expect((lease as { error: unknown }).error).toMatchObject({ code: 'store_unavailable' });
    expect(((lease as { error: Error }).error).message)
      .toMatch(/did not answer within 1500 ms \(query timeout\) while taking the lease of PostgreSQL session "s"/);

    const opened = await outcome(PgSessionLog.open({ connectionString: url, connection: short }));
    expect(opened.settled).toBe('rejected');
    const error = (opened as { error: unknown }).error;
    expect(error).toBeInstanceOf(PgSessionError);
    expect(error).toMatchObject({ code: 'store_unavailable' });
    expect((error as Error).message).toMatch(/could not connect to PostgreSQL within 1000 ms \(connect timeout\)/);
  });

  it('ends a lease renewal that gets no answer with an error, which the self-fence names', async () => {
    const { url, proxy } = await behindProxy();
    const log = await openLog(url, {
      instanceId: 'a',
      leaseMs: 6_000,
      renewEveryMs: 500,
      connection: short,
    });
    const lease = await log.acquire('s');
    proxy.blackHole();

    // The first renewal (at 500 ms) times out at 2000 ms; the fence comes at half the lease
    // (3000 ms) after the last renewal that worked.
    const lost = await outcome(lease.lost);
    expect(lost.settled).toBe('resolved');
    const error = (lost as { value: unknown }).value;
    expect(error).toBeInstanceOf(SessionLeaseLostError);
    expect(error).toMatchObject({ code: 'lease_lost', reason: 'renewal_failed' });
    // It gave up because renewals failed, each ended by its timeout: not because one hung.
    const cause = (error as Error).cause as Error | undefined;
    expect(cause?.message).toMatch(/renewing the lease .*did not answer within 1500 ms \(query timeout\)/);
  });

  it('closes within its bound though the database stopped answering: leases, listener and pool', async () => {
    const { url, proxy } = await behindProxy();
    const log = await PgSessionLog.open({
      connectionString: url,
      instanceId: 'a',
      connection: short,
      closeTimeoutMs: 1_000,
    });
    await log.acquire('s');
    await log.acquire('t');
    // The LISTEN connection is up once it first wakes the watcher.
    let woken = 0;
    const unwatch = log.watch('other', () => void (woken += 1));
    await vi.waitFor(() => expect(woken).toBeGreaterThan(0), { timeout: 5_000, interval: 10 });
    expect(proxy.connections).toBeGreaterThanOrEqual(2);

    proxy.blackHole();
    const closed = await outcome(log.close());
    unwatch();
    expect(closed.settled).toBe('rejected');
    const error = (closed as { error: unknown }).error;
    expect(error).toMatchObject({ code: 'store_unavailable' });
    expect((error as Error).message).toMatch(/giving up its leases/);
    // Every connection it had is closed on its side: none keeps the process alive.
    expect(log.pool.ended).toBe(true);
    await vi.waitFor(() => expect(proxy.connections).toBe(0), { timeout: 2_000, interval: 10 });
  });

  it('closes a LISTEN connection within its bound though the database stopped answering', async () => {
    const { url, proxy } = await behindProxy();
    let connected = 0;
    const listener = new PgListener({
      config: { connectionString: url },
      channels: ['claw_changes'],
      onNotification: () => undefined,
      onConnected: () => void (connected += 1),
      closeTimeoutMs: 300,
    });
    await listener.start();
    expect(connected).toBe(1);
    proxy.blackHole();
    const closed = await outcome(listener.close());
    // Resolved false: not ended by the server, dropped.
    expect(closed).toEqual({ settled: 'resolved', value: false });
    await vi.waitFor(() => expect(proxy.connections).toBe(0), { timeout: 2_000, interval: 10 });
  });

  it('fails a write that waits on a lock past the statement timeout with store_unavailable naming it', async () => {
    const url = await freshDatabase();
    const log = await openLog(url, { instanceId: 'a', connection: { ...short, queryTimeoutMs: 5_000 } });
    await log.acquire('s');
    await log.compact('s', emptySnapshot('s'));
    const blocker = new pg.Client({ connectionString: url });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT 1 FROM claw_sessions WHERE id = \'s\' FOR UPDATE');
      const write = await outcome(log.append('s', [record(1)], { sync: true }));
      expect(write.settled).toBe('rejected');
      const error = (write as { error: Error }).error;
      expect(error).toMatchObject({ code: 'session_write_failed', cause: { code: 'store_unavailable' } });
      expect(error.message).toMatch(/statement timeout \(1000 ms\)/);
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    // The database answers again: so does the log.
    await log.append('s', [record(1)], { sync: true });
  });

  it('fails a write whose connection drops in the middle of its transaction, leaving nothing unhandled', async () => {
    const { url, direct, proxy } = await behindProxy();
    const log = await openLog(url, { instanceId: 'a', connection: { ...short, statementTimeoutMs: 5_000, queryTimeoutMs: 8_000 } });
    await log.acquire('s');
    await log.compact('s', emptySnapshot('s'));
    const blocker = new pg.Client({ connectionString: direct });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT 1 FROM claw_sessions WHERE id = \'s\' FOR UPDATE');
      const write = outcome(log.append('s', [record(1)], { sync: true }));
      // The write waits on the row, inside its transaction, when its connection drops.
      await vi.waitFor(async () => {
        const waiting = await blocker.query(
          'SELECT 1 FROM pg_stat_activity WHERE wait_event_type = \'Lock\' AND datname = current_database()',
        );
        expect(waiting.rowCount).toBe(1);
      }, { timeout: 5_000, interval: 10 });
      proxy.dropAll();
      const ended = await write;
      expect(ended.settled).toBe('rejected');
      const error = (ended as { error: Error }).error;
      expect(error).toMatchObject({ code: 'session_write_failed', cause: { code: 'store_unavailable' } });
      expect(error.message).toMatch(/lost its connection to PostgreSQL/);
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    // A new connection serves the next write.
    await log.append('s', [record(1)], { sync: true });
  });

  it('every connection of the pool has a listener for its errors, even when handed out (a restart never crashes)', async () => {
    const log = await openLog(await freshDatabase());
    // Handed out by the pool itself, before anyone could listen: the pool's own listener is off.
    const client = await log.pool.connect();
    try {
      expect(() => client.emit('error', new Error('terminating connection due to administrator command'))).not.toThrow();
    } finally {
      client.release(true);
    }
  });

  it('sets the timeouts and keep-alive on every connection, from its options over the URL over the defaults', async () => {
    const url = await freshDatabase();
    const settingOf = async (log: PgSessionLog, name: string) => {
      const rows = await log.pool.query<Record<string, string>>(`SHOW ${name}`);
      return rows.rows[0]?.[name];
    };

    const plain = await openLog(url);
    expect(plain.connection).toEqual(defaultConnectionSettings);
    expect(defaultConnectionSettings).toEqual({
      connectTimeoutMs: 5_000,
      statementTimeoutMs: 10_000,
      queryTimeoutMs: 15_000,
      idleInTransactionTimeoutMs: 5_000,
      keepAlive: true,
      keepAliveInitialDelayMs: 10_000,
    });
    expect(await settingOf(plain, 'statement_timeout')).toBe('10s');
    expect(await settingOf(plain, 'idle_in_transaction_session_timeout')).toBe('5s');
    expect(plain.pool.options).toMatchObject({
      connectionTimeoutMillis: 5_000,
      query_timeout: 15_000,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    expect(plain.closeTimeoutMs).toBe(5_000);

    // The URL's own parameters (libpq's connect_timeout and keepalives_idle are in seconds).
    const fromUrl = await openLog(
      `${url}?connect_timeout=3&statement_timeout=7000&query_timeout=9000` +
      '&idle_in_transaction_session_timeout=4000&keepalives_idle=20&application_name=x',
    );
    expect(fromUrl.connection).toEqual({
      connectTimeoutMs: 3_000,
      statementTimeoutMs: 7_000,
      queryTimeoutMs: 9_000,
      idleInTransactionTimeoutMs: 4_000,
      keepAlive: true,
      keepAliveInitialDelayMs: 20_000,
    });
    expect(await settingOf(fromUrl, 'statement_timeout')).toBe('7s');
    expect(await settingOf(fromUrl, 'idle_in_transaction_session_timeout')).toBe('4s');

    // Options win over the URL; a statement timeout alone moves the query timeout along.
    const given = await openLog(`${url}?statement_timeout=7000&keepalives=0`, {
      connection: { statementTimeoutMs: 2_000, idleInTransactionTimeoutMs: 1_000 },
    });
    expect(given.connection).toMatchObject({
      statementTimeoutMs: 2_000,
      queryTimeoutMs: 7_000,
      idleInTransactionTimeoutMs: 1_000,
      keepAlive: false,
    });
    expect(await settingOf(given, 'statement_timeout')).toBe('2s');
    expect(await settingOf(given, 'idle_in_transaction_session_timeout')).toBe('1s');
    expect(given.pool.options).toMatchObject({ keepAlive: false });

    // A session idle inside a transaction past its timeout is ended by the server.
    const client = await given.pool.connect();
    const errors: unknown[] = [];
    client.on('error', (error) => errors.push(error));
    try {
      await client.query('BEGIN');
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await expect(client.query('SELECT 1')).rejects.toThrow();
      expect(errors[0]).toMatchObject({ code: '25P03' });
    } finally {
      client.release(true);
    }

    await expect(openLog(url, { connection: { statementTimeoutMs: 0 } })).rejects.toThrow(RangeError);
    await expect(openLog(`${url}?query_timeout=soon`)).rejects.toThrow(RangeError);
  });
});
