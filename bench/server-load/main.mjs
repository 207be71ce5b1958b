// Server load benchmark (PERF-4): the built claw-server, driven by real `ws` WebSocket clients on
// loopback, against the fake model (its own process, model.mjs). Three phases (the first and the
// third in two parts); `--help` says what they measure, the settings and how long it takes:
//
// 1. Throughput and memory. 50 concurrent sessions × 10 turns × 4 parallel read_file (then a
//    short answer: 11 model requests a session), zero model latency (BENCH_MODEL_LATENCY_MS sets
//    one, for information), every session durable (the default file store) and traced, in one
//    server process; against the same 50 sessions in one process each written on the AI SDK
//    (peer-ai.mjs) and on the OpenAI Agents SDK (peer-agents.mjs), with their default in-memory
//    state: claw-server ≥ 1.0× the faster peer's throughput, peak RSS ≤ 1.3× that peer's. And
//    against the floor: the same sessions as bare loops on the openai package (bare.mjs), plain
//    and durable (a session file each, one fsync a turn); no target, the distance is printed.
//    Throughput is model requests per second from the prompts to the last answer; peak RSS is
//    each process's VmHWM. Fresh processes each run; runs of the contenders alternate, which one
//    goes first too.
// 1b. A model with latency: each answer's first token 100 ms after the request, then 20 text
//    chunks (the tool calls after them): claw-server ≥ 0.95× the bare loops' throughput.
// 2. Idle connections. 1,000 WebSocket clients that said hello (welcome received) and then
//    nothing: the server's RSS after minus before, per connection, each read after a full GC
//    (asked through the inspector the server runs with in this phase).
// 3. A slow reader. 49 sessions stream their turns (text chunks stamped with the time the model
//    sent them, then the read_file calls) while a 50th client (its own process, slow-client.mjs)
//    has its session stream a long answer. At the answer's first chunk it stops reading (`stop`),
//    or disconnects so that the answer streams on with nobody watching (`leave`: the run without
//    it), or goes on reading everything (`read`: a client that keeps up). The p99 latency of the
//    49's text events (client receipt − model send) with `stop` is compared with `leave` and with
//    `read`, and the server's peak RSS with `leave`; whether and when the server let the stopped
//    client go is read from the kernel (the server's end of the socket). Then (3b) the 50th
//    client alone, stopped or gone, on a server with its inspector: the memory the server holds
//    for the stopped client, twice.
//
// Everything is on 127.0.0.1 with ports the OS picks; every process started here is stopped by
// its pid, every temporary folder removed; a guard ends the whole benchmark if it overruns.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readFileSync } from 'node:fs';
import { comparedBuilds, median, percentile, ratioSpread } from '../bare-loop.mjs';
import { clockTicks } from '../proc-stat.mjs';
import {
  Client,
  cleanUp,
  cpuMsOf,
  forkScript,
  inBatches,
  inspector,
  memoryOf,
  message,
  openFileLimit,
  serverSocket,
  startModel,
  serverMain,
  startServer,
  stopChild,
  tempFolder,
  workspaceIn,
} from './harness.mjs';
import { answerOf, prompts } from './scenario.mjs';

const help = `node bench/server-load/main.mjs: claw-server under load (SPEC PERF-4), measured against
contenders run in the same benchmark run. Linux only (it reads /proc); build first
(pnpm bench:server does). Everything listens on 127.0.0.1, ports chosen by the OS.

Phases (BENCH_PHASES, a comma-separated subset of throughput,latency,idle,slow; default all):
  throughput  50 sessions x 10 turns x 4 parallel read_file, zero model latency, in fresh
              processes, interleaved: claw-server (durable, traced, real WebSocket clients), the
              AI SDK and the OpenAI Agents SDK (each in one process, in-memory state), and the
              bare openai loops (plain and durable). Targets: claw-server >= 1.0x the faster
              peer's turns/s, peak RSS <= 1.3x that peer's. claw vs the bare loops is printed as
              the distance to the floor (no target).
  latency     the same sessions with a model that answers after 100 ms, then 20 text chunks:
              claw-server >= 0.95x the bare loops' turns/s.
  idle        1,000 idle authenticated WebSocket connections: <= 50 KB each.
  slow        one client that stops reading: the other 49 sessions' p99 event latency <= 1.1x.

Settings (environment):
  BENCH_PHASES            phases to run (e.g. throughput for a quick run of phase 1 only)
  BENCH_RUNS              runs of each contender in the throughput phase (default 5)
  BENCH_MODEL_LATENCY_RUNS  runs of each in the latency phase (default 5)
  BENCH_MODEL_LATENCY_MS  a model latency for the throughput phase (default 0; then its rows are
                          for information, no verdict)
  BENCH_LATENCY_RUNS      slow-reader runs of each mode (default 3)
  BENCH_IDLE_CONNECTIONS  idle connections (default 1000; needs ulimit -n of that + 200)
  BENCH_TIMEOUT_MS        stop everything and exit 1 after this long (default 900000)
  BENCH_COMPARE           main.js paths of other claw-server builds, as more contenders
  BENCH_SERVER_MAIN       another claw-server build in the built one's place
  BENCH_SERVER_NODE_ARGS  node options for each claw-server (e.g. --cpu-prof --cpu-prof-dir=DIR)

How long: six to eight minutes on two cores with the defaults (throughput 3-4, latency 1, slow
reader 2-3); BENCH_PHASES=throughput BENCH_RUNS=2 about a minute and a half.`;
if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(help);
  process.exit(0);
}

const sessions = 50;
const turns = 10;
const callsPerTurn = 4;
const runs = Number(process.env.BENCH_RUNS ?? 5);
const modelLatencyRuns = Number(process.env.BENCH_MODEL_LATENCY_RUNS ?? 5);
const latencyRuns = Number(process.env.BENCH_LATENCY_RUNS ?? 3);
const idleCount = Number(process.env.BENCH_IDLE_CONNECTIONS ?? 1000);
const guardMs = Number(process.env.BENCH_TIMEOUT_MS ?? 15 * 60_000);
// Which phases run (default all four): a comma-separated subset of throughput, latency, idle,
// slow.
const phases = new Set((process.env.BENCH_PHASES ?? 'throughput,latency,idle,slow').split(','));
// peers, peersRss: claw-server against the faster peer (phase 1); latency: against the bare loops
// with a model of 100 ms (phase 1b).
const targets = { peers: 1.0, peersRss: 1.3, latency: 0.95, connectionKb: 50, p99: 1.1 };
// The model of phase 1b: each answer's first token 100 ms after the request, then 20 text chunks
// (one write each, 1 ms apart: the least a timer waits), then the tool calls.
const slowModel = { latencyMs: 100, latencyChunks: 20, latencyChunkDelayMs: 1 };
// BENCH_MODEL_LATENCY_MS: the fake model waits this long before each answer of the throughput
// phase (default 0). Its targets are for zero latency; with a latency the throughput and RSS rows
// are for information only (no verdict).
const modelLatencyMs = Number(process.env.BENCH_MODEL_LATENCY_MS ?? 0);
if (!Number.isFinite(modelLatencyMs) || modelLatencyMs < 0) {
  console.error(
    'server-load: BENCH_MODEL_LATENCY_MS must be a number of milliseconds, 0 or more; got ' +
    `${JSON.stringify(process.env.BENCH_MODEL_LATENCY_MS)}`,
  );
  process.exit(2);
}
// BENCH_COMPARE: more builds of claw-server (main.js paths, comma-separated) in the throughput
// phase, as contenders "claw B", "claw C", … interleaved with the others: a before/after in one
// run, where the machine's drift between runs cannot pass for an effect.
const compared = comparedBuilds();
const compareMains = compared.map((build) => build.main);
const compareNames = compared.map((build) => build.name);
const mainOf = (name) => (name === 'claw' ? serverMain : compareMains[compareNames.indexOf(name)]);
// The 50th client in phase 3: stops reading, is gone (the run without it), keeps reading.
const modes = ['stop', 'leave', 'read'];
// The phase-3 model: the 49 sessions' turns stream 20 chunks 50 ms apart (about 1.3 s a turn,
// 15 s a task). The 50th session's long answer streams a chunk a millisecond: 6,000 of 2 KiB
// (12 MB in about 7 s; within 5 s more than the kernel's socket buffers, some 4 MB on loopback,
// and the server's outbound queue, 4 MiB, hold for a client that stops reading), then 10,000 of
// 64 characters. In phase 3b it is 10,000 chunks of 4 KiB (40 MB), so that much more streams on
// while the server holds what it holds for the stopped client.
const modelConfig = {
  turns,
  callsPerTurn,
  loadLatencyMs: modelLatencyMs,
  ...slowModel,
  streamChunks: 20,
  streamChunkDelayMs: 50,
  longChunks: 6000,
  longChunkChars: 2048,
  trickleChunks: 10_000,
  trickleChunkChars: 64,
  floodChunks: 10_000,
  floodChunkChars: 4096,
};
// The server's own bounds that phase 3 runs into (CH-5; apps/server and @claw/channel defaults):
// a client whose queue stayed full this long is closed (4008), its socket cut this much later.
const stallMs = 10_000;
const closeGraceMs = 2000;
// When phase 3b looks at what the server holds, after the client stopped reading.
const heldProbesMs = [5000, 10_000];
// Bounded: what it holds grows by less than this between the probes (the answer streams on).
const heldSlackMb = 4;

const guard = setTimeout(() => {
  console.error(`\nserver-load: not done after ${guardMs} ms (BENCH_TIMEOUT_MS); stopping everything`);
  void cleanUp().finally(() => process.exit(1));
}, guardMs);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => void cleanUp().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143)));
}

const progress = (text) => process.stderr.write(text);

// ---- phase 1 -----------------------------------------------------------------------------------

/** A session's prompt and the answer it must end with, by task (`load` or `latency`). */
const taskOf = (task) => ({
  prompt: prompts[task],
  answer: answerOf(prompts[task], slowModel.latencyChunks),
});

/** One run of claw-server (`main`: its build) on a task (phase 1: `load`; 1b: `latency`). */
async function clawThroughput(model, main, task = 'load') {
  const { prompt, answer } = taskOf(task);
  const server = await startServer({ baseURL: model.baseURL, files: callsPerTurn, main });
  try {
    const clients = await inBatches(sessions, sessions, async () => {
      const client = await Client.connect(server.http);
      await client.hello(server.token);
      await client.open();
      return client;
    });
    await model.count();
    const cpuBefore = cpuMsOf(server.pid);
    const mainCpuBefore = cpuMsOf(server.pid, server.pid);
    const modelCpuBefore = cpuMsOf(model.pid);
    const clientsCpuBefore = process.cpuUsage();
    const startedAt = performance.now();
    const answers = await Promise.all(
      clients.map((client) => {
        const done = client.next('task_completed', 120_000);
        client.send({ type: 'prompt', content: prompt });
        return done;
      }),
    );
    const wallMs = performance.now() - startedAt;
    const cpuMs = cpuMsOf(server.pid) - cpuBefore;
    const mainCpuMs = cpuMsOf(server.pid, server.pid) - mainCpuBefore;
    const modelCpuMs = cpuMsOf(model.pid) - modelCpuBefore;
    const clientsCpu = process.cpuUsage(clientsCpuBefore);
    const clientsCpuMs = (clientsCpu.user + clientsCpu.system) / 1000;
    const { hwmKb } = memoryOf(server.pid);
    const requests = await model.count();
    const wrong = answers.find((event) => event.content !== answer);
    if (wrong !== undefined) throw new Error(`a session answered ${JSON.stringify(wrong)}`);
    for (const client of clients) client.terminate();
    return { requests, wallMs, cpuMs, mainCpuMs, modelCpuMs, clientsCpuMs, peakRssKb: hwmKb };
  } catch (error) {
    error.message += `\nclaw-server output:\n${server.output().slice(-3000)}`;
    throw error;
  } finally {
    await server.stop();
  }
}

/** The version of a package as installed for the benchmark (bench/package.json pins it). */
const peerVersion = (name) =>
  JSON.parse(
    readFileSync(path.join(import.meta.dirname, '..', 'node_modules', name, 'package.json'), 'utf8'),
  ).version;
/** A peer: its script, its name and the version of its package as installed (pinned). */
function peerContender(script, short, pkg) {
  const version = `${pkg} ${peerVersion(pkg)}`;
  return { script, short, version, label: `${short} (${version})` };
}
/**
 * The contenders that run all the sessions in one process of their own (in-process.mjs): the bare
 * loops, plain and durable (given a folder for their session files), and the two peers.
 */
const inProcess = {
  bare: { script: 'bare.mjs', label: 'bare loops', short: 'bare loops' },
  durable: { script: 'bare.mjs', durable: true, label: 'durable bare', short: 'durable bare' },
  'ai-sdk': peerContender('peer-ai.mjs', 'AI SDK', 'ai'),
  agents: peerContender('peer-agents.mjs', 'Agents SDK', '@openai/agents'),
};
const peers = ['ai-sdk', 'agents'];

// The Agents SDK hands each run's abort signal to every model request of the run, and the openai
// client adds a listener to it per request: at the 11th request of a task Node warns of a possible
// leak (MaxListenersExceededWarning), once for each of the 50 sessions of every run. Harmless
// (the listeners go with the run) and the SDK's own; dropped here so that it does not bury the
// benchmark's output. Everything else a contender writes to stderr is passed on.
const abortListenersWarning =
  /MaxListenersExceededWarning: Possible EventTarget memory leak detected\. \d+ abort listeners added to \[AbortSignal\]|node --trace-warnings \.\.\./;
function passWarnings(child) {
  let pending = '';
  child.stderr.setEncoding('utf8').on('data', (text) => {
    const lines = (pending + text).split('\n');
    pending = lines.pop();
    for (const line of lines) {
      if (!abortListenersWarning.test(line)) process.stderr.write(`${line}\n`);
    }
  });
  child.stderr.on('end', () => {
    if (pending !== '' && !abortListenersWarning.test(pending)) process.stderr.write(pending);
  });
}

/** One run of an in-process contender on a task, in a fresh workspace (and session folder). */
async function inProcessThroughput(model, { script, durable = false }, task = 'load') {
  const folder = await tempFolder('claw-bench-in-process-');
  const workDir = await workspaceIn(folder, callsPerTurn);
  const sessionsDir = durable ? path.join(folder, 'sessions') : undefined;
  if (sessionsDir !== undefined) await mkdir(sessionsDir);
  await model.count();
  const modelCpuBefore = cpuMsOf(model.pid);
  const settings = {
    baseURL: model.baseURL, workDir, sessions, ...taskOf(task), ticks: clockTicks(), sessionsDir,
  };
  const child = forkScript(script, [JSON.stringify(settings)], {
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
  });
  passWarnings(child);
  try {
    const done = await message(child, 'done', 120_000);
    const { hwmKb } = memoryOf(child.pid);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.send({ type: 'exit' });
    await exited;
    const requests = await model.count();
    // The model's CPU from the process's start to its end: its start-up sends nothing.
    const modelCpuMs = cpuMsOf(model.pid) - modelCpuBefore;
    const { wallMs, cpuMs, mainCpuMs } = done;
    return { requests, wallMs, cpuMs, mainCpuMs, modelCpuMs, peakRssKb: hwmKb };
  } finally {
    await stopChild(child);
  }
}

/** One run of contender `name` (claw-server, a compared build or an in-process one). */
const runOf = (model, name, task) =>
  inProcess[name] === undefined
    ? clawThroughput(model, mainOf(name), task)
    : inProcessThroughput(model, inProcess[name], task);

// ---- phase 2 -----------------------------------------------------------------------------------

async function idleConnections(model) {
  const server = await startServer({
    baseURL: model.baseURL,
    files: 0,
    nodeArgs: ['--inspect=127.0.0.1:0'],
  });
  const clients = [];
  try {
    const debug = await inspector(server);
    // Warm-up: the code paths of a connection, compiled and run before the baseline is read.
    const warm = await inBatches(20, 20, async () => {
      const client = await Client.connect(server.http);
      await client.hello(server.token);
      return client;
    });
    for (const client of warm) client.terminate();
    await sleep(500);
    await debug.gc();
    await debug.gc();
    const before = memoryOf(server.pid).rssKb;
    await inBatches(idleCount, 50, async () => {
      const client = await Client.connect(server.http);
      clients.push(client);
      await client.hello(server.token);
    });
    await sleep(1000);
    const withGarbage = memoryOf(server.pid).rssKb;
    await debug.gc();
    await debug.gc();
    const after = memoryOf(server.pid).rssKb;
    debug.close();
    return { before, after, withGarbage, count: clients.length };
  } catch (error) {
    error.message += `\nclaw-server output:\n${server.output().slice(-3000)}`;
    throw error;
  } finally {
    for (const client of clients) client.terminate();
    await server.stop();
  }
}

// ---- phase 3 -----------------------------------------------------------------------------------

async function slowReaderRun(model, mode) {
  const server = await startServer({ baseURL: model.baseURL, files: callsPerTurn });
  let slow;
  let sampler;
  try {
    slow = forkScript('slow-client.mjs', [String(server.http), server.token, mode]);
    const { localPort } = await message(slow, 'ready');
    const slowClosed = message(slow, 'closed', 10 * 60_000);
    slowClosed.catch(() => undefined);
    const latencies = [];
    const atLatencies = [];
    const clients = await inBatches(sessions - 1, sessions - 1, async () => {
      const client = await Client.connect(server.http, (text, type, receivedAt) => {
        const at = /"at":"([^"]+)"/.exec(text)?.[1];
        if (at !== undefined) atLatencies.push(receivedAt - Date.parse(at));
        if (type !== 'text_delta') return;
        for (const stamp of JSON.parse(text).content.matchAll(/@(\d+\.\d+);/g)) {
          latencies.push(receivedAt - Number(stamp[1]));
        }
      });
      await client.hello(server.token);
      await client.open();
      return client;
    });
    // Sampled every 50 ms: the server's RSS, and (stopped client) the server's end of its socket.
    // The server closes a client whose queue stayed full for `stallMs` (4008) and cuts the socket
    // `closeGraceMs` later, as the close frame cannot get through to a client that reads nothing.
    let peakRssKb = 0;
    let socketSeen = false;
    let cutAt;
    sampler = setInterval(() => {
      peakRssKb = Math.max(peakRssKb, memoryOf(server.pid).rssKb);
      if (mode !== 'stop' || cutAt !== undefined) return;
      if (serverSocket(server.http, localPort)?.state === 'ESTABLISHED') socketSeen = true;
      else if (socketSeen) cutAt = performance.now();
    }, 50);
    const streaming = message(slow, 'streaming');
    slow.send({ type: 'go', answer: 'long' });
    await streaming;
    const pausedAt = performance.now();
    await Promise.all(
      clients.map((client) => {
        const done = client.next('task_completed', 120_000);
        client.send({ type: 'prompt', content: 'stream: read the four files, ten times' });
        return done;
      }),
    );
    const windowMs = performance.now() - pausedAt;
    let closed;
    if (mode === 'stop') {
      const deadline = pausedAt + stallMs + closeGraceMs + 20_000;
      while (cutAt === undefined && performance.now() < deadline) await sleep(50);
      // Reading again, the client gets what the kernel still holds, then the connection's end.
      slow.send({ type: 'resume' });
      closed = await Promise.race([slowClosed, sleep(10_000).then(() => undefined)]);
    }
    const cutAfterMs = cutAt === undefined ? undefined : cutAt - pausedAt;
    clearInterval(sampler);
    const { hwmKb } = memoryOf(server.pid);
    for (const client of clients) client.terminate();
    const peak = Math.max(peakRssKb, hwmKb);
    return { latencies, atLatencies, peakRssKb: peak, windowMs, cutAfterMs, closed, socketSeen };
  } catch (error) {
    error.message += `\nclaw-server output:\n${server.output().slice(-3000)}`;
    throw error;
  } finally {
    clearInterval(sampler);
    if (slow !== undefined) {
      if (slow.connected) slow.send({ type: 'exit' });
      await stopChild(slow, 'SIGTERM', 5000);
    }
    await server.stop();
  }
}

/**
 * What the server holds because a client stopped reading, and whether it grows: the 50th client
 * alone, stopped (`stop`) or gone (`leave`), on a server with its inspector; 5 s and 10 s after
 * the client stopped (its queue is full by then, the 4008 comes later), a full GC, then the
 * memory the server's JavaScript holds. Held = stop − leave at each time; meanwhile the answer
 * streamed on (some 18 MB between the two), which a server that kept what it cannot send would
 * hold too.
 */
async function heldRun(model, mode) {
  const server = await startServer({
    baseURL: model.baseURL,
    files: callsPerTurn,
    nodeArgs: ['--inspect=127.0.0.1:0'],
  });
  let slow;
  try {
    const debug = await inspector(server);
    slow = forkScript('slow-client.mjs', [String(server.http), server.token, mode]);
    await message(slow, 'ready');
    const streaming = message(slow, 'streaming');
    slow.send({ type: 'go', answer: 'flood' });
    await streaming;
    const pausedAt = performance.now();
    const held = [];
    for (const at of heldProbesMs) {
      await sleep(pausedAt + at - performance.now());
      await debug.gc();
      held.push(await debug.heldKb());
    }
    debug.close();
    return held;
  } catch (error) {
    error.message += `\nclaw-server output:\n${server.output().slice(-3000)}`;
    throw error;
  } finally {
    if (slow !== undefined) {
      if (slow.connected) slow.send({ type: 'exit' });
      await stopChild(slow, 'SIGTERM', 5000);
    }
    await server.stop();
  }
}

// ---- the run -----------------------------------------------------------------------------------

const throughput = {
  claw: [],
  ...Object.fromEntries(Object.keys(inProcess).map((name) => [name, []])),
  ...Object.fromEntries(compareNames.map((name) => [name, []])),
};
// Phase 1b: claw-server and the bare loops on the model with latency.
const withLatency = { claw: [], bare: [] };
const slowReader = Object.fromEntries(modes.map((mode) => [mode, []]));
const heldBy = {};
let idle;
const fdLimit = openFileLimit();
// Each idle connection is one descriptor in this process and one in the server.
const fdsNeeded = idleCount + 200;
const model = await startModel(modelConfig);
try {
  // Warm-up (not measured): the fake model's code paths, the files in the page cache.
  if (phases.has('throughput') || phases.has('latency')) await runOf(model, 'bare', 'load');
  progress(`throughput ${phases.has('throughput') ? '' : 'skipped'}`);
  for (let run = 0; run < (phases.has('throughput') ? runs : 0); run += 1) {
    // Each run starts with another contender, and every other run goes the other way round.
    const names = Object.keys(throughput);
    const rotated = names.map((_, index) => names[(index + run) % names.length]);
    for (const name of run % 2 === 0 ? rotated : rotated.reverse()) {
      throughput[name].push(await runOf(model, name, 'load'));
      progress('.');
    }
  }
  progress(` model latency ${phases.has('latency') ? '' : 'skipped'}`);
  for (let run = 0; run < (phases.has('latency') ? modelLatencyRuns : 0); run += 1) {
    for (const name of run % 2 === 0 ? ['claw', 'bare'] : ['bare', 'claw']) {
      withLatency[name].push(await runOf(model, name, 'latency'));
      progress('.');
    }
  }
  progress(' idle connections ');
  if (!phases.has('idle')) {
    progress('skipped');
  } else if (fdLimit >= fdsNeeded) {
    idle = await idleConnections(model);
    progress('.');
  } else {
    progress('skipped');
  }
  progress(' slow reader ');
  for (let run = 0; run < (phases.has('slow') ? latencyRuns : 0); run += 1) {
    const order = modes.map((_, index) => modes[(index + run) % modes.length]);
    for (const mode of order) {
      slowReader[mode].push(await slowReaderRun(model, mode));
      progress('.');
    }
  }
  if (phases.has('slow')) {
    for (const mode of ['stop', 'leave']) {
      heldBy[mode] = await heldRun(model, mode);
      progress('.');
    }
  }
  progress('\n');
} finally {
  clearTimeout(guard);
  await model.stop();
  await cleanUp();
}

// ---- the report --------------------------------------------------------------------------------

const expectedRequests = sessions * (turns + 1);
for (const [phase, byName] of [['throughput', throughput], ['latency', withLatency]]) {
  for (const [name, results] of Object.entries(byName)) {
    for (const result of results) {
      if (result.requests !== expectedRequests) {
        throw new Error(
          `a ${name} run (${phase}) made ${result.requests} model requests, not ${expectedRequests}`,
        );
      }
    }
  }
}
const perSecond = (result) => result.requests / (result.wallMs / 1000);
const summarize = (results) => ({
  turnsPerSecond: median(results.map(perSecond)),
  range: [Math.min(...results.map(perSecond)), Math.max(...results.map(perSecond))],
  peakRssMb: median(results.map((result) => result.peakRssKb / 1024)),
  cpuPerTurnMs: median(results.map((result) => result.cpuMs / result.requests)),
  mainCpuPerTurnMs: median(results.map((result) => result.mainCpuMs / result.requests)),
  mainBusy: median(results.map((result) => result.mainCpuMs / result.wallMs)),
  modelCpuPerTurnMs: median(results.map((result) => result.modelCpuMs / result.requests)),
  clientsCpuPerTurnMs: median(results.map((result) => result.clientsCpuMs / result.requests)),
  wallMs: median(results.map((result) => result.wallMs)),
});
const latencyOf = (results) => {
  const all = results.flatMap((result) => result.latencies);
  const at = results.flatMap((result) => result.atLatencies);
  return {
    p50: percentile(all, 50),
    p99: percentile(all, 99),
    runP99: results.map((result) => percentile(result.latencies, 99)),
    max: Math.max(...all),
    samples: all.length,
    atP50: percentile(at, 50),
    atP99: percentile(at, 99),
    peakRssMb: median(results.map((result) => result.peakRssKb / 1024)),
    windowMs: median(results.map((result) => result.windowMs)),
  };
};

const fixed = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const verdict = (met) => (met ? 'met' : 'NOT MET');
const widths = [48, 12, 12, 9, 10, 9];
const line = (cells) =>
  console.log(cells.map((cell, index) => (index === 0 ? cell.padEnd(widths[0]) : cell.padStart(widths[index]))).join(''));
const notRun = (label, target) => line([label, 'not run', '—', '—', target, 'NOT RUN']);

console.log(
  'server-load: the built claw-server (file sessions, traces, real ws clients) against the AI SDK, ' +
  'the OpenAI Agents SDK and bare openai loops, each in one process; fake model in its own ' +
  'process, all on 127.0.0.1',
);
console.log(
  `${sessions} sessions × ${turns} turns × ${callsPerTurn} parallel read_file, ` +
  `${modelLatencyMs === 0 ? 'zero model latency' : `model latency ${modelLatencyMs} ms an answer`}: ` +
  `${runs} runs each, interleaved, after one warm-up; with a ${slowModel.latencyMs} ms model ` +
  `(then ${slowModel.latencyChunks} chunks): ${modelLatencyRuns} runs each; slow reader: ` +
  `${latencyRuns} runs each (${modes.join(' / ')}), interleaved\n`,
);
// The throughput phase's targets are for zero model latency; with one, its rows give no verdict.
const loadVerdict = (met) => (modelLatencyMs === 0 ? verdict(met) : 'info');
line(['measure', 'claw-server', 'baseline', 'ratio', 'target', 'verdict']);
const ran = throughput.claw.length > 0;
const summaries = Object.fromEntries(
  Object.entries(throughput)
    .filter(([, results]) => results.length > 0)
    .map(([name, results]) => [name, summarize(results)]),
);
const { claw, bare, durable } = summaries;
// The faster peer: the higher median throughput.
const fasterPeer = ran
  ? peers.reduce((best, name) =>
      (summaries[name].turnsPerSecond > summaries[best].turnsPerSecond ? name : best))
  : undefined;
const peer = fasterPeer === undefined
  ? undefined
  : { ...summaries[fasterPeer], short: inProcess[fasterPeer].short };
const peerLabel = fasterPeer === undefined
  ? ''
  : `${inProcess[fasterPeer].short}: ${inProcess[fasterPeer].version}`;
const peerRatio = ran ? claw.turnsPerSecond / peer.turnsPerSecond : Number.NaN;
const peerRssRatio = ran ? claw.peakRssMb / peer.peakRssMb : Number.NaN;
const latencyRan = withLatency.claw.length > 0;
const latencyClaw = latencyRan ? summarize(withLatency.claw) : undefined;
const latencyBare = latencyRan ? summarize(withLatency.bare) : undefined;
const latencyRatio = latencyRan
  ? latencyClaw.turnsPerSecond / latencyBare.turnsPerSecond
  : Number.NaN;
if (ran) {
  line([
    `throughput vs faster peer (${peer.short}), turns/s`, fixed(claw.turnsPerSecond, 1),
    fixed(peer.turnsPerSecond, 1), `${fixed(peerRatio, 3)}x`, `≥ ${targets.peers.toFixed(1)}x`,
    loadVerdict(peerRatio >= targets.peers),
  ]);
  line([
    'peak RSS vs that peer', `${fixed(claw.peakRssMb, 1)} MB`, `${fixed(peer.peakRssMb, 1)} MB`,
    `${fixed(peerRssRatio, 3)}x`, `≤ ${targets.peersRss}x`,
    loadVerdict(peerRssRatio <= targets.peersRss),
  ]);
  for (const name of peers.filter((other) => other !== fasterPeer)) {
    const other = summaries[name];
    line([
      `  vs the other peer (${inProcess[name].short})`, fixed(claw.turnsPerSecond, 1),
      fixed(other.turnsPerSecond, 1), `${fixed(claw.turnsPerSecond / other.turnsPerSecond, 3)}x`,
      '—', 'info',
    ]);
  }
} else {
  notRun('throughput vs faster peer, turns/s', `≥ ${targets.peers.toFixed(1)}x`);
  notRun('peak RSS vs that peer', `≤ ${targets.peersRss}x`);
}
if (latencyRan) {
  line([
    `${slowModel.latencyMs} ms model: throughput vs bare loops`,
    fixed(latencyClaw.turnsPerSecond, 1), fixed(latencyBare.turnsPerSecond, 1),
    `${fixed(latencyRatio, 3)}x`, `≥ ${targets.latency}x`, verdict(latencyRatio >= targets.latency),
  ]);
} else {
  notRun(`${slowModel.latencyMs} ms model: throughput vs bare loops`, `≥ ${targets.latency}x`);
}
if (ran) {
  // The zero-latency ratio to the bare loops is no target any more: how far claw is from the floor.
  line([
    'distance to the floor: vs bare loops', fixed(claw.turnsPerSecond, 1),
    fixed(bare.turnsPerSecond, 1), `${fixed(claw.turnsPerSecond / bare.turnsPerSecond, 3)}x`, '—',
    'info',
  ]);
  line([
    '  vs durable bare loops (one fsync a turn)', fixed(claw.turnsPerSecond, 1),
    fixed(durable.turnsPerSecond, 1), `${fixed(claw.turnsPerSecond / durable.turnsPerSecond, 3)}x`,
    '—', 'info',
  ]);
  line([
    '  peak RSS vs bare loops', `${fixed(claw.peakRssMb, 1)} MB`, `${fixed(bare.peakRssMb, 1)} MB`,
    `${fixed(claw.peakRssMb / bare.peakRssMb, 3)}x`, '—', 'info',
  ]);
}
const idleLabel = `memory per idle connection (${idle?.count ?? idleCount})`;
if (idle === undefined) {
  notRun(idleLabel, `≤ ${targets.connectionKb} KB`);
} else {
  const perConnectionKb = (idle.after - idle.before) / idle.count;
  line([
    idleLabel, `${fixed(perConnectionKb, 1)} KB`, '—', '—', `≤ ${targets.connectionKb} KB`,
    verdict(perConnectionKb <= targets.connectionKb),
  ]);
}
const slowRan = slowReader.stop.length > 0;
const slow = slowRan
  ? Object.fromEntries(modes.map((mode) => [mode, latencyOf(slowReader[mode])]))
  : undefined;
// What the server would hold for the stopped client if it kept everything it could not send.
const answerMb = (chunks, chars) => (chunks * chars) / 1024 / 1024;
const longMb =
  answerMb(modelConfig.longChunks, modelConfig.longChunkChars) +
  answerMb(modelConfig.trickleChunks, modelConfig.trickleChunkChars);
const floodMb = answerMb(modelConfig.floodChunks, modelConfig.floodChunkChars);
const letGo = slowReader.stop.filter((result) => result.cutAfterMs !== undefined);
if (slowRan) {
  const { stop, leave, read } = slow;
  for (const [label, base] of [['without it', leave], ['one that reads', read]]) {
    const ratio = stop.p99 / base.p99;
    line([
      `p99 latency of the other 49, vs ${label}`, `${fixed(stop.p99, 2)} ms`, `${fixed(base.p99, 2)} ms`,
      `${fixed(ratio, 3)}x`, `≤ ${targets.p99}x`, verdict(ratio <= targets.p99),
    ]);
  }
  line([
    '  by `at`, every event, vs without it', `${fixed(stop.atP99, 1)} ms`,
    `${fixed(leave.atP99, 1)} ms`, `${fixed(stop.atP99 / leave.atP99, 3)}x`, '—', 'info',
  ]);
  line([
    'server peak RSS, stopped reader', `${fixed(stop.peakRssMb, 1)} MB`,
    `${fixed(leave.peakRssMb, 1)} MB`, `${fixed(stop.peakRssMb / leave.peakRssMb, 3)}x`, '—', 'info',
  ]);
  const held = heldProbesMs.map((_, index) => (heldBy.stop[index] - heldBy.leave[index]) / 1024);
  const growth = held.at(-1) - held[0];
  line([
    `held for it, at ${heldProbesMs.map((ms) => ms / 1000).join(' s, ')} s`,
    held.map((mb) => `${fixed(mb, 1)}`).join(', ') + ' MB', '—', `${growth >= 0 ? '+' : ''}${fixed(growth, 1)} MB`,
    `< +${heldSlackMb} MB`, verdict(growth < heldSlackMb),
  ]);
  line([
    'stopped reader let go (4008, then cut)', `${letGo.length}/${slowReader.stop.length} runs`, '—', '—',
    'every run', verdict(letGo.length === slowReader.stop.length),
  ]);
} else {
  notRun('p99 latency of the other 49', `≤ ${targets.p99}x`);
}

const labelOf = (name) => (inProcess[name]?.label ?? (name === 'claw' ? 'claw-server' : name));
/** A contender's figures on one line (`clients`: it has the benchmark's WebSocket clients). */
const figures = (label, s, clients) =>
  `  ${label.padEnd(36)} ${fixed(s.turnsPerSecond, 1)} turns/s (runs ${fixed(s.range[0], 1)} … ` +
  `${fixed(s.range[1], 1)}), ${fixed(s.wallMs / 1000, 2)} s a run, peak RSS ` +
  `${fixed(s.peakRssMb, 1)} MB; CPU a turn: ${fixed(s.cpuPerTurnMs, 2)} ms its process ` +
  `(${fixed(s.mainCpuPerTurnMs, 2)} ms its main thread, busy ${fixed(s.mainBusy * 100, 0)}% ` +
  `of the run), ${fixed(s.modelCpuPerTurnMs, 2)} ms the model` +
  (clients ? `, ${fixed(s.clientsCpuPerTurnMs, 2)} ms its 50 clients (this process)` : '');
// Run by run: the contenders of one run went back to back, on the same machine.
const perRun = (byName, name, base, measure) =>
  byName[name].map((result, index) => measure(result) / measure(byName[base][index]));
const cpuPerTurn = (result) => result.cpuMs / result.requests;
if (ran) {
  console.log('\nthroughput and memory (zero model latency; each contender in one process):');
  for (const [name, s] of Object.entries(summaries)) {
    console.log(figures(labelOf(name), s, inProcess[name] === undefined));
  }
  console.log('  run by run (the contenders of a run went back to back), claw-server / …:');
  for (const name of [...peers, 'bare', 'durable']) {
    console.log(
      `    ${labelOf(name)}: throughput ${ratioSpread(perRun(throughput, 'claw', name, perSecond))}, ` +
      `CPU a turn ${ratioSpread(perRun(throughput, 'claw', name, cpuPerTurn))}`,
    );
  }
  for (const name of compareNames) {
    const s = summaries[name];
    const slower = perRun(throughput, name, 'claw', perSecond).filter((ratio) => ratio < 1).length;
    console.log(
      `    ${name}: ${compareMains[compareNames.indexOf(name)]}; against claw-server: throughput ` +
      `${fixed(s.turnsPerSecond / claw.turnsPerSecond, 3)}x, peak RSS ` +
      `${fixed(s.peakRssMb / claw.peakRssMb, 3)}x; run by run: throughput ` +
      `${ratioSpread(perRun(throughput, name, 'claw', perSecond))}, CPU a turn ` +
      `${ratioSpread(perRun(throughput, name, 'claw', cpuPerTurn))}; ${name} slower in ${slower} of ` +
      `${throughput[name].length} runs`,
    );
  }
}
if (latencyRan) {
  console.log(
    `\nwith a ${slowModel.latencyMs} ms model (first token ${slowModel.latencyMs} ms after the ` +
    `request, then ${slowModel.latencyChunks} text chunks ${slowModel.latencyChunkDelayMs} ms ` +
    'apart, then the tool calls):',
  );
  console.log(figures('claw-server', latencyClaw, true));
  console.log(figures('bare loops', latencyBare, false));
  console.log(
    '  run by run, claw-server / bare loops: throughput ' +
    `${ratioSpread(perRun(withLatency, 'claw', 'bare', perSecond))}`,
  );
}
if (idle === undefined && phases.has('idle')) {
  console.log(
    `\nidle connections: NOT RUN: the open-file limit is ${fdLimit}, ${fdsNeeded} are needed ` +
    `(one descriptor a connection here and one in the server). Raise it (ulimit -n ${fdsNeeded * 2}) ` +
    'or lower BENCH_IDLE_CONNECTIONS.',
  );
} else if (idle !== undefined) {
  const withGarbageKb = (idle.withGarbage - idle.before) / idle.count;
  console.log(
    `\nidle connections: server RSS ${fixed(idle.before / 1024, 1)} MB before, ` +
    `${fixed(idle.after / 1024, 1)} MB with ${idle.count} authenticated connections (both after ` +
    `a full GC); ${fixed(withGarbageKb, 1)} KB a connection before the GC. Server limit 1,024 ` +
    `connections; open-file limit here ${fdLimit}.`,
  );
}
if (slowRan) {
  console.log(
    '\nslow reader (baseline: without it, i.e. the 50th client gone while its answer streams on; ' +
    'latency: client receipt − model send of each text chunk; `at`: receipt − the event\'s `at`):',
  );
  for (const [label, mode] of [['stopped', 'stop'], ['without', 'leave'], ['reading', 'read']]) {
    const s = slow[mode];
    if (s === undefined) continue;
    console.log(
      `  ${label.padEnd(8)} p50 ${fixed(s.p50, 2)} ms, p99 ${fixed(s.p99, 2)} ms (runs ` +
      `${s.runP99.map((value) => fixed(value, 1)).join(', ')}), max ` +
      `${fixed(s.max, 1)} ms (${s.samples} chunks); by \`at\`: p50 ${fixed(s.atP50, 1)} ms, p99 ` +
      `${fixed(s.atP99, 1)} ms; the 49 took ${fixed(s.windowMs / 1000, 1)} s; server peak RSS ` +
      `${fixed(s.peakRssMb, 1)} MB`,
    );
  }
  console.log(
    `  the long answer: ${fixed(longMb, 1)} MB (${modelConfig.longChunks} chunks of ` +
    `${modelConfig.longChunkChars} characters, then ${modelConfig.trickleChunks} of ` +
    `${modelConfig.trickleChunkChars}); in 3b ${fixed(floodMb, 1)} MB. The server holds at most ` +
    'its outbound queue for a client (4 MiB or 1,024 events) and a session\'s event log (8 MiB)',
  );
  for (const [index, result] of slowReader.stop.entries()) {
    const cut = !result.socketSeen
      ? 'its connection could not be found in /proc/net/tcp'
      : result.cutAfterMs === undefined
        ? `NOT let go within ${fixed((stallMs + closeGraceMs + 20_000) / 1000, 0)} s`
        : `let go ${fixed(result.cutAfterMs / 1000, 1)} s after it stopped reading`;
    const seen = result.closed === undefined
      ? 'the client saw no close'
      : `reading again, it got ${result.closed.events} events, then close ${result.closed.code}` +
        `${result.closed.reason === '' ? '' : ` "${result.closed.reason}"`}`;
    console.log(`  stopped client, run ${index + 1}: ${cut}; ${seen}`);
  }
}

// The verdicts of PERF-4 (a) and (b), and the distance to the floor, one line each.
const perf4 = (met) => (modelLatencyMs === 0 ? (met ? 'MET' : 'NOT MET') : 'info (model latency)');
console.log('');
if (ran) {
  console.log(
    `PERF-4 peers: claw-server ${fixed(claw.turnsPerSecond, 1)} turns/s vs faster peer ` +
    `(${peerLabel}) ${fixed(peer.turnsPerSecond, 1)} turns/s = ${fixed(peerRatio, 3)}× ` +
    `(target ≥ ${targets.peers.toFixed(1)}×) ${perf4(peerRatio >= targets.peers)}`,
  );
  console.log(
    `PERF-4 peers, peak RSS: claw-server ${fixed(claw.peakRssMb, 1)} MB vs faster peer ` +
    `(${peerLabel}) ${fixed(peer.peakRssMb, 1)} MB = ${fixed(peerRssRatio, 3)}× ` +
    `(target ≤ ${targets.peersRss}×) ${perf4(peerRssRatio <= targets.peersRss)}`,
  );
}
if (latencyRan) {
  console.log(
    `PERF-4 ${slowModel.latencyMs} ms model: claw-server ${fixed(latencyClaw.turnsPerSecond, 1)} ` +
    `turns/s vs bare loop ${fixed(latencyBare.turnsPerSecond, 1)} turns/s = ` +
    `${fixed(latencyRatio, 3)}× (target ≥ ${targets.latency}×) ` +
    `${latencyRatio >= targets.latency ? 'MET' : 'NOT MET'}`,
  );
}
if (ran) {
  console.log(
    'distance to the floor (zero latency, not a target): claw-server ' +
    `${fixed(claw.turnsPerSecond, 1)} turns/s vs bare loop ${fixed(bare.turnsPerSecond, 1)} ` +
    `turns/s = ${fixed(claw.turnsPerSecond / bare.turnsPerSecond, 3)}×`,
  );
}
