// Engine overhead benchmark: the claw engine (OpenAI provider, read_file tool, approval gate,
// session, spans) against a bare loop written with only the openai package, doing the same work
// against the same fake server: 50 turns of 4 parallel read_file calls, zero model latency.
// Processes of the two alternate, so both see the same machine state; the ratio is what counts.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { FakeOpenAIServer } from '@claw/testing/node';
import { median, percentile } from '../bare-loop.mjs';

const run = promisify(execFile);
const turns = 50;
const callsPerTurn = 4;
const pairs = Number(process.env.BENCH_PAIRS ?? 4);
const runsPerProcess = Number(process.env.BENCH_RUNS ?? 3);
// PERF-1: the engine alone within 1.1× of the bare loop.
const target = 1.1;

const workDir = await mkdtemp(path.join(os.tmpdir(), 'claw-bench-'));
for (let index = 0; index < callsPerTurn; index += 1) {
  await writeFile(path.join(workDir, `file-${index}.txt`), 'line of source code\n'.repeat(50));
}

// The turn comes from the request itself (the id of the last tool call): runs share no state.
const turnOf = (body) => {
  const last = body.messages.findLast((message) => message.role === 'assistant');
  const id = last?.tool_calls?.[0]?.id;
  return id === undefined ? 0 : Number(id.split('_')[1]) + 1;
};
const server = await FakeOpenAIServer.start({
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

const child = path.join(import.meta.dirname, 'child.mjs');
const results = { bare: [], engine: [], 'engine-traced': [] };
try {
  for (let pair = 0; pair < pairs; pair += 1) {
    const names = Object.keys(results);
    const order = pair % 2 === 0 ? names : [...names].reverse();
    for (const implementation of order) {
      const args = [child, implementation, server.baseURL, workDir, String(runsPerProcess)];
      const { stdout } = await run(process.execPath, args);
      results[implementation].push(JSON.parse(stdout.trim().split('\n').at(-1)));
      process.stderr.write('.');
    }
  }
  process.stderr.write('\n');
} finally {
  await server.close();
  await rm(workDir, { recursive: true, force: true });
}

const summary = Object.fromEntries(
  Object.entries(results).map(([name, processes]) => {
    const turnTimes = processes.flatMap((result) => result.turnTimes);
    return [
      name,
      {
        medianMs: median(turnTimes),
        p95Ms: percentile(turnTimes, 95),
        cpuMsPerRun: median(processes.map((result) => result.cpuMsPerRun)),
        peakRssMb: median(processes.map((result) => result.peakRssMb)),
        samples: turnTimes.length,
      },
    ];
  }),
);

const format = (value, unit) => `${value.toFixed(unit === 'MB' ? 1 : 3)} ${unit}`.padStart(12);
console.log(`engine-overhead: ${turns} turns × ${callsPerTurn} parallel read_file, fake server, zero model latency`);
console.log(`${pairs} process pairs, ${runsPerProcess} measured runs each (after a warm-up run)\n`);
console.log(`${''.padEnd(22)}${'turn median'.padStart(12)}${'turn p95'.padStart(12)}${'CPU / run'.padStart(12)}${'peak RSS'.padStart(12)}`);
for (const [name, label] of [
  ['bare', 'bare openai loop'],
  ['engine', 'claw engine'],
  ['engine-traced', 'claw engine, traced'],
]) {
  const row = summary[name];
  console.log(
    `${label.padEnd(22)}${format(row.medianMs, 'ms')}${format(row.p95Ms, 'ms')}${format(row.cpuMsPerRun, 'ms')}${format(row.peakRssMb, 'MB')}`,
  );
}
const ratioRow = (label, top, bottom) => {
  const ratio = (key) => `${(summary[top][key] / summary[bottom][key]).toFixed(3)}x`.padStart(12);
  console.log(`${label.padEnd(22)}${ratio('medianMs')}${ratio('p95Ms')}${ratio('cpuMsPerRun')}${ratio('peakRssMb')}`);
};
ratioRow('engine / bare', 'engine', 'bare');
ratioRow('traced / untraced', 'engine-traced', 'engine');
const ratio = (key) => summary.engine[key] / summary.bare[key];
const verdict = ratio('medianMs') <= target ? 'meets' : 'MISSES';
console.log(`\nper-turn median ratio ${ratio('medianMs').toFixed(3)}x ${verdict} the target of ≤ ${target}x`);
