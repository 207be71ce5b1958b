import { SessionLockedError, SessionStore, toolCallStartedText } from '@claw/session-store';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SessionLeaseLostError, type PgSessionLog } from '../src/index.js';
import { postgresAvailable } from '../src/testing/index.js';
import { ManualTimers, closeLogs, emptySnapshot, openLog, sharedCluster } from './fixtures.js';

const workDir = '/shared/workspace';
const leaseMs = 10_000;
const renewEveryMs = 3_000;

/** Lets the lease lapse on the database clock, as if its owner had been frozen for the whole lease. */
async function lapse(log: PgSessionLog, id: string): Promise<void> {
  await log.pool.query('UPDATE claw_sessions SET lease_until = now() - interval \'1 millisecond\' WHERE id = $1', [id]);
}

/** The database clock now, in ms since the epoch: leases run on it. */
async function databaseNow(log: PgSessionLog): Promise<number> {
  const rows = await log.pool.query<{ now_ms: number }>(
    'SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms',
  );
  return rows.rows[0]?.now_ms ?? Number.NaN;
}

/** A renewal's query gets its answer however busy the machine: a generous wait for it. */
const renewalWait = { timeout: 10_000, interval: 20 };

async function leaseRow(log: PgSessionLog, id: string) {
  const rows = await log.pool.query<{
    epoch: string;
    owner_instance: string | null;
    remaining_ms: number | null;
    until_ms: number | null;
  }>(
    `SELECT epoch, owner_instance, (extract(epoch FROM lease_until - now()) * 1000)::float8 AS remaining_ms,
       (extract(epoch FROM lease_until) * 1000)::float8 AS until_ms
     FROM claw_sessions WHERE id = $1`,
    [id],
  );
  return rows.rows[0];
}

describe.skipIf(!postgresAvailable())('PgSessionLog leases (SCALE-2, SCALE-3)', () => {
  const { freshDatabase } = sharedCluster();
  afterEach(closeLogs);

  it('holds a lease on the database clock, renews it every renewEveryMs, and frees it on release', async () => {
    const url = await freshDatabase();
    const timers = new ManualTimers();
    const log = await openLog(url, { instanceId: 'a', leaseMs, renewEveryMs, setTimer: timers.setTimer });
    // A whole lease from the moment of the acquire on the database clock, however long that took.
    const beforeAcquire = await databaseNow(log);
    const lease = await log.acquire('s');
    const afterAcquire = await databaseNow(log);
    const before = await leaseRow(log, 's');
    expect(before).toMatchObject({ epoch: '1', owner_instance: 'a' });
    expect(before?.until_ms).toBeGreaterThanOrEqual(beforeAcquire + leaseMs);
    expect(before?.until_ms).toBeLessThanOrEqual(afterAcquire + leaseMs);
    expect(before?.remaining_ms).toBeLessThanOrEqual(leaseMs);
    // Shorten it, then let one renewal run: it is extended to a whole lease again.
    await log.pool.query('UPDATE claw_sessions SET lease_until = now() + interval \'1 second\' WHERE id = \'s\'');
    const beforeRenewal = await databaseNow(log);
    timers.advance(renewEveryMs);
    await vi.waitFor(
      async () => expect((await leaseRow(log, 's'))?.until_ms).toBeGreaterThanOrEqual(beforeRenewal + leaseMs),
      renewalWait,
    );
    await lease.release();
    expect(await leaseRow(log, 's')).toBeUndefined();
    expect(timers.pending).toBe(0);
  });

  it('defaults to a 10 s lease renewed every 3 s, and refuses a renewal interval of half the lease or more', async () => {
    const url = await freshDatabase();
    const log = await openLog(url);
    expect([log.leaseMs, log.renewEveryMs]).toEqual([10_000, 3_000]);
    await expect(openLog(url, { leaseMs: 1000, renewEveryMs: 500 })).rejects.toThrow(RangeError);
  });

  it('keeps a live lease from other instances, and lets one take over with epoch + 1 once it lapses', async () => {
    const url = await freshDatabase();
    const timers = new ManualTimers();
    const lostOnA: SessionLeaseLostError[] = [];
    const a = await openLog(url, { instanceId: 'a', setTimer: timers.setTimer, onLeaseLost: (error) => lostOnA.push(error) });
    const b = await openLog(url, { instanceId: 'b', setTimer: timers.setTimer });
    const leaseA = await a.acquire('s');
    await expect(b.acquire('s')).rejects.toBeInstanceOf(SessionLockedError);
    await lapse(a, 's');
    const leaseB = await b.acquire('s');
    expect(leaseB).toMatchObject({ epoch: 2, tookOver: true });
    // A's next renewal finds the session gone to B: A learns it lost the lease.
    timers.advance(renewEveryMs);
    const lost = await leaseA.lost;
    expect(lost).toMatchObject({ code: 'lease_lost', reason: 'taken_over', sessionId: 's' });
    expect(lostOnA).toEqual([lost]);
    await leaseA.release();
    // A's release did not free B's lease.
    expect(await leaseRow(b, 's')).toMatchObject({ epoch: '2', owner_instance: 'b' });
    await leaseB.release();
  });

  it('rejects a frozen former owner\'s late write with lease_lost, writing nothing, and tells it once', async () => {
    const url = await freshDatabase();
    const timers = new ManualTimers();
    const lostOnA: SessionLeaseLostError[] = [];
    const a = await openLog(url, { instanceId: 'a', setTimer: timers.setTimer, onLeaseLost: (error) => lostOnA.push(error) });
    const b = await openLog(url, { instanceId: 'b', setTimer: timers.setTimer });
    const storeA = new SessionStore({ log: a });
    const { session } = await storeA.open('s', { workDir });
    await session.append({ role: 'user', content: 'run it' }, {
      role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'bash', arguments: '{"command":"sleep 5"}' }],
    });
    await session.toolStarted({ id: 'c1', name: 'bash', arguments: '{"command":"sleep 5"}' });
    // A freezes (no renewal runs), its lease lapses, B takes over and repairs.
    await lapse(a, 's');
    const storeB = new SessionStore({ log: b });
    const leaseB = await storeB.open('s', { workDir });
    const onB = leaseB.session;
    expect(onB.history().at(-1)).toEqual({ role: 'tool', toolCallId: 'c1', content: toolCallStartedText, isError: true });
    const seqOnB = (await b.load('s'))?.records.at(-1)?.seq;

    // A wakes up and writes what its tool produced: rejected.
    const late = await session.append({ role: 'tool', toolCallId: 'c1', content: 'late output' })
      .catch((error: unknown) => error);
    expect((late as Error).cause).toBeInstanceOf(SessionLeaseLostError);
    expect(lostOnA).toHaveLength(1);
    expect(lostOnA[0]).toMatchObject({ code: 'lease_lost', reason: 'taken_over' });
    const direct = await a.append('s', [], { sync: false }).catch((error: unknown) => error);
    expect(direct).toBe(lostOnA[0]);
    const stored = await b.load('s');
    expect(stored?.records.at(-1)?.seq).toBe(seqOnB);
    expect(JSON.stringify(stored)).not.toContain('late output');
    await leaseB.release();
    await storeB.close();
    await storeA.close().catch(() => undefined);
  });

  it('fences itself when renewals hang for half the lease, before the lease can lapse', async () => {
    const url = await freshDatabase();
    const timers = new ManualTimers();
    const lost: SessionLeaseLostError[] = [];
    const a = await openLog(url, { instanceId: 'a', setTimer: timers.setTimer, onLeaseLost: (error) => lost.push(error) });
    const lease = await a.acquire('s');
    await a.compact('s', emptySnapshot('s'));
    // Another connection holds the session row: every renewal waits on it, like a stalled database.
    const blocker = new pg.Client({ connectionString: url });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT 1 FROM claw_sessions WHERE id = \'s\' FOR UPDATE');
      timers.advance(renewEveryMs);
      expect(lost).toEqual([]);
      timers.advance(leaseMs / 2 - renewEveryMs - 1);
      expect(lost).toEqual([]);
      timers.advance(1);
      expect(lost).toHaveLength(1);
      expect(lost[0]).toMatchObject({ code: 'lease_lost', reason: 'renewal_failed' });
      expect(lost[0]?.message).toMatch(/could not be renewed/);
      expect(await lease.lost).toBe(lost[0]);
      // Fenced: it writes nothing more, without even asking the database.
      await expect(a.append('s', [], { sync: false })).rejects.toBe(lost[0]);
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    expect(timers.pending).toBe(0);
  });

  it('renews on time while the database answers: no fence however long it runs', async () => {
    const url = await freshDatabase();
    const timers = new ManualTimers();
    const lost: SessionLeaseLostError[] = [];
    const a = await openLog(url, { instanceId: 'a', setTimer: timers.setTimer, onLeaseLost: (error) => lost.push(error) });
    const lease = await a.acquire('s');
    for (let round = 0; round < 10; round += 1) {
      await a.pool.query('UPDATE claw_sessions SET lease_until = now() + interval \'2 seconds\' WHERE id = \'s\'');
      const beforeRenewal = await databaseNow(a);
      timers.advance(renewEveryMs);
      await vi.waitFor(
        async () => expect((await leaseRow(a, 's'))?.until_ms).toBeGreaterThanOrEqual(beforeRenewal + leaseMs),
        renewalWait,
      );
    }
    expect(lost).toEqual([]);
    await lease.release();
  });
});
