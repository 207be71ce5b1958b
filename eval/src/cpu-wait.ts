import { readFileSync } from 'node:fs';

/** Where Linux keeps the main thread's scheduler figures: on-CPU ns, run-queue wait ns, slices. */
const schedstatFile = '/proc/self/schedstat';

/**
 * How long, in ms, this process's main thread has waited on the run queue so far: runnable, but
 * the CPU given to other processes. That is the machine's load, not claw's work; the gate takes
 * what of it falls outside the scripted waits out of a run's overhead (PERF-6), because a loaded
 * machine stretches a long run's CPU work far more than the short calibration's. Time the thread
 * sleeps (an engine waiting on a timer) is not in it. 0 where the system does not tell.
 */
export function cpuWaitMs(read: () => string = () => readFileSync(schedstatFile, 'utf8')): number {
  let text: string;
  try {
    text = read();
  } catch {
    return 0;
  }
  const waitedNs = Number(text.trim().split(/\s+/)[1]);
  return Number.isFinite(waitedNs) && waitedNs >= 0 ? waitedNs / 1e6 : 0;
}
