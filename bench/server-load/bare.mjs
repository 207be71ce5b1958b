// The baseline of the server-load benchmark: one process running `sessions` bare agent loops on
// the openai package at once (bare-loop.mjs, one shared client), each doing the same task as a
// claw-server session: turns of parallel read_file calls against the fake model, until it
// answers. Nothing else: no session file, no journal, no events, no clients.
//
// Given a folder (argv 6), the loops are durable, the least a session can do to be: each one
// appends its messages to a file of its own there, a JSON line each, and has the model's answer on
// disk (fsync, as claw's session store does) before its tool calls run or the answer is returned;
// the tool results go down with the next answer's fsync. One fsync a turn.
//
// argv: baseURL, workspace, sessions, prompt, the kernel's clock ticks a second[, folder for the
// durable loops' session files]. Started with an IPC channel: once every loop has answered it
// sends {type: 'done', turns, wallMs, cpuMs, mainCpuMs} and waits for {type: 'exit'}, so that the
// benchmark reads its peak RSS from /proc the same way as the server's, before it exits.
import { open } from 'node:fs/promises';
import path from 'node:path';
import OpenAI from 'openai';
import { bareLoop, tools } from '../bare-loop.mjs';
import { statCpuMs } from '../proc-stat.mjs';

const [baseURL, workDir, sessionsArg, prompt, ticksArg, durableDir] = process.argv.slice(2);
const sessions = Number(sessionsArg);
const client = new OpenAI({ apiKey: 'bench', baseURL, maxRetries: 0 });

// CPU time of this process's main thread (its tid is the pid), in ms: the one that runs the loops.
// The clock ticks come from the benchmark: asking `getconf` here would add to this peak RSS.
const mainCpuMs = () => statCpuMs(`/proc/self/task/${process.pid}/stat`, { ticks: Number(ticksArg) });

/** Session `index`'s writer (durable loops only): appends the messages, fsyncs when asked. */
async function sessionFile(index) {
  const file = await open(path.join(durableDir, `session-${index}.jsonl`), 'a');
  return async (added, sync) => {
    await file.write(added.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
    if (sync) await file.sync();
  };
}

// Opened before the clock starts, as claw-server's clients open their sessions before they prompt.
const writers = durableDir === undefined
  ? []
  : await Promise.all(Array.from({ length: sessions }, (_, index) => sessionFile(index)));

let turns = 0;
const cpuBefore = process.cpuUsage();
const mainCpuBefore = mainCpuMs();
const startedAt = performance.now();
const answers = await Promise.all(
  Array.from({ length: sessions }, (_, index) =>
    bareLoop({
      persist: writers[index],
      client,
      model: 'bench-model',
      tools,
      prompt,
      workDir,
      onTurn: () => {
        turns += 1;
      },
    }),
  ),
);
const wallMs = performance.now() - startedAt;
const cpu = process.cpuUsage(cpuBefore);
const mainCpu = mainCpuMs() - mainCpuBefore;
const wrong = answers.find((answer) => answer !== 'All files read.');
if (wrong !== undefined) throw new Error(`a bare loop answered ${JSON.stringify(wrong)}`);
process.on('message', (message) => {
  if (message?.type === 'exit') process.exit(0);
});
process.send({ type: 'done', turns, wallMs, cpuMs: (cpu.user + cpu.system) / 1000, mainCpuMs: mainCpu });
