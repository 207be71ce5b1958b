// The frame of a throughput contender that runs all of a run's sessions in one process of its
// own (bare.mjs, peer-ai.mjs, peer-agents.mjs): its settings, the clock and CPU time around the
// sessions, the check of every session's answer, and the IPC handshake with main.mjs. Only
// Node's built-ins (through proc-stat.mjs), so that the frame adds next to nothing to a
// contender's peak RSS.
//
// argv 2: the settings as JSON: {baseURL, workDir, sessions, prompt, answer, ticks, sessionsDir?}
// (`answer`: what every session must end with; `ticks`: the kernel's clock ticks a second, given
// because asking `getconf` here would add to this peak RSS; `sessionsDir`: the durable bare
// loops' folder). Started with an IPC channel: once every session answered it sends
// {type: 'done', wallMs, cpuMs, mainCpuMs} and waits for {type: 'exit'}, so that the benchmark
// reads its peak RSS from /proc the same way as the server's, before it exits.
import { statCpuMs } from '../proc-stat.mjs';

/** This run's settings (see above). */
export const settings = JSON.parse(process.argv[2] ?? '{}');

// CPU time of this process's main thread (its tid is the pid), in ms: the one that runs the loops.
const mainCpuMs = () =>
  statCpuMs(`/proc/self/task/${process.pid}/stat`, { ticks: Number(settings.ticks) });

/**
 * Runs `session(index)` for every session at once, timed from the first to the last answer, checks
 * that each answered `settings.answer`, then reports to main.mjs and waits to be told to exit.
 *
 * @param {(index: number) => Promise<string>} session one session's task; resolves with its answer
 * @throws Error naming the answer when a session answered anything else
 */
export async function runSessions(session) {
  const cpuBefore = process.cpuUsage();
  const mainCpuBefore = mainCpuMs();
  const startedAt = performance.now();
  const answers = await Promise.all(
    Array.from({ length: settings.sessions }, (_, index) => session(index)),
  );
  const wallMs = performance.now() - startedAt;
  const cpu = process.cpuUsage(cpuBefore);
  const mainCpu = mainCpuMs() - mainCpuBefore;
  const wrong = answers.find((answer) => answer !== settings.answer);
  if (wrong !== undefined) {
    throw new Error(
      `a session answered ${JSON.stringify(wrong)}, not ${JSON.stringify(settings.answer)}`,
    );
  }
  process.on('message', (message) => {
    if (message?.type === 'exit') process.exit(0);
  });
  process.send({
    type: 'done',
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    mainCpuMs: mainCpu,
  });
}
