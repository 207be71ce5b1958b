// Sandbox overhead benchmark: the per-command cost of running bash under bubblewrap isolation
// (namespaces, seccomp, process limit), against a plain `bash -c` in the same run, interleaved,
// with bubblewrap run directly on claw's own invocation as the floor claw's set-up adds to.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  bubblewrapInvocation,
  createCommandSpawner,
  plainCommandSpawner,
  probeIsolation,
} from '@claw/sandbox';

const runs = Number(process.env.BENCH_RUNS ?? 50);
const command = process.env.BENCH_COMMAND ?? 'true';
// PERF-3: isolation may cost at most this much over a bare `bash -c` per command.
const targetMs = 12;

const probe = await probeIsolation();
if (!probe.available) {
  console.error(`bubblewrap is not available here (${probe.reason}); nothing to compare.`);
  process.exit(2);
}
const workDir = await mkdtemp(path.join(os.tmpdir(), 'claw-bench-sandbox-'));
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' };
const isolated = await createCommandSpawner({ isolation: 'required', env });
const plain = plainCommandSpawner({ env });

/**
 * bubblewrap started directly with the arguments and fd inputs claw uses, spawned the way claw
 * spawns it, but without claw's per-command work (workspace inspection, the root-only pids
 * cgroup and its launcher): what bubblewrap itself costs.
 */
function bubblewrapDirect() {
  const { file, args, cwd, env: launcherEnv, inputs } = floor;
  const child = spawn(file, args, {
    cwd,
    env: launcherEnv,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe', ...inputs.map(() => 'pipe')],
  });
  inputs.forEach((input, index) => {
    const stream = child.stdio[3 + index];
    stream.on('error', () => undefined);
    stream.end(input, () => stream.destroy());
  });
  return child;
}
const floor = bubblewrapInvocation(isolated, command, { workDir });

const baselineName = 'bash -c (baseline)';
const floorName = 'bubblewrap direct (floor)';
const isolatedName = 'claw, bubblewrap';
const contenders = {
  [baselineName]: () => spawn('bash', ['-c', command], { cwd: workDir, env, stdio: 'ignore' }),
  'claw, not isolated': () => plain.spawn(command, { workDir }),
  [isolatedName]: () => isolated.spawn(command, { workDir }),
  [floorName]: bubblewrapDirect,
};

function timeOne(start) {
  const started = performance.now();
  const child = start();
  child.stdout?.resume();
  child.stderr?.resume();
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      if (code !== 0) reject(new Error(`exit code ${code}`));
      else resolve(performance.now() - started);
    });
  });
}

const samples = Object.fromEntries(Object.keys(contenders).map((name) => [name, []]));
try {
  for (const start of Object.values(contenders)) await timeOne(start); // warm-up
  for (let run = 0; run < runs; run += 1) {
    for (const [name, start] of Object.entries(contenders)) {
      samples[name].push(await timeOne(start));
    }
  }
} finally {
  await rm(workDir, { recursive: true, force: true });
}

const quantile = (values, q) =>
  [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) * q)];
const median = (values) => quantile(values, 0.5);
const baseline = median(samples[baselineName]);
const ms = (value) => `${value.toFixed(2)} ms`;
const signed = (value) => `${value >= 0 ? '+' : ''}${value.toFixed(2)} ms`;
console.log(`sandbox-overhead: \`${command}\`, ${runs} interleaved runs each, wall time from spawn to close`);
console.log(`isolation: ${isolated.description}\n`);
console.log(`${''.padEnd(27)}${'median'.padStart(11)}${'p10-p90'.padStart(20)}${'vs bare'.padStart(12)}${'ratio'.padStart(8)}`);
for (const [name, values] of Object.entries(samples)) {
  const value = median(values);
  const spread = `${quantile(values, 0.1).toFixed(1)}-${quantile(values, 0.9).toFixed(1)} ms`;
  console.log(
    `${name.padEnd(27)}${ms(value).padStart(11)}${spread.padStart(20)}` +
    `${signed(value - baseline).padStart(12)}${`${(value / baseline).toFixed(2)}x`.padStart(8)}`,
  );
}
const overhead = median(samples[isolatedName]) - baseline;
const floorOverhead = median(samples[floorName]) - baseline;
console.log(
  `\nisolation costs ${signed(overhead)} per command over bare bash -c ` +
  `(bubblewrap itself ${signed(floorOverhead)}, claw's own set-up ${signed(overhead - floorOverhead)})`,
);
console.log(
  `PERF-3 target (at most +${targetMs} ms over bare bash -c): ` +
  `${overhead <= targetMs ? 'met' : 'NOT met'}`,
);
