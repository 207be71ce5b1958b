import type { LogRecord } from '@claw/session-store';
import type pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { PgSessionLog } from '../src/index.js';
import { postgresAvailable } from '../src/testing/index.js';
import { closeLogs, emptySnapshot, openLog, sharedCluster } from './fixtures.js';

// A reader of a session another instance owns asks for the records after the last one it read
// (SCALE-4). When there are none, it is told whether nothing is new or the records were compacted
// away (it then starts again from the snapshot). The rows and the session's last seq must be read
// as of one moment: a write committing between two reads must not pass for a compaction.

const at = (seq: number) => new Date(Date.UTC(2030, 0, 1) + seq * 1000).toISOString();

function message(seq: number): LogRecord {
  const change = { type: 'append' as const, messages: [{ role: 'user' as const, content: `m${seq}` }] };
  return { seq, at: at(seq), change };
}

const messages = (from: number, to: number): LogRecord[] =>
  Array.from({ length: to - from + 1 }, (_, index) => message(from + index));

/**
 * Has `pool` run `meanwhile` once, right after its next query returned and before the caller of
 * that query gets the result: another instance's write lands there. Counts the queries from now.
 */
function writeAfterNextQuery(pool: pg.Pool, meanwhile: () => Promise<void>): { queries: number } {
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  const seen = { queries: 0 };
  let due = true;
  const wrapped = async (...args: unknown[]): Promise<unknown> => {
    seen.queries += 1;
    const result = await query(...args);
    if (due) {
      due = false;
      await meanwhile();
    }
    return result;
  };
  pool.query = wrapped as typeof pool.query;
  return seen;
}

/** Two instances on `url`; `a` stored session `s` as an empty snapshot and records 1 to 5. */
async function twoInstances(url: string): Promise<{ a: PgSessionLog; b: PgSessionLog }> {
  const a = await openLog(url, { instanceId: 'a' });
  const b = await openLog(url, { instanceId: 'b' });
  await a.compact('s', emptySnapshot('s'));
  await a.append('s', messages(1, 5), { sync: true });
  return { a, b };
}

/** A read after record 5, once record 6 was written: record 6 (a row still, compacted or not). */
async function expectRecordSixNext(reader: PgSessionLog): Promise<void> {
  const next = await reader.readSince('s', 5);
  expect(next.records.map((record) => record.seq)).toEqual([6]);
  expect(next.oldestSeq).toBe(6);
}

describe.skipIf(!postgresAvailable())('reading a session another instance owns (SCALE-4)', () => {
  const { freshDatabase } = sharedCluster();
  afterEach(closeLogs);

  it('says nothing is new, not that records are gone, when a write commits during the read', async () => {
    const { a, b } = await twoInstances(await freshDatabase());

    const reads = writeAfterNextQuery(b.pool, async () => {
      await a.append('s', [message(6)], { sync: true });
    });
    // As of one moment: before the write (nothing new after 5), or after it (record 6).
    const read = await b.readSince('s', 5);
    expect(read).toEqual({ records: [], oldestSeq: 6 });
    expect(reads.queries).toBe(1);
    await expectRecordSixNext(b);
  });

  it('a write and a compaction during the read: the reader still reads every record after', async () => {
    const { a, b } = await twoInstances(await freshDatabase());

    writeAfterNextQuery(b.pool, async () => {
      await a.append('s', [message(6)], { sync: true });
      await a.compact('s', { ...emptySnapshot('s'), seq: 6, updatedAt: at(6) });
    });
    const read = await b.readSince('s', 5);
    // Not gone: record 6 is kept as a row for readers a little behind the snapshot.
    expect(read.oldestSeq).toBe(6);
    expect(read.records).toEqual([]);
    await expectRecordSixNext(b);
  });

  it('reads the rows and the last seq together, in one statement, whatever is there', async () => {
    const { a, b } = await twoInstances(await freshDatabase());
    await a.compact('t', { ...emptySnapshot('t'), seq: 5 });

    const reads = writeAfterNextQuery(b.pool, () => Promise.resolve());
    const cases = [
      // Records after the cursor, some or all of them.
      [await b.readSince('s', 0, { limit: 2 }), [1, 2], 1],
      [await b.readSince('s', 3), [4, 5], 4],
      // Nothing new, a cursor beyond the end, an unknown session.
      [await b.readSince('s', 5), [], 6],
      [await b.readSince('s', 9), [], 10],
      [await b.readSince('unknown', 0), [], 1],
      // Compacted away: told where the records go on.
      [await b.readSince('t', 0), [], 6],
    ] as const;
    for (const [read, seqs, oldestSeq] of cases) {
      expect(read.records.map((record) => record.seq)).toEqual(seqs);
      expect(read.oldestSeq).toBe(oldestSeq);
    }
    expect(reads.queries).toBe(cases.length);
  });
});
