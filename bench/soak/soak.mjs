// The soak (LIFE-3): claw-server instances under client load and chaos, then the checks.
//
// `runPgSoak`: two or three instances on one throwaway PostgreSQL and one shared workspace;
// controllers run task after task (read_file, write_file, marked bash calls, approvals they
// answer) and observers follow some of the sessions from any instance, while the chaos driver
// kills instances (kill -9, then starts them again), freezes one past its lease (SIGSTOP, then
// SIGCONT), restarts PostgreSQL (stop, start on the same port and data) and cuts clients'
// connections. A trigger on the store's change table copies every committed change to a table
// of the soak's own (compaction deletes changes; the copy keeps them): that is the truth the
// clients' events and the tools' marker files are checked against.
//
// `runFileSoak`: one instance on the file store, kill -9 and restarts under the same load, and a
// full disk: the workspace on a small tmpfs in a mount namespace of its own, filled for a while.
//
// Both return {store, violations, counts, figures, chaos, runFolder}; the checks are check.mjs.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, open, readFile, readdir, rm, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startCluster } from '@claw/session-store-pg/testing';
import WebSocket from 'ws';
import { check } from './check.mjs';
import { SoakClient, canonical } from './client.mjs';
import { pg } from './db.mjs';
import { Instance, onAbort, startModel, stopAll } from './processes.mjs';

/** A seeded random source (mulberry32): a run's choices follow from its seed. */
export function seeded(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const defaults = {
  durationMs: 10 * 60_000,
  instances: 3,
  clients: 30,
  observers: 10,
  leaseMs: 2000,
  steps: 3,
  modelLatencyMs: 20,
  thinkMs: 500,
  denyRate: 0.05,
  /** Mean time between two random chaos actions. */
  chaosEveryMs: 6000,
  pgRestarts: 1,
  drainMs: 60_000,
  seed: 1,
  fullDiskMs: 5000,
  fileClients: 10,
  tmpfsMb: 64,
};

const percentile = (values, p) => {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

/** A workspace with the files the tasks read and the folders they write to. */
async function fillWorkspace(dir) {
  await mkdir(path.join(dir, 'markers'), { recursive: true });
  await mkdir(path.join(dir, 'out'), { recursive: true });
  for (let index = 0; index < 4; index += 1) {
    await writeFile(path.join(dir, `file-${index}.txt`), 'line of source code\n'.repeat(20));
  }
}

/** call id → lines of its marker file. */
async function readMarkers(dir) {
  const markers = new Map();
  const folder = path.join(dir, 'markers');
  for (const name of await readdir(folder).catch(() => [])) {
    const text = await readFile(path.join(folder, name), 'utf8');
    markers.set(name, text.split('\n').filter((line) => line !== '').length);
  }
  return markers;
}

/**
 * Opens every session on `instance` (a fresh one, started after the others stopped) and reads
 * it: `session_opened` and its `history`. → {unreadable, finals: Map<session, final>}.
 */
async function readSessions(instance, sessionIds) {
  const ws = new WebSocket(`ws://127.0.0.1:${instance.http}/ws`, { perMessageDeflate: false });
  ws.on('error', () => undefined);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const waiters = [];
  ws.on('message', (data) => {
    const event = JSON.parse(data.toString('utf8'));
    for (const waiter of [...waiters]) waiter(event);
  });
  const next = (match, ms = 15_000) => new Promise((resolve, reject) => {
    const waiter = (event) => {
      const verdict = match(event);
      if (verdict === undefined) return;
      waiters.splice(waiters.indexOf(waiter), 1);
      clearTimeout(timer);
      resolve(verdict);
    };
    const timer = setTimeout(() => {
      waiters.splice(waiters.indexOf(waiter), 1);
      reject(new Error(`no answer within ${ms} ms`));
    }, ms);
    waiters.push(waiter);
  });
  const welcome = next((event) => (event.type === 'welcome' ? event : undefined));
  ws.send(JSON.stringify({ type: 'hello', token: instance.token, protocol: 1 }));
  const hello = await welcome;
  const unreadable = (hello.unreadable_sessions ?? []).map((session) => `${session.session_id}: ${session.reason}`);
  const finals = new Map();
  for (const sessionId of sessionIds) {
    const opened = next((event) => (event.session_id === sessionId && (event.type === 'session_opened' || event.type === 'error') ? event : undefined));
    const history = next((event) => (event.session_id === sessionId && (event.type === 'history' || event.type === 'error') ? event : undefined));
    ws.send(JSON.stringify({ type: 'open', session_id: sessionId, role: 'observer' }));
    try {
      const first = await opened;
      if (first.type === 'error') {
        finals.set(sessionId, { error: `${first.code}: ${first.message}` });
        history.catch(() => undefined);
        continue;
      }
      const read = await history;
      if (read.type === 'error') {
        finals.set(sessionId, { error: `${read.code}: ${read.message}` });
        continue;
      }
      finals.set(sessionId, {
        state: first.state,
        lastSeq: first.last_seq,
        pendingApprovals: first.pending_approvals.length,
        history: read.messages,
      });
      const closed = next((event) => (event.type === 'session_closed' && event.session_id === sessionId ? event : undefined));
      ws.send(JSON.stringify({ type: 'close', session_id: sessionId }));
      await closed.catch(() => undefined);
    } catch (error) {
      finals.set(sessionId, { error: error.message });
    }
  }
  ws.terminate();
  return { unreadable, finals };
}

/** Makes the clients: a controller per session, and observers of the first sessions. */
function makeClients({ count, observers, random, prefix, instances, options }) {
  const controllers = [];
  const all = [];
  for (let index = 0; index < count; index += 1) {
    const name = `c${String(index).padStart(2, '0')}`;
    const client = new SoakClient({
      name,
      sessionId: `${prefix}-${name}`,
      role: 'controller',
      instances,
      random,
      denyRate: options.denyRate,
      thinkMs: options.thinkMs,
    });
    controllers.push(client);
    all.push(client);
  }
  for (let index = 0; index < Math.min(observers, count); index += 1) {
    const leader = controllers[index];
    all.push(new SoakClient({
      name: `o${String(index).padStart(2, '0')}`,
      sessionId: leader.sessionId,
      role: 'observer',
      instances,
      random,
      denyRate: 0,
      thinkMs: 0,
      leaderDone: () => leader.finished,
      leaderSeq: () => leader.cursor,
    }));
  }
  return { controllers, all };
}

/** Stops the clients from prompting and waits (at most `ms`) until each has ended. */
async function drain(clients, ms, log) {
  for (const client of clients) client.stop();
  const deadline = Date.now() + ms;
  while (clients.some((client) => !client.finished) && Date.now() < deadline) await sleep(200);
  const left = clients.filter((client) => !client.finished);
  if (left.length > 0) {
    log(`drain: ${left.length} client(s) not done after ${ms / 1000} s: ${left.map((client) => `${client.name} (${client.openTasks.size} open task(s), state ${client.state}, ${client.lastNote ?? ''})`).join('; ')}`);
  }
  for (const client of left) client.abandon();
  return left.map((client) => ({
    client: client.name,
    session: client.sessionId,
    openTasks: [...client.openTasks.keys()],
    state: client.state,
  }));
}

/** Sums the clients' counters. */
function clientTotals(clients) {
  const totals = {};
  for (const client of clients) {
    for (const [key, value] of Object.entries(client.stats)) {
      if (typeof value === 'number') totals[key] = (totals[key] ?? 0) + value;
    }
  }
  return totals;
}

/**
 * Watches who owns which session (claw_sessions) every 100 ms: takeover times are measured from
 * a kill or a freeze of an owner to the moment the session has another owner.
 */
class OwnershipMonitor {
  constructor(url) {
    this.url = url;
    this.owners = new Map();
    this.pending = [];
    this.takeovers = [];
    this.stopped = false;
    this.errors = 0;
    this.loop = this.run();
  }

  async run() {
    let db;
    while (!this.stopped) {
      try {
        if (db === undefined) {
          db = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 2000 });
          db.on('error', () => undefined);
          await db.connect();
        }
        const rows = await db.query('SELECT id, owner_instance, epoch::int AS epoch FROM claw_sessions');
        const now = Date.now();
        for (const row of rows.rows) {
          this.owners.set(row.id, { owner: row.owner_instance, epoch: row.epoch });
        }
        for (const watch of [...this.pending]) {
          const current = this.owners.get(watch.session);
          const moved = current !== undefined && current.epoch > watch.epoch &&
            current.owner !== null && current.owner !== watch.from;
          if (moved) {
            watch.ms = now - watch.at;
            watch.by = current.owner;
            this.takeovers.push(watch);
            this.pending.splice(this.pending.indexOf(watch), 1);
          }
        }
      } catch {
        this.errors += 1;
        await db?.end().catch(() => undefined);
        db = undefined;
      }
      await sleep(100);
    }
    await db?.end().catch(() => undefined);
  }

  /** An owner was killed or frozen at `at`: the sessions it owned are watched for a takeover. */
  lost(instanceId, kind, at) {
    if (instanceId === undefined) return 0;
    let count = 0;
    for (const [session, { owner, epoch }] of this.owners) {
      if (owner !== instanceId) continue;
      this.pending.push({ session, from: instanceId, epoch, kind, at });
      count += 1;
    }
    return count;
  }

  async stop() {
    this.stopped = true;
    await this.loop;
    return { takeovers: this.takeovers, notTakenOver: this.pending };
  }
}

/** What the audit table copied: every committed change, by session. */
async function readAudit(url, sessionIds) {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const rows = await db.query('SELECT session_id, seq::int AS seq, change, writer, at FROM soak_changes ORDER BY id');
    const bySession = new Map(sessionIds.map((id) => [id, {
      stored: new Map(), journalStarted: new Set(), records: new Map(), snapshots: [],
    }]));
    for (const row of rows.rows) {
      const facts = bySession.get(row.session_id);
      if (facts === undefined) continue;
      const recordCount = facts.records.get(row.seq) ?? 0;
      facts.records.set(row.seq, recordCount + 1);
      const change = JSON.parse(row.change);
      if (change.type === 'event') {
        const list = facts.stored.get(change.event.seq) ?? [];
        list.push(change.event);
        facts.stored.set(change.event.seq, list);
      } else if (change.type === 'tool_started') {
        facts.journalStarted.add(change.call.id);
      }
    }
    const snapshots = await db.query('SELECT session_id, seq::int AS seq, event_seq::int AS event_seq, writer, at FROM soak_snapshots ORDER BY id');
    for (const row of snapshots.rows) bySession.get(row.session_id)?.snapshots.push(row);
    const sessions = await db.query('SELECT id, owner_instance, epoch::int AS epoch, last_seq::int AS last_seq FROM claw_sessions');
    const doubledRecords = [];
    for (const [session, facts] of bySession) {
      for (const [seq, times] of facts.records) {
        if (times > 1) doubledRecords.push({ session, seq, times });
      }
    }
    return {
      bySession, rows: rows.rowCount, rawRows: rows.rows, snapshotRows: snapshots.rows,
      sessions: sessions.rows, doubledRecords,
    };
  } finally {
    await db.end();
  }
}

/**
 * Why the store has no change row for these event seqs: folded into a snapshot (a compaction
 * wrote the session whole instead of appending its pending records, so those events never became
 * rows), or never stored at all.
 */
function explainMissing(facts, seqs) {
  const notes = new Map();
  for (const seq of seqs) {
    const snapshot = facts.snapshots.find((one) => one.event_seq !== null && one.event_seq >= seq);
    const note = snapshot !== undefined && !facts.records.has(snapshot.seq)
      ? `only in the snapshot at record seq ${snapshot.seq} (event seq ${snapshot.event_seq}) written by ${snapshot.writer} at ${new Date(snapshot.at).toISOString()}`
      : 'in no change row, and no snapshot folded them in';
    notes.set(note, [...(notes.get(note) ?? []), seq]);
  }
  return [...notes].map(([note, of]) => `; ${of.join(', ')}: ${note}`).join('');
}

const auditSql = `
  CREATE TABLE soak_changes (
    id bigserial PRIMARY KEY, session_id text NOT NULL, seq bigint NOT NULL, change text NOT NULL,
    writer text, at timestamptz NOT NULL DEFAULT clock_timestamp()
  );
  CREATE FUNCTION soak_copy_change() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO soak_changes (session_id, seq, change, writer)
      VALUES (NEW.session_id, NEW.seq, NEW.change, current_setting('application_name'));
    RETURN NEW;
  END $$;
  CREATE TRIGGER soak_copy_change AFTER INSERT ON claw_changes
    FOR EACH ROW EXECUTE FUNCTION soak_copy_change();
  CREATE TABLE soak_snapshots (
    id bigserial PRIMARY KEY, session_id text NOT NULL, seq bigint NOT NULL, event_seq bigint,
    writer text, at timestamptz NOT NULL DEFAULT clock_timestamp()
  );
  CREATE FUNCTION soak_copy_snapshot() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO soak_snapshots (session_id, seq, event_seq, writer)
      VALUES (NEW.session_id, NEW.seq, (NEW.body::jsonb ->> 'eventSeq')::bigint, current_setting('application_name'));
    RETURN NEW;
  END $$;
  CREATE TRIGGER soak_copy_snapshot AFTER INSERT OR UPDATE ON claw_snapshots
    FOR EACH ROW EXECUTE FUNCTION soak_copy_snapshot();
`;

/**
 * The chaos driver: mandatory actions at fixed points of the run (so that a short run has each
 * at least once), random ones in between. Every action is logged with its time.
 */
class Chaos {
  constructor(options) {
    // instances, clients, random, log, monitor, leaseMs, cluster, startedAt, durationMs, plan,
    // everyMs, fill
    Object.assign(this, options);
    this.events = [];
    this.stopped = false;
    this.tasks = new Set();
    this.busy = new Set();
    this.pgDown = false;
    this.counts = { kills: 0, restarts: 0, freezes: 0, pgRestarts: 0, drops: 0, fullDisks: 0 };
  }

  record(kind, detail) {
    const at = Date.now();
    const second = Math.round((at - this.startedAt) / 100) / 10;
    this.events.push({ at: new Date(at).toISOString(), second, kind, ...detail });
    this.log(`chaos ${((at - this.startedAt) / 1000).toFixed(1)} s: ${kind} ${Object.entries(detail).map(([key, value]) => `${key}=${value}`).join(' ')}`);
  }

  spawnTask(promise) {
    const task = promise.catch((error) => this.record('chaos_error', { error: error.message })).finally(() => this.tasks.delete(task));
    this.tasks.add(task);
  }

  /** Instances that serve and are not in the middle of another action. */
  free() {
    return this.instances.filter((instance) => instance.serving && !this.busy.has(instance));
  }

  pick(list) {
    return list[Math.floor(this.random() * list.length)];
  }

  async kill() {
    const free = this.free();
    // One instance keeps serving (with two, the other; with one, the file soak's own restarts).
    const serving = this.instances.filter((instance) => instance.serving).length;
    if (free.length === 0 || (this.instances.length > 1 && serving < 2)) return false;
    const instance = this.pick(free);
    this.busy.add(instance);
    const id = instance.instanceId;
    await instance.kill();
    const at = Date.now();
    const owned = this.monitor?.lost(id, 'kill -9', at) ?? 0;
    this.counts.kills += 1;
    this.record('kill -9', { instance: instance.name, pid: instance.child.pid, owned });
    const downMs = 500 + Math.floor(this.random() * 2500);
    this.spawnTask((async () => {
      await sleep(downMs);
      // A start can fail (a full disk): said, and tried again every second.
      for (;;) {
        try {
          await instance.start();
          break;
        } catch (error) {
          this.record('start failed', { instance: instance.name, error: error.message.split('\n').filter((line) => line.startsWith('claw-server:')).join(' ') || error.message.split('\n')[0] });
          if (this.stopped) return;
          await sleep(1000);
        }
      }
      this.counts.restarts += 1;
      this.record('restarted', { instance: instance.name, pid: instance.pid, afterMs: downMs });
    })().finally(() => this.busy.delete(instance)));
    return true;
  }

  async freeze() {
    const free = this.free();
    const serving = this.instances.filter((instance) => instance.serving).length;
    if (this.instances.length < 2 || free.length === 0 || serving < 2) return false;
    const instance = this.pick(free);
    this.busy.add(instance);
    if (!instance.freeze()) {
      this.busy.delete(instance);
      return false;
    }
    const at = Date.now();
    const owned = this.monitor?.lost(instance.instanceId, 'SIGSTOP', at) ?? 0;
    const frozenMs = Math.round(this.leaseMs * (2.5 + this.random()));
    this.counts.freezes += 1;
    this.record('SIGSTOP', { instance: instance.name, pid: instance.pid, forMs: frozenMs, owned });
    this.spawnTask((async () => {
      await sleep(frozenMs);
      instance.thaw();
      this.record('SIGCONT', { instance: instance.name, pid: instance.pid });
    })().finally(() => this.busy.delete(instance)));
    return true;
  }

  async restartPostgres() {
    if (this.cluster === undefined || this.pgDown) return false;
    this.pgDown = true;
    this.counts.pgRestarts += 1;
    this.record('postgres stop', { pid: this.cluster.pid });
    await this.cluster.stop();
    const downMs = 1500 + Math.floor(this.random() * 2000);
    await sleep(downMs);
    await this.cluster.start();
    this.pgDown = false;
    this.record('postgres started', { pid: this.cluster.pid, downMs });
    return true;
  }

  drop() {
    const connected = this.clients.filter((client) => client.connected);
    if (connected.length === 0) return false;
    const count = 1 + Math.floor(this.random() * Math.min(3, connected.length));
    const names = [];
    for (let index = 0; index < count; index += 1) {
      const client = this.pick(connected);
      if (client.drop()) names.push(client.name);
    }
    this.counts.drops += names.length;
    this.record('drop', { clients: names.join(',') });
    return names.length > 0;
  }

  async fullDisk() {
    if (this.fill === undefined) return false;
    this.counts.fullDisks += 1;
    const written = await this.fill.fill();
    this.record('disk full', { filledBytes: written });
    await sleep(this.fill.holdMs);
    await this.fill.free();
    this.record('disk freed', {});
    return true;
  }

  async act(kind) {
    switch (kind) {
      case 'kill': return this.kill();
      case 'freeze': return this.freeze();
      case 'postgres': return this.restartPostgres();
      case 'drop': return this.drop();
      case 'full disk': return this.fullDisk();
      default: throw new Error(`unknown chaos ${kind}`);
    }
  }

  /** Runs until `stopAt`: the plan's actions at their points, random ones (`weights`) between. */
  async run(stopAt, weights) {
    const plan = this.plan.map((step) => ({
      ...step, at: this.startedAt + step.share * this.durationMs, done: false,
    }));
    let nextRandom = this.startedAt + this.everyMs * (0.5 + this.random());
    const total = Object.values(weights).reduce((sum, weight) => sum + weight, 0);
    while (!this.stopped && Date.now() < stopAt) {
      const now = Date.now();
      const due = plan.find((step) => !step.done && step.at <= now);
      if (due !== undefined) {
        // A planned action that cannot happen now (its instances are busy) is tried again.
        if (await this.act(due.kind)) due.done = true;
        else await sleep(250);
        continue;
      }
      if (total > 0 && now >= nextRandom) {
        let roll = this.random() * total;
        const kind = Object.keys(weights).find((key) => (roll -= weights[key]) < 0) ?? 'drop';
        await this.act(kind);
        nextRandom = Date.now() + this.everyMs * (0.5 + this.random());
        continue;
      }
      await sleep(100);
    }
    this.missed = plan.filter((step) => !step.done).map((step) => step.kind);
  }

  /** Ends the chaos: waits for its actions under way, thaws, starts what is down. */
  async settle() {
    this.stopped = true;
    await Promise.allSettled([...this.tasks]);
    for (const instance of this.instances) instance.thaw();
    if (this.cluster !== undefined && this.pgDown) {
      await this.cluster.start();
      this.pgDown = false;
    }
    for (const instance of this.instances) {
      if (!instance.alive) {
        await instance.start();
        this.record('restarted', { instance: instance.name, pid: instance.pid, at: 'settle' });
      }
    }
  }
}

function summariseTakeovers({ takeovers, notTakenOver }) {
  const times = takeovers.map((takeover) => takeover.ms);
  return {
    count: takeovers.length,
    p50Ms: percentile(times, 50),
    p99Ms: percentile(times, 99),
    maxMs: times.length === 0 ? undefined : Math.max(...times),
    byKind: Object.fromEntries(['kill -9', 'SIGSTOP'].map((kind) => {
      const of = takeovers.filter((one) => one.kind === kind).map((one) => one.ms);
      return [kind, { count: of.length, p50Ms: percentile(of, 50), p99Ms: percentile(of, 99) }];
    })),
    notTakenOver: notTakenOver.length,
  };
}

/** The tasks per second of the load phase: tasks that ended (and those completed) a second. */
function rates(counts, loadMs) {
  const seconds = loadMs / 1000;
  return {
    tasksEndedPerSecond:
      Math.round(((counts.completed + counts.failed + counts.canceled) / seconds) * 100) / 100,
    tasksCompletedPerSecond: Math.round((counts.completed / seconds) * 100) / 100,
  };
}

/**
 * The evidence, when a check failed (or with `keep`): the results, each client's trace, and with
 * PostgreSQL every committed change (the audit copy) and the sessions' rows.
 */
async function writeEvidence(folder, { result, clients, audit }) {
  await writeFile(path.join(folder, 'result.json'), `${JSON.stringify(result, null, 2)}\n`);
  await mkdir(path.join(folder, 'clients'), { recursive: true });
  for (const client of clients) {
    await writeFile(path.join(folder, 'clients', `${client.name}.trace`), `${client.traceLines.join('\n')}\n`);
  }
  if (audit !== undefined) {
    const lines = audit.rawRows.map((row) => JSON.stringify({
      session: row.session_id, seq: row.seq, writer: row.writer, at: row.at, change: row.change,
    }));
    await writeFile(path.join(folder, 'changes.jsonl'), `${lines.join('\n')}\n`);
    await writeFile(path.join(folder, 'sessions.json'), `${JSON.stringify(audit.sessions, null, 2)}\n`);
    await writeFile(path.join(folder, 'snapshots.jsonl'), `${audit.snapshotRows.map((row) => JSON.stringify(row)).join('\n')}\n`);
  }
}

const describeInstance = (instance) => ({
  name: instance.name,
  starts: instance.starts,
  startFailures: instance.startFailures,
  log: instance.logFile,
});

async function newRunFolder(keepFolder) {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'claw-soak-'));
  return {
    folder,
    remove: async (keep) => {
      if (!keep && !keepFolder) await rm(folder, { recursive: true, force: true });
    },
  };
}

/**
 * The PostgreSQL soak. `options` as `defaults` plus `log(line)` and `keep` (keep the run's
 * folder whatever the outcome; it is kept anyway when a check fails).
 */
export async function runPgSoak(input) {
  const options = { ...defaults, ...input };
  const log = options.log ?? (() => undefined);
  const random = seeded(options.seed);
  const run = await newRunFolder(options.keep);
  const workDir = path.join(run.folder, 'workspace');
  await fillWorkspace(workDir);
  let cluster;
  let forgetCluster = () => undefined;
  let model;
  const instances = [];
  let violations = [];
  try {
    cluster = await startCluster();
    const started = cluster;
    forgetCluster = onAbort(() => started.destroy());
    const url = await cluster.createDatabase();
    model = await startModel({ steps: options.steps, latencyMs: options.modelLatencyMs });
    const storeArgs = ['--store', url, '--lease-ms', String(options.leaseMs), '--shutdown-grace-ms', '2000'];
    const names = 'ABCDEFGH';
    for (let index = 0; index < options.instances; index += 1) {
      const folder = path.join(run.folder, `instance-${names[index]}`);
      await mkdir(folder);
      instances.push(new Instance({
        name: names[index], folder, workDirs: [workDir], args: storeArgs,
        env: { OPENAI_BASE_URL: model.baseURL },
      }));
    }
    // The first instance creates the schema; the audit trigger goes on it before any session.
    await instances[0].start();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(auditSql);
    await admin.end();
    await Promise.all(instances.slice(1).map((instance) => instance.start()));
    log(`${instances.length} instances on PostgreSQL (lease ${options.leaseMs} ms): ${instances.map((instance) => `${instance.name} pid ${instance.pid}`).join(', ')}`);
    const monitor = new OwnershipMonitor(url);
    const serving = () => instances.filter((instance) => instance.serving);
    const { controllers, all } = makeClients({ count: options.clients, observers: options.observers, random, prefix: 'soak', instances: serving, options });
    const startedAt = Date.now();
    const stopAt = startedAt + options.durationMs;
    const running = all.map((client) => client.run());
    const chaos = new Chaos({
      instances, clients: all, random, log, monitor, leaseMs: options.leaseMs, cluster, startedAt,
      durationMs: options.durationMs,
      everyMs: options.chaosEveryMs,
      plan: [
        { share: 0.1, kind: 'drop' },
        { share: 0.25, kind: 'kill' },
        ...(options.instances > 1 ? [{ share: 0.45, kind: 'freeze' }] : []),
        // One PostgreSQL restart at 65% of the run; more spread from 30% to 90%.
        ...Array.from({ length: options.pgRestarts }, (_, index) => ({
          share: options.pgRestarts === 1 ? 0.65 : 0.3 + (0.6 * index) / (options.pgRestarts - 1),
          kind: 'postgres',
        })),
        { share: 0.8, kind: 'drop' },
      ],
    });
    // Random chaos between the planned actions (PostgreSQL restarts only as planned).
    if (options.calm) chaos.plan = [];
    const weights = { kill: 3, freeze: options.instances > 1 ? 2 : 0, drop: 5 };
    await chaos.run(stopAt, options.calm ? {} : weights);
    const loadMs = Date.now() - startedAt;
    await chaos.settle();
    log(`load over after ${(loadMs / 1000).toFixed(0)} s; draining (at most ${options.drainMs / 1000} s)`);
    const undrained = await drain(all, options.drainMs, log);
    await Promise.allSettled(running);
    const ownership = await monitor.stop();
    await Promise.all(instances.map((instance) => instance.stop()));
    const sessionIds = controllers.map((client) => client.sessionId);
    const audit = await readAudit(url, sessionIds);
    const markers = await readMarkers(workDir);
    // A fresh instance reads every session.
    const freshFolder = path.join(run.folder, 'instance-fresh');
    await mkdir(freshFolder);
    const fresh = new Instance({ name: 'fresh', folder: freshFolder, workDirs: [workDir], args: storeArgs, env: { OPENAI_BASE_URL: model.baseURL } });
    await fresh.start();
    let read;
    try {
      read = await readSessions(fresh, sessionIds);
    } finally {
      await fresh.stop();
    }
    const sessions = sessionIds.map((sessionId) => ({
      sessionId,
      stored: audit.bySession.get(sessionId).stored,
      storeComplete: true,
      journalStarted: audit.bySession.get(sessionId).journalStarted,
      explainMissing: (seqs) => explainMissing(audit.bySession.get(sessionId), seqs),
      final: read.finals.get(sessionId),
    }));
    const result = check({ sessions, clients: all, markers, unreadable: read.unreadable });
    violations = result.violations;
    for (const doubled of audit.doubledRecords) violations.push({ check: 'unique', session: doubled.session, detail: `change seq ${doubled.seq} was committed ${doubled.times} times` });
    for (const crash of instances.flatMap((one) => one.crashes.map((found) => ({ instance: one.name, ...found })))) violations.push({ check: 'crash', session: '-', detail: `instance ${crash.instance} exited by itself (${crash.code ?? crash.signal}) at ${crash.at}; its last output:\n${crash.tail}` });
    for (const left of undrained) violations.push({ check: 'ended', session: left.session, detail: `client ${left.client} still saw task(s) ${left.openTasks.join(', ') || '(none)'} open, state ${left.state}, when the drain time ran out` });
    if (chaos.missed.length > 0) log(`planned chaos that did not happen: ${chaos.missed.join(', ')}`);
    await Promise.all([...instances, fresh].map((instance) => instance.closeLog()));
    const outcome = {
      store: 'postgres',
      violations,
      counts: { ...result.counts, auditRows: audit.rows, clients: clientTotals(all) },
      figures: {
        loadSeconds: Math.round(loadMs / 100) / 10,
        ...rates(result.counts, loadMs),
        takeovers: summariseTakeovers(ownership),
        monitorErrors: monitor.errors,
      },
      chaos: { counts: chaos.counts, missed: chaos.missed, events: chaos.events },
      instances: instances.map(describeInstance),
      runFolder: run.folder,
    };
    if (violations.length > 0 || options.keep) {
      await writeEvidence(run.folder, { result: outcome, clients: all, audit });
    }
    return outcome;
  } finally {
    await stopAll();
    await model?.stop().catch(() => undefined);
    await cluster?.destroy().catch(() => undefined);
    forgetCluster();
    await run.remove(violations.length > 0);
  }
}

/**
 * A folder on a small filesystem of its own, for the full disk: a tmpfs in a mount namespace
 * of its own (`unshare`; as root a mount namespace, otherwise a user namespace too, where the
 * kernel allows it), kept by a holder process. Instances are started in that namespace
 * (`nsenter`), and this process reads and writes its files through /proc/<holder>/root.
 * → {dir (as the instances see it), visible (as this process sees it), launcher, stop} or
 * {skipped: why}.
 */
async function smallFilesystem(dir, sizeMb) {
  const asRoot = process.getuid?.() === 0;
  const unshareFlags = asRoot ? ['--mount', '--propagation', 'private'] : ['--user', '--map-root-user', '--mount'];
  let holder;
  try {
    holder = spawn('unshare', [
      ...unshareFlags, 'sh', '-c',
      'mount -t tmpfs -o "size=$2m,mode=0777" tmpfs "$1" && echo ready && exec sleep 2147483647',
      'sh', dir, String(sizeMb),
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    return { skipped: `no size-limited filesystem: ${error.message}` };
  }
  let output = '';
  holder.stdout.setEncoding('utf8').on('data', (text) => void (output += text));
  holder.stderr.setEncoding('utf8').on('data', (text) => void (output += text));
  const ready = await new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), 5000);
    holder.once('error', () => resolve(false));
    holder.once('exit', () => {
      clearTimeout(timer);
      resolve(false);
    });
    holder.stdout.on('data', () => {
      if (output.includes('ready')) {
        clearTimeout(timer);
        resolve(true);
      }
    });
  });
  const stop = async () => {
    if (holder.exitCode !== null || holder.signalCode !== null) return;
    const exited = new Promise((resolve) => holder.once('exit', resolve));
    holder.kill('SIGKILL');
    await exited;
  };
  if (!ready) {
    await stop();
    return { skipped: `no size-limited filesystem: a tmpfs in a mount namespace of its own could not be made (unshare ${unshareFlags.join(' ')}: ${output.trim() || 'no answer'})` };
  }
  const visible = `/proc/${holder.pid}/root${dir}`;
  if (!existsSync(visible)) {
    await stop();
    return { skipped: `no size-limited filesystem: ${visible} cannot be reached from outside the namespace` };
  }
  const launcher = ['nsenter', `--target=${holder.pid}`, '--mount', ...(asRoot ? [] : ['--user', '--preserve-credentials']), '--'];
  return { dir, visible, launcher, stop, sizeMb };
}

/** Fills a filesystem until it is full, and frees it again. */
function filler(folder, holdMs) {
  const file = path.join(folder, 'soak-fill.bin');
  return {
    holdMs,
    fill: async () => {
      const handle = await open(file, 'w');
      const block = Buffer.alloc(1024 * 1024, 0x78);
      let written = 0;
      try {
        for (;;) {
          const { bytesWritten } = await handle.write(block);
          written += bytesWritten;
          if (bytesWritten < block.length) break;
        }
      } catch (error) {
        if (error.code !== 'ENOSPC') throw error;
      }
      // Down to the last bytes: a small block at a time.
      const small = Buffer.alloc(512, 0x78);
      try {
        for (;;) written += (await handle.write(small)).bytesWritten;
      } catch (error) {
        if (error.code !== 'ENOSPC') throw error;
      }
      await handle.close();
      return written;
    },
    free: () => unlink(file),
  };
}

/** Session id → the events and journal starts its file still holds (after its last snapshot). */
async function readSessionFiles(dir, sessionIds) {
  const files = new Map();
  for (const sessionId of sessionIds) {
    const text = await readFile(path.join(dir, '.claw', 'sessions', `${sessionId}.jsonl`), 'utf8').catch(() => '');
    const events = new Map();
    for (const line of text.split('\n')) {
      if (line === '') continue;
      let record;
      try {
        record = JSON.parse(line);
      } catch {
        continue;
      }
      if (record.type === 'event') events.set(record.event.seq, record.event);
    }
    files.set(sessionId, events);
  }
  return files;
}

/**
 * The file-store soak: one instance, kill -9 and restarts under the clients' load, and a full
 * disk (when a size-limited filesystem can be made; else said in `fullDisk.skipped`).
 */
export async function runFileSoak(input) {
  const options = { ...defaults, ...input };
  const log = options.log ?? (() => undefined);
  const random = seeded(options.seed + 1);
  const run = await newRunFolder(options.keep);
  const mountPoint = path.join(run.folder, 'workspace');
  await mkdir(mountPoint, { recursive: true });
  let small = options.fullDisk === false ? { skipped: 'full disk not asked for' } : await smallFilesystem(mountPoint, options.tmpfsMb);
  const forgetHolder = small.stop === undefined ? () => undefined : onAbort(small.stop);
  const fullDisk = small.skipped === undefined
    ? { sizeMb: small.sizeMb, holdMs: options.fullDiskMs }
    : { skipped: small.skipped };
  if (small.skipped !== undefined) {
    log(`file soak: ${small.skipped}; the full-disk part is skipped`);
    small = { dir: mountPoint, visible: mountPoint, launcher: [], stop: async () => undefined };
  }
  let model;
  let violations = [];
  const instances = [];
  try {
    await fillWorkspace(small.visible);
    model = await startModel({ steps: options.steps, latencyMs: options.modelLatencyMs });
    const folder = path.join(run.folder, 'instance-F');
    await mkdir(folder);
    const instance = new Instance({
      name: 'F', folder, workDirs: [small.dir], args: ['--shutdown-grace-ms', '2000'],
      env: { OPENAI_BASE_URL: model.baseURL }, launcher: small.launcher,
    });
    instances.push(instance);
    await instance.start();
    log(`file store: instance F pid ${instance.pid}${fullDisk.skipped === undefined ? `, workspace on a ${fullDisk.sizeMb} MB tmpfs` : ''}`);
    const serving = () => instances.filter((one) => one.serving);
    const { controllers, all } = makeClients({ count: options.fileClients, observers: Math.floor(options.fileClients / 3), random, prefix: 'file', instances: serving, options });
    const startedAt = Date.now();
    const stopAt = startedAt + options.fileDurationMs;
    const running = all.map((client) => client.run());
    const chaos = new Chaos({
      instances, clients: all, random, log, leaseMs: options.leaseMs, startedAt,
      durationMs: options.fileDurationMs,
      everyMs: options.chaosEveryMs,
      fill: fullDisk.skipped === undefined ? filler(small.visible, options.fullDiskMs) : undefined,
      plan: [
        { share: 0.15, kind: 'drop' },
        { share: 0.3, kind: 'kill' },
        ...(fullDisk.skipped === undefined ? [{ share: 0.5, kind: 'full disk' }] : []),
        { share: 0.75, kind: 'kill' },
      ],
    });
    if (options.calm) chaos.plan = [];
    await chaos.run(stopAt, options.calm ? {} : { kill: 2, drop: 4 });
    const loadMs = Date.now() - startedAt;
    await chaos.settle();
    log(`file soak: load over after ${(loadMs / 1000).toFixed(0)} s; draining`);
    const undrained = await drain(all, options.drainMs, log);
    await Promise.allSettled(running);
    await instance.stop();
    const sessionIds = controllers.map((client) => client.sessionId);
    const markers = await readMarkers(small.visible);
    const files = await readSessionFiles(small.visible, sessionIds);
    const freshFolder = path.join(run.folder, 'instance-fresh');
    await mkdir(freshFolder);
    const fresh = new Instance({ name: 'fresh', folder: freshFolder, workDirs: [small.dir], args: [], env: { OPENAI_BASE_URL: model.baseURL }, launcher: small.launcher });
    await fresh.start();
    let read;
    try {
      read = await readSessions(fresh, sessionIds);
    } finally {
      await fresh.stop();
    }
    // What is known of each session's events: what its clients received and its file still has.
    const sessions = sessionIds.map((sessionId) => {
      const stored = new Map();
      const add = (event) => {
        const list = stored.get(event.seq) ?? [];
        if (!list.some((other) => canonical(other) === canonical(event))) list.push(event);
        stored.set(event.seq, list);
      };
      for (const event of files.get(sessionId).values()) add(event);
      for (const client of all.filter((one) => one.sessionId === sessionId)) {
        for (const text of client.received.values()) {
          const event = JSON.parse(text);
          add(event);
        }
      }
      const final = read.finals.get(sessionId);
      return { sessionId, stored, storeComplete: false, journalStarted: undefined, final };
    });
    const result = check({ sessions, clients: all, markers, unreadable: read.unreadable });
    violations = result.violations;
    for (const crash of instances.flatMap((one) => one.crashes.map((found) => ({ instance: one.name, ...found })))) violations.push({ check: 'crash', session: '-', detail: `instance ${crash.instance} exited by itself (${crash.code ?? crash.signal}) at ${crash.at}; its last output:\n${crash.tail}` });
    for (const left of undrained) violations.push({ check: 'ended', session: left.session, detail: `client ${left.client} still saw task(s) ${left.openTasks.join(', ') || '(none)'} open, state ${left.state}, when the drain time ran out` });
    await Promise.all([...instances, fresh].map((one) => one.closeLog()));
    const outcome = {
      store: 'file',
      violations,
      counts: { ...result.counts, clients: clientTotals(all) },
      figures: { loadSeconds: Math.round(loadMs / 100) / 10, ...rates(result.counts, loadMs) },
      fullDisk,
      chaos: { counts: chaos.counts, missed: chaos.missed, events: chaos.events },
      instances: [describeInstance(instance)],
      runFolder: run.folder,
    };
    if (violations.length > 0 || options.keep) {
      await writeEvidence(run.folder, { result: outcome, clients: all });
    }
    return outcome;
  } finally {
    await stopAll();
    await model?.stop().catch(() => undefined);
    await small.stop();
    forgetHolder();
    await run.remove(violations.length > 0);
  }
}
