// CLI overhead benchmark (PERF-1, PERF-2): the built `claw` run exactly as a user runs it,
// `claw -p … --output stream-json --approval allow` with a durable session, the tool journal,
// traces and stream-json on (the defaults), against a bare loop on the openai package run as its
// own process the same way (bare.mjs). Both do the same work against the same fake server: 50
// turns of 4 parallel read_file calls, zero model latency. Both are timed from the outside, the
// same way: this process runs the fake server and notes when each model request arrives, so a
// turn is the gap between two consecutive requests of a run, and start-up is the time from
// spawning the process to its first request. Runs of the two alternate (which one goes first
// too), each in a fresh workspace. Then `claw --version` and `claw --help` against `node -e 0`.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { FakeOpenAIServer } from '@claw/testing/node';
import { buildMain, comparedBuilds, median, percentile, ratioSpread } from '../bare-loop.mjs';
import { statCpuMs } from '../proc-stat.mjs';

const turns = 50;
const callsPerTurn = 4;
const runs = Number(process.env.BENCH_RUNS ?? 6);
const startupRuns = Number(process.env.BENCH_STARTUP_RUNS ?? 15);
const targets = { turn: 1.2, firstRequest: 1.25, startupMs: 50 };

const root = path.resolve(import.meta.dirname, '..', '..');
// BENCH_CLAW_MAIN runs another build of claw (e.g. an older one) in the built one's place.
const clawMain =
  process.env.BENCH_CLAW_MAIN === undefined
    ? path.join(root, 'apps', 'cli', 'dist', 'main.js')
    : buildMain(process.env.BENCH_CLAW_MAIN, 'BENCH_CLAW_MAIN');
// BENCH_COMPARE: more builds of claw (main.js paths, comma-separated), run interleaved with the
// others as contenders "claw B", "claw C", …: an A/B of a change in one run, where the machine's
// drift between runs cannot pass for an effect.
const compared = comparedBuilds();
const compareMains = compared.map((build) => build.main);
const compareNames = compared.map((build) => build.name);
const bareMain = path.join(import.meta.dirname, 'bare.mjs');
const prompt = 'Read the four files, again and again.';

// The turn comes from the request itself (the id of the last tool call): runs share no state.
const turnOf = (body) => {
  const last = body.messages.findLast((message) => message.role === 'assistant');
  const id = last?.tool_calls?.[0]?.id;
  return id === undefined ? 0 : Number(id.split('_')[1]) + 1;
};
let arrivals = []; // request arrival times (performance.now()) of the run in progress
const server = await FakeOpenAIServer.start({
  onRequest: (request) => void arrivals.push(request.receivedAt),
  turns: (body) => {
    const turn = turnOf(body);
    if (turn >= turns) return { text: 'All files read.', usage: { promptTokens: 1000, completionTokens: 5 } };
    return {
      toolCalls: Array.from({ length: callsPerTurn }, (_, index) => ({
        id: `call_${turn}_${index}`,
        name: 'read_file',
        arguments: JSON.stringify({ path: `file-${index}.txt` }),
      })),
      usage: { promptTokens: 1000, completionTokens: 40 },
    };
  },
});
const env = {
  ...process.env,
  OPENAI_BASE_URL: server.baseURL,
  OPENAI_API_KEY: 'bench',
  OPENAI_MODEL: 'bench-model',
};

// CPU time of waited-for children, from this process's /proc/self/stat (cutime + cstime): read
// before a child starts and after it has exited, the difference is that child's CPU time (its
// own children included). Linux only; elsewhere the column says n/a.
const childCpuMs = () => {
  try {
    return statCpuMs('/proc/self/stat', { children: true });
  } catch {
    return Number.NaN;
  }
};

/** Runs one process to its end; its stdout is read (and kept) as a user's pipe would read it. */
function runProcess(args, options = {}) {
  return new Promise((resolve, reject) => {
    arrivals = [];
    const cpuBefore = childCpuMs();
    const startedAt = performance.now();
    const child = spawn(process.execPath, args, { env, cwd: options.cwd ?? root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let exitedAt = 0;
    child.stdout.setEncoding('utf8').on('data', (text) => void (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text) => void (stderr += text));
    child.once('error', reject);
    child.once('exit', () => void (exitedAt = performance.now()));
    child.once('close', (code, signal) => {
      const cpuMs = childCpuMs() - cpuBefore;
      const wallMs = exitedAt - startedAt;
      resolve({ code: code ?? signal, stdout, stderr, startedAt, wallMs, cpuMs, arrivals });
    });
  });
}

async function freshWorkspace() {
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'claw-bench-cli-'));
  for (let index = 0; index < callsPerTurn; index += 1) {
    await writeFile(path.join(workDir, `file-${index}.txt`), 'line of source code\n'.repeat(50));
  }
  return workDir;
}

const clawTask = (main) => (workDir) => [
  main, '-p', prompt, '--workdir', workDir, '--output', 'stream-json', '--approval', 'allow',
  // 51 model calls; the default limit is 20.
  '--max-turns', String(turns + 10),
];
const contenders = {
  bare: (workDir) => [bareMain, prompt, workDir],
  claw: clawTask(clawMain),
  ...Object.fromEntries(compareNames.map((name, index) => [name, clawTask(compareMains[index])])),
};

/** One run of a contender in a fresh workspace, checked to have done all the work. */
async function runTask(name) {
  const workDir = await freshWorkspace();
  try {
    const result = await runProcess(contenders[name](workDir));
    const problem = (text) =>
      new Error(`${name} run: ${text} (exit ${result.code})\n${result.stderr.slice(-2000)}`);
    if (result.code !== 0) throw problem('failed');
    if (result.arrivals.length !== turns + 1) {
      throw problem(`made ${result.arrivals.length} model requests, expected ${turns + 1}`);
    }
    if (name !== 'bare') {
      const last = JSON.parse(result.stdout.trim().split('\n').at(-1));
      if (last.type !== 'task_completed') throw problem(`ended with ${last.type}`);
    } else if (result.stdout.trim() !== 'All files read.') {
      throw problem(`printed ${JSON.stringify(result.stdout.slice(0, 200))}`);
    }
    const turnTimes = result.arrivals.slice(1).map((at, index) => at - result.arrivals[index]);
    return {
      turnTimes,
      firstRequestMs: result.arrivals[0] - result.startedAt,
      wallMs: result.wallMs,
      cpuMs: result.cpuMs,
    };
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

const startupCommands = {
  node: ['-e', '0'],
  'claw --version': [clawMain, '--version'],
  'claw --help': [clawMain, '--help'],
};

const tasks = Object.fromEntries(Object.keys(contenders).map((name) => [name, []]));
const startup = Object.fromEntries(Object.keys(startupCommands).map((name) => [name, []]));
try {
  // Warm-up (not measured): the files of both into the page cache, the fake server's JIT.
  const contenderNames = Object.keys(contenders);
  for (const name of contenderNames) await runTask(name);
  for (let run = 0; run < runs; run += 1) {
    // Each run starts with another contender, and every other run goes the other way round.
    const rotated = contenderNames.map(
      (_, index) => contenderNames[(index + run) % contenderNames.length],
    );
    const order = run % 2 === 0 ? rotated : rotated.reverse();
    for (const name of order) {
      tasks[name].push(await runTask(name));
      process.stderr.write('.');
    }
  }
  for (let run = 0; run < startupRuns; run += 1) {
    const names = Object.keys(startupCommands);
    const order = names.map((_, index) => names[(index + run) % names.length]);
    for (const name of order) {
      const result = await runProcess(startupCommands[name]);
      if (result.code !== 0) throw new Error(`${name} failed (exit ${result.code}): ${result.stderr}`);
      startup[name].push(result.wallMs);
    }
    process.stderr.write('.');
  }
  process.stderr.write('\n');
} finally {
  await server.close();
}

const summary = Object.fromEntries(
  Object.entries(tasks).map(([name, results]) => {
    const turnTimes = results.flatMap((result) => result.turnTimes);
    return [
      name,
      {
        turnMedian: median(turnTimes),
        turnP95: percentile(turnTimes, 95),
        firstRequest: median(results.map((result) => result.firstRequestMs)),
        firstRequestRange: [
          Math.min(...results.map((result) => result.firstRequestMs)),
          Math.max(...results.map((result) => result.firstRequestMs)),
        ],
        cpu: median(results.map((result) => result.cpuMs)),
        wall: median(results.map((result) => result.wallMs)),
      },
    ];
  }),
);

const ms = (value, digits = 2) => (Number.isNaN(value) ? 'n/a' : `${value.toFixed(digits)} ms`);
const times = (value) => (Number.isNaN(value) ? 'n/a' : `${value.toFixed(3)}x`);
const columns = ['turn median', 'turn p95', 'start → 1st req', 'CPU / run', 'wall / run'];
const row = (label, cells) =>
  console.log(`${label.padEnd(20)}${cells.map((cell, index) => cell.padStart(columns[index].length + 3)).join('')}`);
const { bare, claw } = summary;
const ratio = (key) => claw[key] / bare[key];

console.log(
  'cli-overhead: the built claw (-p, stream-json, session file, tool journal, traces) against a ' +
  'bare openai loop, each as its own process',
);
console.log(
  `${turns} turns × ${callsPerTurn} parallel read_file, fake server, zero model latency; ` +
  `${runs} runs each, interleaved, after one warm-up run each; timed at the fake server\n`,
);
row('', columns);
const keys = ['turnMedian', 'turnP95', 'firstRequest', 'cpu', 'wall'];
const digits = [3, 3, 1, 0, 0];
for (const [label, s] of [['bare openai loop', bare], ['claw -p', claw]]) {
  row(label, keys.map((key, index) => ms(s[key], digits[index])));
}
row('claw / bare', keys.map((key) => times(ratio(key))));
for (const [index, name] of compareNames.entries()) {
  const other = summary[name];
  console.log(`${name}: ${compareMains[index]}`);
  row(name, keys.map((key, column) => ms(other[key], digits[column])));
  row(`${name} / bare`, keys.map((key) => times(other[key] / bare[key])));
  row(`${name} / claw`, keys.map((key) => times(other[key] / claw[key])));
}
const range = ([low, high]) => `${ms(low, 1)} … ${ms(high, 1)}`;
console.log(
  `\nstart → first request, range over the runs: bare ${range(bare.firstRequestRange)}, ` +
  `claw ${range(claw.firstRequestRange)}`,
);

// Run by run: the contenders of one run went back to back, so the ratio of their per-turn
// medians in that run compares them on the same machine. Its spread over the runs says how much
// the machine moved; for a before/after, how often the other build was slower says whether a
// difference is more than that.
const perRunRatios = (name, base) =>
  tasks[name].map(
    (result, index) => median(result.turnTimes) / median(tasks[base][index].turnTimes),
  );
console.log('\nper-turn median, run by run (the contenders of a run ran back to back):');
console.log(`claw / bare: ${ratioSpread(perRunRatios('claw', 'bare'))}`);
for (const name of compareNames) {
  const ratios = perRunRatios(name, 'claw');
  const slower = ratios.filter((value) => value > 1).length;
  console.log(
    `${name} / claw: ${ratioSpread(ratios)}; ${name} slower in ${slower} of ${ratios.length} runs`,
  );
}

const startupMedian = Object.fromEntries(
  Object.entries(startup).map(([name, walls]) => [name, median(walls)]),
);
console.log(`\nstart-up: wall time from spawn to exit, median of ${startupRuns} interleaved runs`);
for (const [name, wall] of Object.entries(startupMedian)) {
  const extra = name === 'node' ? '' : `  (node + ${ms(wall - startupMedian.node, 1)})`;
  console.log(`${(name === 'node' ? 'node -e 0' : name).padEnd(20)}${ms(wall, 1).padStart(12)}${extra}`);
}

const verdict = (met) => (met ? 'met' : 'NOT MET');
console.log('\ntargets:');
for (const [label, key, target] of [
  ['PERF-1 per-turn median', 'turnMedian', targets.turn],
  ['PERF-1 per-turn p95', 'turnP95', targets.turn],
  ['PERF-2 start → 1st req', 'firstRequest', targets.firstRequest],
]) {
  console.log(`${label.padEnd(24)}${times(ratio(key))} ≤ ${target}x: ${verdict(ratio(key) <= target)}`);
}
for (const name of ['claw --version', 'claw --help']) {
  const over = startupMedian[name] - startupMedian.node;
  console.log(
    `PERF-2 ${name.padEnd(16)} node + ${ms(over, 1)} ≤ node + ${targets.startupMs} ms: ` +
    `${verdict(over <= targets.startupMs)}`,
  );
}
