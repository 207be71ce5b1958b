// The soak (LIFE-3): claw-server instances on one PostgreSQL under client load and chaos (kill -9,
// SIGSTOP past the lease, a PostgreSQL restart, dropped connections), then the file store under
// kill -9 restarts and a full disk; afterwards every session is checked (check.mjs). Prints the
// counts, tasks per second and the takeover times, and exits 1 on any violation.
//
//   node bench/soak/main.mjs [--duration 10m] [--file-duration 3m] [--store both|pg|file]
//     [--instances 3] [--clients 30] [--observers 10] [--file-clients 10] [--lease-ms 2000]
//     [--seed 1] [--pg-restarts 1] [--drain 60s] [--full-disk 5s | --no-full-disk]
//     [--tmpfs-mb 64] [--chaos-every 6s] [--calm] [--keep] [--json]
//
// --calm: the same load without any chaos (a baseline: what fails then fails without chaos).
//
// Durations: 45s, 10m, 1h or milliseconds. SOAK_DURATION sets --duration's default. --json prints
// one JSON object (the results) on stdout; the progress goes to stderr either way.
import { parseArgs } from 'node:util';
import { postgresAvailable } from '@claw/session-store-pg/testing';
import { abortAll } from './processes.mjs';
import { defaults, runFileSoak, runPgSoak } from './soak.mjs';

function duration(text, flag) {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(String(text).trim());
  if (match === null) {
    console.error(`--${flag} needs a duration such as 45s, 10m or 1h, got "${text}"`);
    process.exit(2);
  }
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] ?? 'ms'];
  return Math.round(Number(match[1]) * unit);
}

function whole(text, flag, min = 0) {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min) {
    console.error(`--${flag} needs a whole number of at least ${min}, got "${text}"`);
    process.exit(2);
  }
  return value;
}

const usage = `Usage: node bench/soak/main.mjs [options]   (build first: npm run bench:soak does both)

Runs claw-server instances on one PostgreSQL (a throwaway cluster) under client load and chaos,
then the file store with one instance, and checks every session afterwards. Exits 0 without
violations, 1 with any (the run's folder, with every log and trace, is then kept), 2 for bad flags.

  --duration <d>        load on PostgreSQL (default 10m, or SOAK_DURATION); d: 45s, 10m, 1h, ms
  --file-duration <d>   load on the file store (default a third of --duration, at least 20s)
  --store both|pg|file  which stores (default both)
  --instances <n>       claw-server instances on PostgreSQL (default ${defaults.instances})
  --clients <n>         controllers, one session each (default ${defaults.clients})
  --observers <n>       observers of those sessions (default ${defaults.observers})
  --file-clients <n>    controllers on the file store (default ${defaults.fileClients})
  --lease-ms <n>        the instances' session lease (default ${defaults.leaseMs})
  --pg-restarts <n>     planned PostgreSQL restarts (default ${defaults.pgRestarts})
  --chaos-every <d>     mean time between random chaos actions (default ${defaults.chaosEveryMs} ms)
  --drain <d>           how long tasks may take to end after the load (default ${defaults.drainMs} ms)
  --full-disk <d>       how long the file store's small tmpfs stays full (default ${defaults.fullDiskMs} ms)
  --no-full-disk        no full disk
  --tmpfs-mb <n>        size of that tmpfs (default ${defaults.tmpfsMb})
  --seed <n>            repeat the chaos's choices (the timing still varies)
  --calm                the same load without any chaos (a baseline)
  --keep                keep the run's folder also without violations
  --json                print the result as one JSON object on stdout (progress on stderr)
  --help                this text
`;

let parsed;
try {
  parsed = parseArgs({
    options: {
      duration: { type: 'string' },
      'file-duration': { type: 'string' },
      store: { type: 'string', default: 'both' },
      instances: { type: 'string' },
      clients: { type: 'string' },
      observers: { type: 'string' },
      'file-clients': { type: 'string' },
      'lease-ms': { type: 'string' },
      seed: { type: 'string' },
      'pg-restarts': { type: 'string' },
      drain: { type: 'string' },
      'full-disk': { type: 'string' },
      'no-full-disk': { type: 'boolean', default: false },
      'chaos-every': { type: 'string' },
      'tmpfs-mb': { type: 'string' },
      calm: { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
} catch (error) {
  console.error(`${error.message}\n\n${usage}`);
  process.exit(2);
}
const flags = parsed.values;
if (flags.help) {
  process.stdout.write(usage);
  process.exit(0);
}

const durationMs = duration(flags.duration ?? process.env.SOAK_DURATION ?? '10m', 'duration');
const options = {
  durationMs,
  fileDurationMs: flags['file-duration'] === undefined ? Math.max(20_000, Math.round(durationMs / 3)) : duration(flags['file-duration'], 'file-duration'),
  instances: flags.instances === undefined ? defaults.instances : whole(flags.instances, 'instances', 1),
  clients: flags.clients === undefined ? defaults.clients : whole(flags.clients, 'clients', 1),
  observers: flags.observers === undefined ? defaults.observers : whole(flags.observers, 'observers'),
  fileClients: flags['file-clients'] === undefined ? defaults.fileClients : whole(flags['file-clients'], 'file-clients', 1),
  leaseMs: flags['lease-ms'] === undefined ? defaults.leaseMs : whole(flags['lease-ms'], 'lease-ms', 1000),
  seed: flags.seed === undefined ? Date.now() % 100_000 : whole(flags.seed, 'seed'),
  pgRestarts: flags['pg-restarts'] === undefined ? defaults.pgRestarts : whole(flags['pg-restarts'], 'pg-restarts'),
  drainMs: flags.drain === undefined ? defaults.drainMs : duration(flags.drain, 'drain'),
  fullDiskMs: flags['full-disk'] === undefined ? defaults.fullDiskMs : duration(flags['full-disk'], 'full-disk'),
  fullDisk: !flags['no-full-disk'],
  chaosEveryMs: flags['chaos-every'] === undefined ? defaults.chaosEveryMs : duration(flags['chaos-every'], 'chaos-every'),
  tmpfsMb: flags['tmpfs-mb'] === undefined ? defaults.tmpfsMb : whole(flags['tmpfs-mb'], 'tmpfs-mb', 8),
  calm: flags.calm,
  keep: flags.keep,
  log: (line) => process.stderr.write(`${line}\n`),
};
if (!['both', 'pg', 'file'].includes(flags.store)) {
  console.error(`--store is both, pg or file, got "${flags.store}"`);
  process.exit(2);
}

// Stopped from outside: its processes and the throwaway cluster go with it.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    options.log(`${signal}: stopping the soak's processes`);
    void abortAll().finally(() => process.exit(130));
  });
}

const results = [];
if (flags.store !== 'file') {
  if (!postgresAvailable()) {
    console.error('the soak on PostgreSQL needs its server binaries (initdb, postgres): apt-get install -y postgresql; or run --store file');
    process.exit(2);
  }
  options.log(`soak on PostgreSQL: ${options.instances} instances, ${options.clients} controllers + ${options.observers} observers, ${durationMs / 1000} s, seed ${options.seed}`);
  results.push(await runPgSoak(options));
}
if (flags.store !== 'pg') {
  options.log(`soak on the file store: 1 instance, ${options.fileClients} controllers, ${options.fileDurationMs / 1000} s, seed ${options.seed}`);
  results.push(await runFileSoak(options));
}

const violations = results.reduce((sum, result) => sum + result.violations.length, 0);
if (flags.json) {
  process.stdout.write(`${JSON.stringify({ ok: violations === 0, seed: options.seed, results }, null, 2)}\n`);
} else {
  for (const result of results) print(result);
  console.log(violations === 0 ? '\nno violations' : `\n${violations} violation(s)`);
}
process.exit(violations === 0 ? 0 : 1);

function print(result) {
  const { counts, figures, chaos } = result;
  const c = counts.clients;
  const ms = (value) => (value === undefined ? '-' : `${(value / 1000).toFixed(2)} s`);
  console.log(`\n== ${result.store} store (${figures.loadSeconds} s of load) ==`);
  console.log(`chaos: ${Object.entries(chaos.counts).map(([key, value]) => `${key} ${value}`).join(', ')}${chaos.missed?.length ? ` (planned but not done: ${chaos.missed.join(', ')})` : ''}`);
  if (result.fullDisk !== undefined) console.log(`full disk: ${result.fullDisk.skipped ?? `${result.fullDisk.sizeMb} MB tmpfs filled for ${result.fullDisk.holdMs / 1000} s`}`);
  console.log(`sessions ${counts.sessions}, events ${counts.events}, tasks ${counts.tasks}: completed ${counts.completed}, failed ${counts.failed} (${Object.entries(counts.failedCodes).map(([code, n]) => `${code} ${n}`).join(', ') || 'none'}), canceled ${counts.canceled}`);
  console.log(`tool calls ${counts.toolCalls}, results ${counts.toolResults}; bash calls ${counts.bashCalls}, ran ${counts.bashRan}; started-outcome-unknown ${counts.startedOutcomeUnknown}, never-started ${counts.neverStarted}; approvals denied ${counts.approvalsDenied}; marker files ${counts.markers} (${counts.markerLines} lines)`);
  console.log(`clients: connections ${c.connections}, dropped ${c.dropped}, closed by the server ${c.closedByServer}, pong timeouts ${c.pongTimeouts}, sessions ended by the server ${c.sessionEnded}, events sent again after a resync ${c.replayed}, open errors ${c.openErrors}, prompts ${c.promptsSent} (errors ${c.promptErrors}, lost ${c.promptsLost}), cursor_expired ${counts.cursorExpired} (beyond the end ${counts.cursorBeyondEnd}, too old ${counts.cursorTooOld}), pairings not checkable (their partner in a seq no source holds) ${counts.unverifiable}; events received ${counts.clientEventsReceived}, checked against the store ${counts.clientEventsChecked}`);
  for (const instance of result.instances) {
    for (const failure of instance.startFailures ?? []) {
      const said = failure.tail.split('\n').filter((line) => line.startsWith('claw-server:')).join(' ');
      console.log(`instance ${instance.name} could not start at ${failure.at} (exit ${failure.code ?? failure.signal}): ${said || failure.tail.slice(-300)}`);
    }
  }
  console.log(`tasks per second: ${figures.tasksEndedPerSecond} ended, ${figures.tasksCompletedPerSecond} completed`);
  if (figures.takeovers !== undefined) {
    const t = figures.takeovers;
    console.log(`takeovers: ${t.count} (p50 ${ms(t.p50Ms)}, p99 ${ms(t.p99Ms)}, max ${ms(t.maxMs)}; after kill -9: ${t.byKind['kill -9'].count}, p50 ${ms(t.byKind['kill -9'].p50Ms)}; after SIGSTOP: ${t.byKind.SIGSTOP.count}, p50 ${ms(t.byKind.SIGSTOP.p50Ms)}); owned sessions not taken over: ${t.notTakenOver}`);
  }
  const byCheck = {};
  for (const { check } of result.violations) byCheck[check] = (byCheck[check] ?? 0) + 1;
  console.log(`violations: ${result.violations.length}${result.violations.length > 0 ? ` (${Object.entries(byCheck).map(([key, value]) => `${key} ${value}`).join(', ')}); the run's folder (logs) is kept: ${result.runFolder}` : ''}`);
  // A few of each check: one defect can make hundreds of lines of one kind.
  for (const name of Object.keys(byCheck)) {
    const of = result.violations.filter((violation) => violation.check === name);
    for (const violation of of.slice(0, 8)) console.log(`  [${name}] ${violation.session}: ${violation.detail.slice(0, 600)}`);
    if (of.length > 8) console.log(`  [${name}] … ${of.length - 8} more (all in result.json in the run's folder, or with --json)`);
  }
}
