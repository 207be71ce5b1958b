// A session owner for the takeover measurement of main.mjs: opens the store, takes the lease on
// one session, stores it, says "ready" on stdout and keeps the lease until it is killed.
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
await log.compact(sessionId, {
  id: sessionId,
  workDir: process.cwd(),
  createdAt: now,
  updatedAt: now,
  seq: 0,
  eventSeq: 0,
  history: [],
  usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
  cost: { usd: 0, unpricedCalls: 0 },
  journal: { active: false, calls: [] },
});
process.stdout.write('ready\n');
// The lease keeper's timers do not keep the process alive: this does, until the kill.
setInterval(() => undefined, 60_000);
