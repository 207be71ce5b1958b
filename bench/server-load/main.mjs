// Server load benchmark (PERF-4): the built claw-server, driven by real `ws` WebSocket clients on
// loopback, against the fake model (its own process, model.mjs). Three phases (the third in two
// parts):
//
// 1. Throughput and memory. 50 concurrent sessions × 10 turns × 4 parallel read_file (then a
//    short answer: 11 model requests a session), zero model latency (BENCH_MODEL_LATENCY_MS sets
//    one, for information), every session durable (the default file store), in one server
//    process; against one process running the same 50 sessions as bare loops on the openai
//    package (bare.mjs). Throughput is model requests per second from the prompts to the last
//    answer; peak RSS is each process's VmHWM. Fresh processes each run; runs of the contenders
//    alternate, which one goes first too. A third contender, for information: the same bare loops
//    made durable (bare.mjs given a folder: a session file each, one fsync a turn), as SPEC's
//    PERF-4 can be read to ask of the baseline too ("every session durable").
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

const sessions = 50;
const turns = 10;
const callsPerTurn = 4;
const runs = Number(process.env.BENCH_RUNS ?? 5);
const latencyRuns = Number(process.env.BENCH_LATENCY_RUNS ?? 3);
const idleCount = Number(process.env.BENCH_IDLE_CONNECTIONS ?? 1000);
const guardMs = Number(process.env.BENCH_TIMEOUT_MS ?? 10 * 60_000);
// Which phases run (default all three): a comma-separated subset of throughput, idle, slow.
const phases = new Set((process.env.BENCH_PHASES ?? 'throughput,idle,slow').split(','));
const targets = { throughput: 0.8, rss: 1.3, connectionKb: 50, p99: 1.1 };
// BENCH_MODEL_LATENCY_MS: the fake model waits this long before each answer of the throughput
// phase (default 0). The targets are for zero latency; with a latency the throughput and RSS rows
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

async function clawThroughput(model, main) {
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
        client.send({ type: 'prompt', content: 'load: read the four files, ten times' });
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
    const wrong = answers.find((event) => event.content !== 'All files read.');
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

/** The bare loops' run; `durable`: with their session files (in the run's temporary folder). */
async function bareThroughput(model, durable = false) {
  const folder = await tempFolder('claw-bench-bare-');
  const workDir = await workspaceIn(folder, callsPerTurn);
  const sessionsDir = durable ? path.join(folder, 'sessions') : undefined;
  if (sessionsDir !== undefined) await mkdir(sessionsDir);
  await model.count();
  const modelCpuBefore = cpuMsOf(model.pid);
  const prompt = 'load: read the four files, ten times';
  const child = forkScript('bare.mjs', [
    model.baseURL, workDir, String(sessions), prompt, String(clockTicks()),
    ...(sessionsDir === undefined ? [] : [sessionsDir]),
  ]);
  try {
    const done = await message(child, 'done', 120_000);
    const { hwmKb } = memoryOf(child.pid);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.send({ type: 'exit' });
    await exited;
    const requests = await model.count();
    // The model's CPU from the bare process's start to its end: its start-up sends nothing.
    const modelCpuMs = cpuMsOf(model.pid) - modelCpuBefore;
    const { wallMs, cpuMs, mainCpuMs } = done;
    return { requests, wallMs, cpuMs, mainCpuMs, modelCpuMs, peakRssKb: hwmKb };
  } finally {
    await stopChild(child);
  }
}

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
  bare: [],
  durable: [],
  ...Object.fromEntries(compareNames.map((name) => [name, []])),
};
const slowReader = Object.fromEntries(modes.map((mode) => [mode, []]));
const heldBy = {};
let idle;
const fdLimit = openFileLimit();
// Each idle connection is one descriptor in this process and one in the server.
const fdsNeeded = idleCount + 200;
const model = await startModel(modelConfig);
try {
  // Warm-up (not measured): the fake model's code paths, the files in the page cache.
  if (phases.has('throughput')) await bareThroughput(model);
  progress('throughput ');
  for (let run = 0; run < (phases.has('throughput') ? runs : 0); run += 1) {
    // Each run starts with another contender, and every other run goes the other way round.
    const names = Object.keys(throughput);
    const rotated = names.map((_, index) => names[(index + run) % names.length]);
    for (const name of run % 2 === 0 ? rotated : rotated.reverse()) {
      throughput[name].push(
        await (name === 'bare' || name === 'durable'
          ? bareThroughput(model, name === 'durable')
          : clawThroughput(model, mainOf(name))),
      );
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
for (const [name, results] of Object.entries(throughput)) {
  for (const result of results) {
    if (result.requests !== expectedRequests) {
      throw new Error(`a ${name} run made ${result.requests} model requests, not ${expectedRequests}`);
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
const widths = [44, 12, 12, 9, 10, 9];
const line = (cells) =>
  console.log(cells.map((cell, index) => (index === 0 ? cell.padEnd(widths[0]) : cell.padStart(widths[index]))).join(''));
const notRun = (label, target) => line([label, 'not run', '—', '—', target, 'NOT RUN']);

console.log(
  'server-load: the built claw-server (file sessions, real ws clients) against bare openai ' +
  'loops in one process; fake model in its own process, all on 127.0.0.1',
);
console.log(
  `${sessions} sessions × ${turns} turns × ${callsPerTurn} parallel read_file, ` +
  `${modelLatencyMs === 0 ? 'zero model latency' : `model latency ${modelLatencyMs} ms an answer`}: ` +
  `${runs} runs each, interleaved, after one warm-up; slow reader: ${latencyRuns} runs ` +
  `each (${modes.join(' / ')}), interleaved\n`,
);
// The throughput targets are for zero model latency; with one, those rows give no verdict.
const loadVerdict = (met) => (modelLatencyMs === 0 ? verdict(met) : 'info');
line(['measure', 'claw-server', 'baseline', 'ratio', 'target', 'verdict']);
const ran = throughput.claw.length > 0;
const claw = ran ? summarize(throughput.claw) : undefined;
const bare = ran ? summarize(throughput.bare) : undefined;
const durable = ran ? summarize(throughput.durable) : undefined;
if (ran) {
  const throughputRatio = claw.turnsPerSecond / bare.turnsPerSecond;
  line([
    'throughput, turns/s (median)', fixed(claw.turnsPerSecond, 1), fixed(bare.turnsPerSecond, 1),
    `${fixed(throughputRatio, 3)}x`, `≥ ${targets.throughput}x`,
    loadVerdict(throughputRatio >= targets.throughput),
  ]);
  line([
    '  vs durable bare loops (one fsync a turn)', fixed(claw.turnsPerSecond, 1),
    fixed(durable.turnsPerSecond, 1), `${fixed(claw.turnsPerSecond / durable.turnsPerSecond, 3)}x`,
    '—', 'info',
  ]);
  const rssRatio = claw.peakRssMb / bare.peakRssMb;
  line([
    'peak RSS (median)', `${fixed(claw.peakRssMb, 1)} MB`, `${fixed(bare.peakRssMb, 1)} MB`,
    `${fixed(rssRatio, 3)}x`, `≤ ${targets.rss}x`, loadVerdict(rssRatio <= targets.rss),
  ]);
} else {
  notRun('throughput, turns/s (median)', `≥ ${targets.throughput}x`);
  notRun('peak RSS (median)', `≤ ${targets.rss}x`);
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

if (ran) {
  console.log('\nthroughput and memory (baseline: the bare loops in one process):');
  const others = compareNames.map((name) => [name, summarize(throughput[name])]);
  const bases = [['bare loops', bare], ['durable bare', durable]];
  for (const [label, s] of [['claw-server', claw], ...others, ...bases]) {
    console.log(
      `  ${label.padEnd(12)} ${fixed(s.turnsPerSecond, 1)} turns/s (runs ${fixed(s.range[0], 1)} … ` +
      `${fixed(s.range[1], 1)}), ${fixed(s.wallMs / 1000, 2)} s a run, peak RSS ` +
      `${fixed(s.peakRssMb, 1)} MB; CPU a turn: ${fixed(s.cpuPerTurnMs, 2)} ms its process ` +
      `(${fixed(s.mainCpuPerTurnMs, 2)} ms its main thread, busy ${fixed(s.mainBusy * 100, 0)}% ` +
      `of the run), ${fixed(s.modelCpuPerTurnMs, 2)} ms the model` +
      (s === bare || s === durable
        ? ''
        : `, ${fixed(s.clientsCpuPerTurnMs, 2)} ms its 50 clients (this process)`),
    );
  }
  // Run by run: the contenders of one run went back to back, on the same machine.
  const perRun = (name, base, measure) =>
    throughput[name].map((result, index) => measure(result) / measure(throughput[base][index]));
  const cpuPerTurn = (result) => result.cpuMs / result.requests;
  console.log('  run by run (the contenders of a run went back to back):');
  console.log(`    claw-server / bare loops, throughput: ${ratioSpread(perRun('claw', 'bare', perSecond))}`);
  console.log(
    `    claw-server / durable bare loops, throughput: ${ratioSpread(perRun('claw', 'durable', perSecond))}`,
  );
  for (const [name, s] of others) {
    const slower = perRun(name, 'claw', perSecond).filter((ratio) => ratio < 1).length;
    console.log(
      `    ${name}: ${compareMains[compareNames.indexOf(name)]}; against claw-server: throughput ` +
      `${fixed(s.turnsPerSecond / claw.turnsPerSecond, 3)}x, peak RSS ` +
      `${fixed(s.peakRssMb / claw.peakRssMb, 3)}x; run by run: throughput ` +
      `${ratioSpread(perRun(name, 'claw', perSecond))}, CPU a turn ` +
      `${ratioSpread(perRun(name, 'claw', cpuPerTurn))}; ${name} slower in ${slower} of ` +
      `${throughput[name].length} runs`,
    );
  }
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
