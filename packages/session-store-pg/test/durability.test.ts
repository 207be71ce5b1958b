import { describe, expect, it } from 'vitest';
import { PgSessionLog } from '../src/index.js';
import { postgresAvailable, startCluster } from '../src/testing/index.js';
import { emptySnapshot } from './fixtures.js';

// The one test on a cluster that flushes to disk (fsync=on): what `append` with `sync` resolved
// is there after the server crashes.
describe.skipIf(!postgresAvailable())('PgSessionLog durability (SCALE-1)', () => {
  it('keeps every synced append across a crash of the database server', async () => {
    const cluster = await startCluster({ fsync: true });
    try {
      const url = await cluster.createDatabase();
      let log = await PgSessionLog.open({ connectionString: url });
      await log.compact('durable', emptySnapshot('durable'));
      for (let seq = 1; seq <= 20; seq += 1) {
        const change = { type: 'append' as const, messages: [{ role: 'user' as const, content: `m${seq}` }] };
        await log.append('durable', [{ seq, at: '2030-01-01T00:00:01.000Z', change }], { sync: true });
      }
      await cluster.crash();
      await log.close().catch(() => undefined);
      await cluster.start();
      log = await PgSessionLog.open({ connectionString: url });
      try {
        const stored = await log.load('durable');
        const seqs = Array.from({ length: 20 }, (_, index) => index + 1);
        expect(stored?.records.map((record) => record.seq)).toEqual(seqs);
        expect(stored?.records.at(-1)?.change).toEqual({ type: 'append', messages: [{ role: 'user', content: 'm20' }] });
      } finally {
        await log.close();
      }
    } finally {
      await cluster.destroy();
    }
  });
});
