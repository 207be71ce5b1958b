// A session owner for the takeover measurement of main.mjs: opens the store, takes the lease on
// one session, stores it, says "ready" on stdout and keeps the lease until it is killed.
import { newSessionSnapshot } from '@claw/session-store';
import { PgSessionLog } from '@claw/session-store-pg';

const [url, sessionId, leaseMs, renewEveryMs] = process.argv.slice(2);
const log = await PgSessionLog.open({
  connectionString: url,
  leaseMs: Number(leaseMs),
  renewEveryMs: Number(renewEveryMs),
  poolSize: 2,
});
await log.acquire(sessionId);
const now = new Date().toISOString();
await log.compact(sessionId, newSessionSnapshot({ id: sessionId, workDir: process.cwd(), now }));
process.stdout.write('ready\n');
// The lease keeper's timers do not keep the process alive: this does, until the kill.
setInterval(() => undefined, 60_000);
