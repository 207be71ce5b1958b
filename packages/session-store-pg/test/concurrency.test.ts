import { SessionLockedError, SessionLogError, SessionStore } from '@claw/session-store';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { PgSessionError, migrate, migrations, type PgSessionLog } from '../src/index.js';
import { postgresAvailable } from '../src/testing/index.js';
import { closeLogs, emptySnapshot, openLog, sharedCluster } from './fixtures.js';

const workDir = '/shared/workspace';

describe.skipIf(!postgresAvailable())('PgSessionLog under concurrency (SCALE-1)', () => {
  const { freshDatabase } = sharedCluster();
  afterEach(closeLogs);

  it('runs each migration once when five instances start together, and is idempotent', async () => {
    const url = await freshDatabase();
    const pools = Array.from({ length: 5 }, () => new pg.Pool({ connectionString: url, max: 1 }));
    try {
      const applied = await Promise.all(pools.map((pool) => migrate(pool)));
      const versions = migrations.map((step) => step.version);
      expect(applied.flat().sort((a, b) => a - b)).toEqual(versions);
      expect(await migrate(pools[0] as pg.Pool)).toEqual([]);
      const rows = await (pools[0] as pg.Pool).query('SELECT version FROM claw_schema_migrations');
      expect(rows.rows.map((row: { version: number }) => row.version).sort((a, b) => a - b)).toEqual(versions);
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });

  it('refuses a database whose schema is newer than this claw knows', async () => {
    const url = await freshDatabase();
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      await migrate(pool);
      await pool.query('INSERT INTO claw_schema_migrations (version, description) VALUES (99, \'future\')');
      const error = await migrate(pool).catch((failure: unknown) => failure);
      expect(error).toBeInstanceOf(PgSessionError);
      expect(error).toMatchObject({ code: 'store_migration_failed' });
      expect((error as Error).message).toMatch(/upgrade claw-server/);
    } finally {
      await pool.end();
    }
  });

  it('gives a session to exactly one of 200 racing claims from four instances', async () => {
    const url = await freshDatabase();
    const logs = await Promise.all([1, 2, 3, 4].map(() => openLog(url, { poolSize: 20 })));
    await (logs[0] as PgSessionLog).compact('contended', emptySnapshot('contended'));
    const claims = await Promise.allSettled(
      Array.from({ length: 200 }, (_, index) => (logs[index % 4] as PgSessionLog).acquire('contended')),
    );
    const winners = claims.filter((claim) => claim.status === 'fulfilled');
    const losers = claims.filter((claim) => claim.status === 'rejected');
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(199);
    for (const loser of losers) {
      expect(loser.reason).toBeInstanceOf(SessionLockedError);
      expect((loser.reason as Error).message).toMatch(/is in use by claw instance/);
    }
    const winner = (winners[0] as PromiseFulfilledResult<Awaited<ReturnType<PgSessionLog['acquire']>>>).value;
    expect(winner.epoch).toBe(1);
    expect(winner.tookOver).toBe(false);
    await winner.release();
    // Released: the next claim gets it, one epoch later.
    const next = await (logs[1] as PgSessionLog).acquire('contended');
    expect(next.epoch).toBe(2);
    await next.release();
  });

  it('stores 1,000 concurrent appends gapless and in order', async () => {
    const url = await freshDatabase();
    const log = await openLog(url, { compactAfterRecords: 5000 });
    const store = new SessionStore({ log });
    const lease = await store.open('busy', { workDir });
    const { session } = lease;
    await session.append({ role: 'user', content: 'start' });
    // 1,000 callers, each after its own number of event-loop turns: many appends of many sizes.
    const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
    const written = await Promise.all(Array.from({ length: 1000 }, async (_, index) => {
      for (let turn = 0; turn < index % 17; turn += 1) await tick();
      const appended = session.appendEvent({ type: 'text_delta', task_id: 't', content: `d${index}` });
      await appended.written;
      return appended.event;
    }));
    await lease.release();
    await store.close();

    const rows = await log.pool.query<{ count: string; min: string; max: string }>(
      'SELECT count(*) AS count, min(seq) AS min, max(seq) AS max FROM claw_changes WHERE session_id = \'busy\'',
    );
    const { count, min, max } = rows.rows[0] as { count: string; min: string; max: string };
    // The first append and the 1,000 events, each a record (a new session starts empty).
    expect(Number(count)).toBe(1001);
    expect(Number(max) - Number(min) + 1).toBe(1001);
    const other = await openLog(url);
    const stored = await other.load('busy');
    const events = (stored?.records ?? []).flatMap((record) => (record.change.type === 'event' ? [record.change.event] : []));
    expect(events.map((event) => event.seq)).toEqual(Array.from({ length: 1000 }, (_, index) => index + 1));
    // Each event is stored once, under the seq its caller was given.
    const bySeq = new Map(written.map((event) => [event.seq, (event as { content: string }).content]));
    const contents = events.map((event) => (event as { content: string }).content);
    expect(contents).toEqual(events.map((event) => bySeq.get(event.seq)));
    expect(new Set(events.map((event) => (event as { content: string }).content)).size).toBe(1000);
  });

  it('lets exactly one of racing writers add each change: the others get session_seq_conflict and write nothing', async () => {
    const url = await freshDatabase();
    const writers = await Promise.all(Array.from({ length: 8 }, () => openLog(url, { poolSize: 2 })));
    await (writers[0] as PgSessionLog).compact('raced', emptySnapshot('raced'));
    const target = 200;
    let written = 0;
    let conflicts = 0;
    await Promise.all(writers.map(async (writer, index) => {
      let next = 1;
      let mine = 0;
      while (written < target) {
        const change = { type: 'append' as const, messages: [{ role: 'user' as const, content: `w${index}-${mine}` }] };
        try {
          await writer.append('raced', [{ seq: next, at: '2030-01-01T00:00:01.000Z', change }], { sync: false });
          written += 1;
          mine += 1;
          next += 1;
        } catch (error) {
          expect(error).toBeInstanceOf(SessionLogError);
          expect(error).toMatchObject({ code: 'session_seq_conflict' });
          conflicts += 1;
          next = ((await writer.load('raced'))?.records.at(-1)?.seq ?? 0) + 1;
        }
      }
    }));
    const records = (await (writers[0] as PgSessionLog).load('raced'))?.records ?? [];
    const gapless = Array.from({ length: records.length }, (_, index) => index + 1);
    expect(records.map((record) => record.seq)).toEqual(gapless);
    expect(records.length).toBe(written);
    const contents = records.map((record) => (record.change.type === 'append' ? record.change.messages[0]?.content : ''));
    expect(new Set(contents).size).toBe(contents.length);
    expect(conflicts).toBeGreaterThan(0);
  });
});
