// Sandbox overhead benchmark: the per-command cost of running bash under bubblewrap isolation
// (namespaces, seccomp, process limit), against a plain `bash -c` in the same run, interleaved.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createCommandSpawner, plainCommandSpawner, probeIsolation } from '@claw/sandbox';

const runs = Number(process.env.BENCH_RUNS ?? 50);
const command = process.env.BENCH_COMMAND ?? 'true';

const probe = await probeIsolation();
if (!probe.available) {
  console.error(`bubblewrap is not available here (${probe.reason}); nothing to compare.`);
  process.exit(2);
}
const workDir = await mkdtemp(path.join(os.tmpdir(), 'claw-bench-sandbox-'));
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' };
const isolated = await createCommandSpawner({ isolation: 'required', env });
const plain = plainCommandSpawner({ env });

const contenders = {
  'bash -c (baseline)': () => spawn('bash', ['-c', command], { cwd: workDir, env, stdio: 'ignore' }),
  'claw, not isolated': () => plain.spawn(command, { workDir }),
  'claw, bubblewrap': () => isolated.spawn(command, { workDir }),
};

function timeOne(start) {
  const started = performance.now();
  const child = start();
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

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const baseline = median(samples['bash -c (baseline)']);
console.log(`sandbox-overhead: \`${command}\`, ${runs} interleaved runs each, median wall time from spawn to exit`);
console.log(`isolation: ${isolated.description}\n`);
for (const [name, values] of Object.entries(samples)) {
  const value = median(values);
  console.log(`${name.padEnd(22)}${`${value.toFixed(2)} ms`.padStart(12)}${`${(value / baseline).toFixed(2)}x`.padStart(10)}`);
}
console.log(`\nisolation costs ${(median(samples['claw, bubblewrap']) - baseline).toFixed(1)} ms per command over plain bash -c`);
