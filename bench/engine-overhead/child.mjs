// One benchmark process: runs one implementation (the claw engine, or a bare loop on the openai
// package) against the fake server, a warm-up run and then measured runs, and prints its figures
// as one JSON line. Each implementation runs in its own process so CPU time and peak RSS are its
// own.
import path from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { Engine, createReadFileTool } from '@claw/engine';
import { createFileTracing } from '@claw/runtime';
import { OpenAIProvider } from '@claw/provider';
import { MemorySession } from '@claw/session-store';
import { AllowAllGate } from '@claw/testing';
import OpenAI from 'openai';
import { bareLoop } from '../bare-loop.mjs';

const [implementation, baseURL, workDir, runsText] = process.argv.slice(2);
const measuredRuns = Number(runsText);
const model = 'bench-model';
const prompt = 'Read the four files, again and again.';

const readFileDefinition = createReadFileTool().definition;

// With tracing on, spans go to an OTLP JSON file through the batching exporter, as in the apps.
const traceDir = implementation === 'engine-traced'
  ? await mkdtemp(path.join(os.tmpdir(), 'claw-bench-traces-'))
  : undefined;
const tracing = traceDir === undefined ? undefined : createFileTracing({ workDir: traceDir });

async function runEngine(turnStarts) {
  const engine = new Engine({
    ...(tracing === undefined ? {} : { tracer: tracing.tracer }),
    provider: new OpenAIProvider({ apiKey: 'bench', model, baseURL }),
    gate: new AllowAllGate(),
    tools: [createReadFileTool()],
    maxTurns: 100,
  });
  const session = new MemorySession({ workDir });
  const result = await engine.run(prompt, {
    session,
    reporter: { onThinking: () => void turnStarts.push(performance.now()) },
  });
  if (result.status !== 'completed') throw new Error(`engine run ${result.status}: ${result.error?.message}`);
}

async function runBare(turnStarts) {
  const client = new OpenAI({ apiKey: 'bench', baseURL, maxRetries: 0 });
  const tools = [{ type: 'function', function: readFileDefinition }];
  const onTurn = () => void turnStarts.push(performance.now());
  await bareLoop({ client, model, tools, prompt, workDir, onTurn });
}

const run = implementation === 'bare' ? runBare : runEngine;
await run([]); // warm-up: JIT, connection pool
const turnTimes = [];
const cpuBefore = process.cpuUsage();
for (let index = 0; index < measuredRuns; index += 1) {
  const turnStarts = [];
  await run(turnStarts);
  turnStarts.push(performance.now());
  for (let turn = 1; turn < turnStarts.length; turn += 1) {
    turnTimes.push(turnStarts[turn] - turnStarts[turn - 1]);
  }
}
await tracing?.shutdown();
const cpu = process.cpuUsage(cpuBefore);
if (traceDir !== undefined) await rm(traceDir, { recursive: true, force: true });
process.stdout.write(
  `${JSON.stringify({
    implementation,
    turnTimes,
    cpuMsPerRun: (cpu.user + cpu.system) / 1000 / measuredRuns,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
  })}\n`,
);
