// The baseline of the server-load benchmark: one process running `sessions` bare agent loops on
// the openai package at once (bare-loop.mjs, one shared client), each doing the same task as a
// claw-server session: turns of parallel read_file calls against the fake model, until it
// answers. Nothing else: no session file, no journal, no events, no clients.
//
// argv: baseURL, workspace, sessions, prompt, the kernel's clock ticks a second. Started with an
// IPC channel: once every loop has answered it sends {type: 'done', turns, wallMs, cpuMs,
// mainCpuMs} and waits for {type: 'exit'}, so that the benchmark reads its peak RSS from /proc the
// same way as the server's, before it exits.
import OpenAI from 'openai';
import { bareLoop, tools } from '../bare-loop.mjs';
import { statCpuMs } from '../proc-stat.mjs';

const [baseURL, workDir, sessionsArg, prompt, ticksArg] = process.argv.slice(2);
const sessions = Number(sessionsArg);
const client = new OpenAI({ apiKey: 'bench', baseURL, maxRetries: 0 });

// CPU time of this process's main thread (its tid is the pid), in ms: the one that runs the loops.
// The clock ticks come from the benchmark: asking `getconf` here would add to this peak RSS.
const mainCpuMs = () => statCpuMs(`/proc/self/task/${process.pid}/stat`, { ticks: Number(ticksArg) });

let turns = 0;
const cpuBefore = process.cpuUsage();
const mainCpuBefore = mainCpuMs();
const startedAt = performance.now();
const answers = await Promise.all(
  Array.from({ length: sessions }, () =>
    bareLoop({
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
