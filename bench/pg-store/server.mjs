// The PostgreSQL store through the built claw-server, the whole path a user runs (SCALE-1..4):
// 1. tasks through claw-server with `--store postgres://…` against the same server on its default
//    file store, interleaved in one run (4 sessions at once, 10 turns × 4 read_file each, the fake
//    model in its own process): the ratio of model turns per second;
// 2. takeover: two claw-server processes on one database and one workspace; a client of B follows a
//    session A runs a tool in; A is killed with SIGKILL; the time until B's client sees the task
//    ended ("started, outcome unknown"), with the default 10 s lease and with `--lease-ms 2000`.
import { performance } from 'node:perf_hooks';
import { postgresAvailable, startCluster } from '@claw/session-store-pg/testing';
import { FakeOpenAIServer } from '@claw/testing/node';
import { Client, cleanUp, startModel, startServer, tempFolder, workspaceIn } from '../server-load/harness.mjs';

const runs = Number(process.env.BENCH_RUNS ?? 3);
const sessions = 4;
const takeoverRuns = Number(process.env.BENCH_TAKEOVER_RUNS ?? 2);

if (!postgresAvailable()) {
  console.error('bench:pg needs PostgreSQL\'s server binaries (initdb, postgres): apt-get install -y postgresql');
  process.exit(2);
}

/** Model turns per second of `sessions` tasks at once through one claw-server with `args`. */
async function throughput(model, args) {
  const server = await startServer({ baseURL: model.baseURL, files: 4, args });
  try {
    const clients = [];
    for (let index = 0; index < sessions; index += 1) {
      const client = await Client.connect(server.http);
      await client.hello(server.token);
      await client.open();
      clients.push(client);
    }
    await model.count();
    const started = performance.now();
    await Promise.all(clients.map((client) => {
      const done = client.next('task_completed', 120_000);
      client.send({ type: 'prompt', content: 'load: read the four files, ten times' });
      return done;
    }));
    const seconds = (performance.now() - started) / 1000;
    const requests = await model.count();
    for (const client of clients) client.terminate();
    return requests / seconds;
  } catch (error) {
    error.message += `\nclaw-server output:\n${server.output().slice(-3000)}`;
    throw error;
  } finally {
    await server.stop();
  }
}

/** Kill → B's client sees the interrupted task ended, in ms. */
async function takeover(url, leaseArgs) {
  const tag = `3${Math.floor(Math.random() * 9)}.${process.pid % 1000}${Date.now() % 1000}`;
  const model = await FakeOpenAIServer.start({
    turns: (body) => {
      const last = body.messages.at(-1);
      if (last?.role === 'user') {
        return { toolCalls: [{ id: 'call-sleep', name: 'bash', arguments: JSON.stringify({ command: `sleep ${tag}` }) }] };
      }
      return { text: 'done' };
    },
  });
  const workDir = await workspaceIn(await tempFolder('claw-bench-takeover-'), 0);
  const args = ['--store', url, '--approval', 'allow', ...leaseArgs];
  const a = await startServer({ baseURL: model.baseURL, workDir, args });
  const b = await startServer({ baseURL: model.baseURL, workDir, args });
  try {
    const onA = await Client.connect(a.http);
    await onA.hello(a.token);
    const onB = await Client.connect(b.http);
    await onB.hello(b.token);
    const opened = onA.next('session_opened');
    onA.send({ type: 'open', session_id: 'takeover' });
    await opened;
    const followed = onB.next('session_opened');
    onB.send({ type: 'open', session_id: 'takeover' });
    await followed;
    const called = onB.next('tool_call', 30_000);
    onA.send({ type: 'prompt', content: 'run the long job' });
    await called;
    // The tool runs: kill A as a crash would.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const ended = new Promise((resolve, reject) => {
      onB.ws.on('message', (data) => {
        const event = JSON.parse(data.toString('utf8'));
        if (event.type === 'task_failed' && event.code === 'task_interrupted') resolve(performance.now());
        if (event.type === 'error') reject(new Error(data.toString('utf8')));
      });
    });
    const killedAt = performance.now();
    await a.kill();
    const seen = await Promise.race([
      ended,
      new Promise((_, reject) => setTimeout(() => reject(new Error('no takeover within 60 s')), 60_000)),
    ]);
    onA.terminate();
    onB.terminate();
    return seen - killedAt;
  } finally {
    await b.stop();
    await model.close();
  }
}

const cluster = await startCluster({ fsync: true });
const rates = { file: [], pg: [] };
const takeovers = [];
try {
  const model = await startModel({ turns: 10, callsPerTurn: 4 });
  try {
    // One warm-up of each (not measured), then alternating order.
    await throughput(model, []);
    await throughput(model, ['--store', await cluster.createDatabase()]);
    for (let run = 0; run < runs; run += 1) {
      const order = run % 2 === 0 ? ['file', 'pg'] : ['pg', 'file'];
      for (const store of order) {
        const args = store === 'pg' ? ['--store', await cluster.createDatabase()] : [];
        rates[store].push(await throughput(model, args));
        process.stderr.write('.');
      }
    }
  } finally {
    await model.stop();
  }
  for (const [label, leaseArgs] of [['lease 10 s (default)', []], ['lease 2 s (--lease-ms 2000)', ['--lease-ms', '2000']]]) {
    for (let run = 0; run < takeoverRuns; run += 1) {
      takeovers.push({ label, ms: await takeover(await cluster.createDatabase(), leaseArgs) });
      process.stderr.write('.');
    }
  }
  process.stderr.write('\n');
} finally {
  await cleanUp();
  await cluster.destroy();
}

const median = (values) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];
const file = median(rates.file);
const pg = median(rates.pg);
console.log(`claw-server, ${sessions} sessions at once, 10 turns × 4 read_file each; model turns per second, median of ${runs} interleaved runs`);
console.log(`${'file store (default)'.padEnd(34)}${file.toFixed(1).padStart(10)}/s`);
console.log(`${'--store postgres (fsync on)'.padEnd(34)}${pg.toFixed(1).padStart(10)}/s`);
console.log(`${'postgres / file'.padEnd(34)}${`${(pg / file).toFixed(2)}x`.padStart(12)}`);
console.log('\ntakeover through claw-server: SIGKILL of the owner → the other instance\'s client sees the task ended');
for (const label of new Set(takeovers.map((entry) => entry.label))) {
  const times = takeovers.filter((entry) => entry.label === label).map((entry) => `${(entry.ms / 1000).toFixed(2)} s`);
  console.log(`${label.padEnd(34)}${times.join(', ')}`);
}
