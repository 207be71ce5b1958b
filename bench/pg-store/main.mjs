// PostgreSQL session store benchmark (SCALE-1, SCALE-2): append throughput of PgSessionLog
// against the file store (FileSessionLog) in the same run, and the time another instance needs to
// take a session over after its owner process was killed with SIGKILL. The ratios are what
// counts; figures from different machines are not comparable.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { FileSessionLog, newSessionSnapshot } from '@claw/session-store';
import { PgSessionLog } from '@claw/session-store-pg';
import { postgresAvailable, startCluster } from '@claw/session-store-pg/testing';

const appends = Number(process.env.BENCH_APPENDS ?? 400);
const parallel = Number(process.env.BENCH_PARALLEL ?? 8);
const takeoverRuns = Number(process.env.BENCH_TAKEOVER_RUNS ?? 2);
// The default lease, and the short one of `claw-server --lease-ms 2000` (renewed every third).
const leases = [
  { leaseMs: 10_000, renewEveryMs: 3_000 },
  { leaseMs: 2_000, renewEveryMs: 666 },
];

if (!postgresAvailable()) {
  console.error('bench:pg needs PostgreSQL\'s server binaries (initdb, postgres): apt-get install -y postgresql');
  process.exit(2);
}

// A realistic change: one message with a 1 KB tool output.
const output = 'src/module.ts:12: export function handler(request) { return respond(request); }\n'.repeat(12);
function record(seq) {
  const change = {
    type: 'append',
    messages: [{ role: 'tool', toolCallId: `call_${seq}`, content: output }],
  };
  return { seq, at: new Date().toISOString(), change, encoded: JSON.stringify(change) };
}

function snapshot(id, workDir) {
  return newSessionSnapshot({ id, workDir, now: new Date().toISOString() });
}

/** Appends `count` records, one per call, to each of `sessions` sessions at once; appends/s. */
async function throughput(log, label, { sync, sessions, count }) {
  const ids = Array.from({ length: sessions }, (_, index) => `${label}-${sync ? 'sync' : 'async'}-${sessions}-${index}`);
  const locks = [];
  for (const id of ids) {
    locks.push(await log.acquire(id));
    await log.compact(id, snapshot(id, os.tmpdir()));
  }
  const perSession = Math.ceil(count / sessions);
  const started = performance.now();
  await Promise.all(ids.map(async (id) => {
    for (let seq = 1; seq <= perSession; seq += 1) await log.append(id, [record(seq)], { sync });
  }));
  const elapsed = performance.now() - started;
  for (const lock of locks) await lock.release();
  return (perSession * sessions) / (elapsed / 1000);
}

/** Starts an owner process on `sessionId` with `leaseMs`; resolves once it holds the lease. */
function startOwner(url, sessionId, { leaseMs, renewEveryMs }) {
  const child = spawn(process.execPath, [
    fileURLToPath(new URL('owner.mjs', import.meta.url)), url, sessionId, String(leaseMs), String(renewEveryMs),
  ], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the owner process exited (${code}) before it was ready`)));
    createInterface({ input: child.stdout }).once('line', () => resolve(child));
  });
}

/** Kills an owner with SIGKILL; the time until another instance holds the session. */
async function takeover(url, lease, run) {
  const { leaseMs, renewEveryMs } = lease;
  const sessionId = `takeover-${leaseMs}-${run}`;
  const owner = await startOwner(url, sessionId, lease);
  const other = await PgSessionLog.open({
    connectionString: url,
    leaseMs,
    renewEveryMs,
    poolSize: 2,
  });
  try {
    // Killed somewhere within its renewal interval, as a crash would be.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * renewEveryMs));
    const exited = new Promise((resolve) => owner.once('exit', resolve));
    const killedAt = performance.now();
    owner.kill('SIGKILL');
    await exited;
    for (;;) {
      try {
        const lease = await other.acquire(sessionId);
        await other.load(sessionId);
        const elapsed = performance.now() - killedAt;
        await lease.release();
        return elapsed;
      } catch (error) {
        if (error?.code !== 'session_locked') throw error;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  } finally {
    await other.close();
  }
}

/**
 * How long a change takes from its owner's append to a reader on another instance (SCALE-4):
 * woken by LISTEN/NOTIFY, or (the baseline) by its poll alone, every `pollMs`.
 */
async function followLatency(url, { notify, events, pollMs }) {
  const owner = await PgSessionLog.open({ connectionString: url, poolSize: 2 });
  const reader = await PgSessionLog.open({ connectionString: url, poolSize: 2, pollMs });
  const id = `follow-${notify ? 'notify' : 'poll'}`;
  const lock = await owner.acquire(id);
  await owner.compact(id, snapshot(id, os.tmpdir()));
  const appendedAt = new Map();
  const latencies = [];
  let wake;
  const unwatch = notify ? reader.watch(id, () => wake?.()) : () => undefined;
  // The LISTEN connection is up before the first change (as on a server that follows a session).
  await new Promise((resolve) => setTimeout(resolve, 200));
  const follow = (async () => {
    let seen = 0;
    while (seen < events) {
      const { records } = await reader.readSince(id, seen);
      for (const { seq } of records) {
        latencies.push(performance.now() - appendedAt.get(seq));
        seen = seq;
      }
      if (records.length === 0) {
        await new Promise((resolve) => {
          const timer = setTimeout(resolve, pollMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    }
  })();
  try {
    for (let seq = 1; seq <= events; seq += 1) {
      appendedAt.set(seq, performance.now());
      await owner.append(id, [record(seq)], { sync: false });
      await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 40));
    }
    await follow;
  } finally {
    unwatch();
    await lock.release();
    await owner.close();
    await reader.close();
  }
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { median: at(0.5), p95: at(0.95) };
}

const root = await mkdtemp(path.join(os.tmpdir(), 'claw-bench-pg-'));
// Durable like production (fsync on): sync appends then mean the same for both stores.
const cluster = await startCluster({ fsync: true });
const rows = [];
const takeovers = [];
const follows = [];
const followEvents = Number(process.env.BENCH_FOLLOW_EVENTS ?? 60);
try {
  const url = await cluster.createDatabase();
  const pgLog = await PgSessionLog.open({ connectionString: url, poolSize: parallel + 2 });
  const fileLog = new FileSessionLog({ directory: path.join(root, 'sessions') });
  try {
    for (const sync of [true, false]) {
      for (const sessions of [1, parallel]) {
        const options = { sync, sessions, count: sync ? Math.ceil(appends / 2) : appends };
        // Interleaved, a warm-up round first, then the file store and PostgreSQL alternately.
        await throughput(fileLog, 'warm-file', { ...options, count: 20 });
        await throughput(pgLog, 'warm-pg', { ...options, count: 20 });
        const file = await throughput(fileLog, 'file', options);
        const postgres = await throughput(pgLog, 'pg', options);
        rows.push({ sync, sessions, file, postgres });
        process.stderr.write('.');
      }
    }
  } finally {
    await pgLog.close();
  }
  for (const notify of [true, false]) {
    const latency = await followLatency(url, { notify, events: followEvents, pollMs: 1000 });
    follows.push({ notify, ...latency });
    process.stderr.write('.');
  }
  for (const lease of leases) {
    for (let run = 0; run < takeoverRuns; run += 1) {
      takeovers.push({ leaseMs: lease.leaseMs, ms: await takeover(url, lease, run) });
      process.stderr.write('.');
    }
  }
  process.stderr.write('\n');
} finally {
  await cluster.destroy();
  await rm(root, { recursive: true, force: true });
}

const rate = (value) => `${value.toFixed(0)}/s`.padStart(12);
console.log('pg-store: appends of one 1 KB change per call, PostgreSQL (fsync on, local) vs the file store');
console.log(`${appends} appends per non-sync case, ${Math.ceil(appends / 2)} per sync case; ${parallel} sessions in parallel\n`);
console.log(`${'case'.padEnd(30)}${'file'.padStart(12)}${'postgres'.padStart(12)}${'pg / file'.padStart(12)}`);
for (const row of rows) {
  const label = `${row.sync ? 'sync' : 'non-sync'}, ${row.sessions === 1 ? '1 session' : `${row.sessions} sessions`}`;
  console.log(`${label.padEnd(30)}${rate(row.file)}${rate(row.postgres)}${`${(row.postgres / row.file).toFixed(2)}x`.padStart(12)}`);
}
console.log('\ntakeover after SIGKILL of the owner (kill → another instance holds and has read the session)');
for (const { leaseMs, renewEveryMs } of leases) {
  const times = takeovers.filter((entry) => entry.leaseMs === leaseMs).map((entry) => entry.ms);
  const shown = times.map((ms) => `${(ms / 1000).toFixed(2)} s`).join(', ');
  console.log(`${`lease ${leaseMs / 1000} s (renewed every ${renewEveryMs / 1000} s)`.padEnd(40)}${shown}`);
}
const [woken, polled] = follows;
const ms = (value) => `${value.toFixed(1)} ms`.padStart(12);
console.log(`\nanother instance reading a session's changes (${followEvents} appends 10-50 ms apart; its poll every 1 s)`);
console.log(`${''.padEnd(30)}${'median'.padStart(12)}${'p95'.padStart(12)}`);
console.log(`${'LISTEN/NOTIFY + poll'.padEnd(30)}${ms(woken.median)}${ms(woken.p95)}`);
console.log(`${'poll only (baseline)'.padEnd(30)}${ms(polled.median)}${ms(polled.p95)}`);
console.log(`${'notify / poll'.padEnd(30)}${`${(woken.median / polled.median).toFixed(3)}x`.padStart(12)}${`${(woken.p95 / polled.p95).toFixed(3)}x`.padStart(12)}`);
