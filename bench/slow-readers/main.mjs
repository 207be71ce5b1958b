// Slow-readers benchmark (CH-5, LIFE-2): what claw-server holds for clients that stop reading.
// The built claw-server, on the fake model (model.mjs, its own process), streams one answer of
// 600 KiB in 150,000 text deltas to a session. One client (`ws`, the controller) reads it as it
// comes; 16 more of one transport, WebSocket or TCP, opened the session as observers and then
// stopped reading (their sockets paused: the kernel's buffers fill, then what the server holds for
// them). The baseline, in the same run: the same answer with the reader alone. When the reader
// has the task's end (the stopped clients have not read again yet: the server holds for them all
// it will), the server's RSS (VmRSS, from /proc) after a full garbage collection (asked through
// the inspector it runs with) must be within baseline + 16 × the outbound bound (4 MiB, CH-5) +
// 64 MiB. The peak RSS (VmHWM) is printed too; it is mostly the session's own garbage (hundreds of
// MB for this answer, reader alone, more or less depending on when V8 collected) and varies by
// 2x between runs of one scenario: for information. Then the stopped clients read again and each
// one's end is counted: the rest of the answer through the task's end, or closed as too slow
// (4008; on TCP the `error` line), or cut (the server gave up on it before it read again: it
// could not be told), or stuck (open, and nothing more came: LIFE-2 is not met).
//
// Fresh server processes for every scenario; the scenarios of a run go back to back, in another
// order each run. Everything is on 127.0.0.1 with ports the OS picks; every process started here
// is stopped by its pid, every temporary folder removed; a guard ends the benchmark if it overruns.
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { comparedBuilds } from '../bare-loop.mjs';
import {
  Client,
  cleanUp,
  forkScript,
  inspector,
  memoryOf,
  message,
  serverMain,
  startServer,
  stopChild,
  typeOf,
} from '../server-load/harness.mjs';

const runs = Number(process.env.BENCH_RUNS ?? 1);
const stalledCount = Number(process.env.BENCH_STALLED ?? 16);
const deltas = Number(process.env.BENCH_DELTAS ?? 150_000);
const guardMs = Number(process.env.BENCH_TIMEOUT_MS ?? 15 * 60_000);
// The server's outbound bound of a connection (CH-5: 1,024 events or 4 MiB; no flag changes it).
const boundMb = 4;
const slackMb = 64;
// A stopped client that read again and got nothing for this long is stuck (neither end came).
const idleMs = 5000;
const kinds = ['baseline', 'ws', 'tcp'];
// BENCH_COMPARE: more builds of claw-server (main.js paths, comma-separated), run the same way in
// the same runs: a before/after where the machine's drift between runs cannot pass for an effect.
const builds = [{ name: 'claw', main: serverMain }, ...comparedBuilds()];

const guard = setTimeout(() => {
  console.error(`\nslow-readers: not done after ${guardMs} ms (BENCH_TIMEOUT_MS); stopping everything`);
  void cleanUp().finally(() => process.exit(1));
}, guardMs);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => void cleanUp().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143)));
}

/**
 * A JSON-lines client of the TCP port that keeps only what the benchmark needs of each line: its
 * type (read from the front of the line), and the code of an `error`.
 */
class TcpClient {
  constructor(socket, onLine) {
    this.socket = socket;
    this.waiters = [];
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('error', () => undefined);
    this.closed = new Promise((resolve) => socket.once('close', () => resolve({ code: 'end', reason: '' })));
    socket.on('data', (chunk) => {
      buffer += chunk;
      for (let newline = buffer.indexOf('\n'); newline !== -1; newline = buffer.indexOf('\n')) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        const type = typeOf(line);
        onLine?.(line, type);
        for (const waiter of [...this.waiters]) waiter(line, type);
      }
    });
  }

  static connect(port, onLine) {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.once('connect', () => resolve(new TcpClient(socket, onLine)));
      socket.once('error', reject);
    });
  }

  send(value) {
    this.socket.write(`${JSON.stringify(value)}\n`);
  }

  /** The next line of `type`, parsed; an `error` line rejects. */
  next(type, ms = 30_000) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => settle(new Error(`no ${type} within ${ms} ms`)), ms);
      const waiter = (line, got) => {
        if (got === type) settle(undefined, JSON.parse(line));
        else if (got === 'error') settle(new Error(`the server answered ${line}`));
      };
      const settle = (error, value) => {
        clearTimeout(timer);
        this.waiters = this.waiters.filter((other) => other !== waiter);
        if (error === undefined) resolve(value);
        else reject(error);
      };
      this.waiters.push(waiter);
    });
  }

  pause() {
    this.socket.pause();
  }

  resume() {
    this.socket.resume();
  }

  terminate() {
    this.socket.destroy();
  }
}

/** What a stopped client got once it read again, and how its connection ended. */
function tally() {
  const seen = { events: 0, ended: false, errors: [], closed: undefined, lastAt: 0 };
  return {
    seen,
    onEvent: (text, type) => {
      seen.events += 1;
      seen.lastAt = performance.now();
      if (type === 'task_completed') seen.ended = true;
      if (type === 'error') seen.errors.push(/"code":"([a-z_]+)"/.exec(text)?.[1] ?? '?');
    },
  };
}

/**
 * How a client ended: `complete` (the task's end came), closed as too slow (`4008`, or on TCP the
 * `error line`), `cut` (closed with nothing said), or `stuck` (open, and nothing more came).
 */
function outcomeOf(seen) {
  if (seen.ended) return 'complete';
  if (seen.closed === undefined) {
    return seen.errors.length === 0 ? 'stuck' : `stuck after an error (${seen.errors.join(', ')})`;
  }
  if (seen.closed.code === 4008) return '4008';
  if (seen.errors.at(-1) === 'client_too_slow') return 'error line';
  return seen.errors.length === 0 ? 'cut' : `closed after ${seen.errors.join(', ')}`;
}

/** Resolves once the client got the task's end or was closed, or got nothing for `idleMs`. */
async function settled(seen) {
  seen.lastAt = performance.now();
  while (!seen.ended && seen.closed === undefined && performance.now() - seen.lastAt < idleMs) {
    await sleep(50);
  }
}

async function stalledClient(kind, server, sessionId) {
  const { seen, onEvent } = tally();
  const client = kind === 'ws'
    ? await Client.connect(server.http, onEvent)
    : await TcpClient.connect(server.tcp, onEvent);
  void client.closed.then((closed) => {
    seen.closed = closed;
  });
  const welcome = client.next('welcome');
  client.send({ type: 'hello', token: server.token, protocol: 1 });
  await welcome;
  const opened = client.next('session_opened');
  client.send({ type: 'open', session_id: sessionId, role: 'observer' });
  await opened;
  if (kind === 'ws') client.ws.pause();
  else client.pause();
  seen.events = 0;
  return { client, seen, resume: () => (kind === 'ws' ? client.ws.resume() : client.resume()) };
}

/** Resolves once the session's task ended, as a new observer of it is told (`state`). */
async function idleSession(server, sessionId) {
  const deadline = performance.now() + 300_000;
  for (;;) {
    const client = await Client.connect(server.http);
    try {
      await client.hello(server.token);
      const opened = client.next('session_opened');
      client.send({ type: 'open', session_id: sessionId, role: 'observer' });
      if ((await opened).state === 'idle') return;
    } finally {
      client.terminate();
    }
    if (performance.now() > deadline) throw new Error(`session ${sessionId} still runs after 5 minutes`);
    await sleep(250);
  }
}

/**
 * The TCP port from the lines the server prints once listening (`tcp: host:port`): they may
 * come a little after its port file.
 */
async function tcpPortOf(server) {
  const deadline = performance.now() + 10_000;
  for (;;) {
    const port = /^tcp:\s+\S+:(\d+) /m.exec(server.output())?.[1];
    if (port !== undefined) return Number(port);
    if (performance.now() > deadline) {
      throw new Error(`the server printed no TCP port:\n${server.output()}`);
    }
    await sleep(20);
  }
}

/** One scenario on a fresh server: the reader alone (`baseline`), or with stopped clients. */
async function scenario(model, build, kind) {
  const server = await startServer({
    baseURL: model.baseURL,
    files: 0,
    main: build.main,
    nodeArgs: ['--inspect=127.0.0.1:0'],
  });
  const clients = [];
  let peakKb = 0;
  const sampler = setInterval(() => {
    peakKb = Math.max(peakKb, memoryOf(server.pid).rssKb);
  }, 50);
  try {
    server.tcp = await tcpPortOf(server);
    const { seen: read, onEvent } = tally();
    const reader = await Client.connect(server.http, onEvent);
    await reader.hello(server.token);
    const sessionId = await reader.open();
    if (kind !== 'baseline') {
      for (let index = 0; index < stalledCount; index += 1) {
        clients.push(await stalledClient(kind, server, sessionId));
      }
    }
    const startKb = memoryOf(server.pid).rssKb;
    const startedAt = performance.now();
    reader.send({ type: 'prompt', content: 'write a long answer' });
    // The reader gets the task's end, or (a server that lost its stream) an `error` and then
    // nothing: the task's end is then asked of the session itself.
    void reader.closed.then((closed) => {
      read.closed = closed;
    });
    const deadline = performance.now() + 300_000;
    while (!read.ended && read.errors.length === 0 && read.closed === undefined) {
      if (performance.now() > deadline) throw new Error('the reader got nothing for 5 minutes');
      await sleep(20);
    }
    if (!read.ended) await idleSession(server, sessionId);
    const streamMs = performance.now() - startedAt;
    clearInterval(sampler);
    const { rssKb, hwmKb } = memoryOf(server.pid);
    const debug = await inspector(server);
    try {
      await debug.gc();
      await debug.gc();
    } finally {
      debug.close();
    }
    const heldKb = memoryOf(server.pid).rssKb;
    for (const { resume } of clients) resume();
    await Promise.all(clients.map(({ seen }) => settled(seen)));
    const outcomes = {};
    for (const { seen } of clients) {
      const outcome = outcomeOf(seen);
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    }
    reader.terminate();
    const readerOutcome = read.ended ? 'complete' : `${outcomeOf(read)}, after ${read.events} events`;
    const peak = Math.max(peakKb, hwmKb);
    return { startKb, endKb: rssKb, heldKb, peakKb: peak, streamMs, outcomes, readerOutcome };
  } catch (error) {
    error.message += `\nclaw-server output:\n${server.output().slice(-3000)}`;
    throw error;
  } finally {
    clearInterval(sampler);
    for (const { client } of clients) client.terminate();
    await server.stop();
  }
}

// ---- the run -----------------------------------------------------------------------------------

const fixed = (value, digits) => value.toFixed(digits);
const mb = (kb) => kb / 1024;
const results = Object.fromEntries(
  builds.map((build) => [build.name, Object.fromEntries(kinds.map((kind) => [kind, []]))]),
);
const model = forkScript('../slow-readers/model.mjs', [String(deltas)]);
try {
  const { baseURL } = await message(model, 'ready');
  for (let run = 0; run < runs; run += 1) {
    // Another order each run: what goes first does not always meet the same machine.
    const order = kinds.map((_, index) => kinds[(index + run) % kinds.length]);
    for (const build of builds) {
      for (const kind of order) {
        process.stderr.write(`run ${run + 1}/${runs}: ${build.name}, ${kind} … `);
        const result = await scenario({ baseURL }, build, kind);
        results[build.name][kind].push(result);
        process.stderr.write(
          `held ${fixed(mb(result.heldKb), 1)} MiB, peak ${fixed(mb(result.peakKb), 1)} MiB\n`,
        );
      }
    }
  }
} finally {
  clearTimeout(guard);
  if (model.connected) model.send({ type: 'exit' });
  await stopChild(model, 'SIGTERM', 5000);
  await cleanUp();
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];
const limitMb = stalledCount * boundMb + slackMb;
console.log(
  `\nslow readers: claw-server streams ${deltas * 4} characters in ${deltas} text deltas to one ` +
  `reader, with ${stalledCount} clients of one transport that stopped reading (baseline: the ` +
  `reader alone); ${runs} run${runs === 1 ? '' : 's'}, medians.\n` +
  `held: the server's RSS at the task's end after a full GC; limit: baseline + ${stalledCount} × ` +
  `${boundMb} MiB (the outbound bound, CH-5) + ${slackMb} MiB = baseline + ${limitMb} MiB\n`,
);
const row = (cells) =>
  console.log(cells.map((cell, index) => String(cell).padEnd(index === 0 ? 26 : 13)).join(''));
row(['scenario', 'held', 'vs baseline', 'per client', 'limit', 'verdict', 'peak RSS', 'vs baseline']);
let failed = false;
for (const build of builds) {
  const of = (kind, field) => mb(median(results[build.name][kind].map((result) => result[field])));
  const held = of('baseline', 'heldKb');
  const peak = of('baseline', 'peakKb');
  const signed = (value) => `${value >= 0 ? '+' : ''}${fixed(value, 1)} MiB`;
  row([
    `${build.name}: reader alone`, `${fixed(held, 1)} MiB`, '—', '—', '—', '',
    `${fixed(peak, 1)} MiB`, '—',
  ]);
  for (const kind of ['ws', 'tcp']) {
    const over = of(kind, 'heldKb') - held;
    const met = over <= limitMb;
    failed ||= !met;
    row([
      `${build.name}: ${stalledCount} stopped ${kind}`, `${fixed(of(kind, 'heldKb'), 1)} MiB`,
      signed(over), `${fixed(over / stalledCount, 2)} MiB`, `≤ +${limitMb} MiB`,
      met ? 'met' : 'NOT MET', `${fixed(of(kind, 'peakKb'), 1)} MiB`,
      signed(of(kind, 'peakKb') - peak),
    ]);
  }
}
console.log(
  '\nrun by run (RSS before the prompt → at the task\'s end, after a full GC, peak; stream time; ' +
  'how the clients ended):',
);
for (const build of builds) {
  for (const kind of kinds) {
    for (const [index, result] of results[build.name][kind].entries()) {
      const outcomes = Object.entries(result.outcomes).map(([outcome, count]) => `${count} ${outcome}`);
      console.log(
        `  ${build.name}, ${kind}, run ${index + 1}: ${fixed(mb(result.startKb), 1)} → ` +
        `${fixed(mb(result.endKb), 1)} MiB, held ${fixed(mb(result.heldKb), 1)} MiB, peak ` +
        `${fixed(mb(result.peakKb), 1)} MiB; ` +
        `${fixed(result.streamMs / 1000, 1)} s; the reader: ${result.readerOutcome}` +
        (outcomes.length === 0 ? '' : `; the stopped clients: ${outcomes.join(', ')}`),
      );
    }
  }
}
const broken = builds.flatMap((build) =>
  kinds.flatMap((kind) =>
    results[build.name][kind]
      .filter((result) =>
        Object.keys(result.outcomes).some((outcome) => outcome.startsWith('stuck')) ||
        result.readerOutcome !== 'complete')
      .map(() => `${build.name} (${kind})`)));
if (broken.length > 0) {
  console.log(
    `\nNOT MET (LIFE-2) in ${[...new Set(broken)].join(', ')}: a client that reads did not get the ` +
    `whole answer, or a stopped one read again and then got nothing for ${idleMs / 1000} s (neither ` +
    'the rest through the task\'s end nor a close).',
  );
}
process.exitCode = failed ? 1 : 0;
