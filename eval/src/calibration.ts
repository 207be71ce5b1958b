import { mkdtemp, open, rm, writeFile, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sleep, type Message, type ModelRequest, type ModelResponse } from '@claw/core';
import { ScriptedProvider, type ScriptedReply } from '@claw/testing';
import type { HarnessFaults } from './case.js';
import { percentile } from './metrics.js';
import { withSlowTurns } from './slow-faults.js';
import type { CalibrationRun } from './suite.js';
import { cpuWaitMs } from './cpu-wait.js';

/** The name results and the gate give the calibration. */
export const calibrationName = 'bare-loop';

/** What the calibration is, in one sentence (reports). */
export const calibrationTitle =
  'A bare agent loop without claw: a scripted model streamed, a file written, a journal fsynced.';

/** Turns of one calibration run: as many as a small case (each but the last writes a file). */
const turns = 3;

/** Copies and encodings of the conversation per turn: what makes a turn cost a small case's. */
const encodings = 60;

/** The scripted model's wait before each reply (ms), as the small cases script it. */
const calibrationTtfbMs = 3;

const systemPrompt = [
  'You are a coding agent. Work in the workspace; read before you write; keep changes small.',
  ...Array.from({ length: 40 }, (_, line) =>
    `Rule ${line + 1}: say what you change and why, and leave files you were not asked about alone.`),
].join('\n');

function script(): ScriptedReply[] {
  const writes = Array.from({ length: turns - 1 }, (_, turn): ScriptedReply => ({
    text: `Writing part ${turn + 1}.`,
    toolCalls: [{
      id: `call_${turn + 1}`,
      name: 'write_file',
      arguments: { path: `part-${turn + 1}.txt`, content: `part ${turn + 1}\n`.repeat(20) },
    }],
    usage: { promptTokens: 200 + turn * 40, completionTokens: 20 },
    delayMs: calibrationTtfbMs,
  }));
  return [...writes, { text: 'Done.', usage: { promptTokens: 320, completionTokens: 3 }, delayMs: calibrationTtfbMs }];
}

/** Appends a record; flushed to the disk when `sync` (claw flushes a wave's tool starts). */
async function appendRecord(journal: FileHandle, record: unknown, sync = false): Promise<void> {
  await journal.write(`${JSON.stringify(record)}\n`);
  if (sync) await journal.sync();
}

/**
 * One run of the latency gate's calibration (PERF-6): a bare agent loop that does what a small
 * case makes claw do — build and encode each request, stream a scripted reply (the same
 * `ScriptedProvider` and the same 3 ms waits as the cases), parse the tool call, write the file,
 * append the conversation to a journal (flushed to the disk at each tool start, as claw's session
 * log is) — without any of claw's code.
 *
 * It must not run claw's engine: the gate divides each case's overhead by this one's, and an
 * engine regression that also slowed the yardstick (a sleep in every turn) would cancel out. Only
 * the machine moves it, so only the machine is divided out. Of the faults it takes `slowMachine`
 * (the others are the engine's).
 *
 * Its overhead is its run time minus the scripted waits, as a case's is; its ttfb is the time to
 * each reply's first event. A run that fails is an `error`, never a figure.
 */
export async function runCalibration(
  options: { faults?: HarnessFaults; signal?: AbortSignal } = {},
): Promise<CalibrationRun> {
  let folder: string | undefined;
  let journal: FileHandle | undefined;
  try {
    folder = await mkdtemp(path.join(tmpdir(), 'claw-eval-calibration-'));
    journal = await open(path.join(folder, 'journal.jsonl'), 'a');
    let scriptedMs = 0;
    // The CPU wait inside the scripted waits (a wait that ended late): part of scriptedMs already.
    let cpuWaitInScriptedMs = 0;
    const scripted = new ScriptedProvider(script(), {
      name: calibrationName,
      record: false,
      sleep: async (ms, signal) => {
        const started = performance.now();
        const waitedBefore = cpuWaitMs();
        try {
          await sleep(ms, signal);
        } finally {
          scriptedMs += performance.now() - started;
          cpuWaitInScriptedMs += cpuWaitMs() - waitedBefore;
        }
      },
    });
    const machine = options.faults?.slowMachine;
    const model = withSlowTurns(scripted, machine === undefined ? {} : { slowMachine: machine });
    const stream = model.provider.stream?.bind(model.provider);
    if (stream === undefined) throw new Error('the scripted model cannot stream');
    const messages: Message[] = [
      { role: 'system', content: systemPrompt },
      { role: 'user', content: 'Write the parts, one file each.' },
    ];
    const ttfbMs: number[] = [];
    const cpuWaitBefore = cpuWaitMs();
    const started = performance.now();
    model.begin();
    for (let turn = 0; turn < turns; turn += 1) {
      let request: ModelRequest = { model: calibrationName, messages };
      let wire = '';
      for (let copy = 0; copy < encodings; copy += 1) {
        request = structuredClone(request);
        wire = JSON.stringify(request);
      }
      const sent = performance.now();
      let response: ModelResponse | undefined;
      for await (const event of stream(JSON.parse(wire) as ModelRequest, options)) {
        if (ttfbMs.length === turn) ttfbMs.push(performance.now() - sent);
        if (event.type === 'completed') response = event.response;
      }
      if (response === undefined) throw new Error(`reply ${turn + 1} did not complete`);
      messages.push(response.message);
      await appendRecord(journal, { type: 'message', turn, message: response.message });
      for (const call of response.message.toolCalls ?? []) {
        const args = JSON.parse(call.arguments) as { path: string; content: string };
        await appendRecord(journal, { type: 'tool_started', id: call.id }, true);
        await writeFile(path.join(folder, path.basename(args.path)), args.content);
        const result: Message = { role: 'tool', toolCallId: call.id, content: `Wrote ${args.path}.` };
        messages.push(result);
        await appendRecord(journal, { type: 'message', turn, message: result });
      }
    }
    const runMs = performance.now() - started;
    // As a case's: without the time the process waited for a CPU outside the scripted waits.
    const cpuWait = Math.max(0, cpuWaitMs() - cpuWaitBefore - cpuWaitInScriptedMs);
    return {
      verdict: 'pass',
      reason: 'done',
      overheadMs: Math.max(0, runMs - scriptedMs - cpuWait),
      ttfbMs,
    };
  } catch (error) {
    options.signal?.throwIfAborted();
    return {
      verdict: 'error',
      reason: `the calibration failed: ${error instanceof Error ? error.message : String(error)}`,
      overheadMs: 0,
      ttfbMs: [],
    };
  } finally {
    await journal?.close().catch(() => undefined);
    if (folder !== undefined) {
      await rm(folder, { recursive: true, force: true }).catch(() => undefined);
    }
  }
}

/** p50, p95 and the highest of some figures (null when there are none). */
export interface Spread {
  p50: number | null;
  p95: number | null;
  max: number | null;
}

/** p50, p95 and max of `values`. */
export function spreadOf(values: readonly number[]): Spread {
  return {
    p50: percentile(values, 50),
    p95: percentile(values, 95),
    max: values.length === 0 ? null : Math.max(...values),
  };
}
