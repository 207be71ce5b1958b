import { describeSessionLog, describeSessionRelay } from '@claw/session-store/testing';
import { describe, it } from 'vitest';
import type { PgSessionLog } from '../src/index.js';
import { postgresAvailable } from '../src/testing/index.js';
import { closeLogs, openLog, sharedCluster } from './fixtures.js';

if (postgresAvailable()) {
  const { freshDatabase } = sharedCluster();
  const urls = new WeakMap<PgSessionLog, string>();
  const backend = {
    create: async () => {
      const url = await freshDatabase();
      const log = await openLog(url);
      urls.set(log, url);
      return log;
    },
    // Another instance on the same database.
    reopen: async (log: unknown) => {
      const url = urls.get(log as PgSessionLog) as string;
      const other = await openLog(url);
      urls.set(other, url);
      return other;
    },
    cleanUp: closeLogs,
  };
  describeSessionLog('PgSessionLog', backend);
  // Its relay parts between instances (SCALE-4, LIFE-1): the same suite as the memory relay's.
  describeSessionRelay('PgSessionLog', backend);
} else {
  describe.skip('SessionLog conformance: PgSessionLog (PostgreSQL is not installed)', () => {
    it('needs PostgreSQL', () => undefined);
  });
}
