import { describeSessionLog } from '@claw/session-store/testing';
import { describe, it } from 'vitest';
import type { PgSessionLog } from '../src/index.js';
import { postgresAvailable } from '../src/testing/index.js';
import { closeLogs, openLog, sharedCluster } from './fixtures.js';

if (postgresAvailable()) {
  const { freshDatabase } = sharedCluster();
  const urls = new WeakMap<PgSessionLog, string>();
  describeSessionLog('PgSessionLog', {
    create: async () => {
      const url = await freshDatabase();
      const log = await openLog(url);
      urls.set(log, url);
      return log;
    },
    // Another instance on the same database.
    reopen: async (log) => openLog(urls.get(log as PgSessionLog) as string),
    cleanUp: closeLogs,
  });
} else {
  describe.skip('SessionLog conformance: PgSessionLog (PostgreSQL is not installed)', () => {
    it('needs PostgreSQL', () => undefined);
  });
}
