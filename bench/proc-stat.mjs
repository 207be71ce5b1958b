// CPU time from Linux's /proc, for the benchmarks that time processes from outside or inside.
// Only Node's built-in modules, so that a baseline process can use it without loading more; and
// `node:child_process` only when the clock ticks are asked for.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

let ticks;
/**
 * The kernel's clock ticks a second (CPU times in /proc are in those). Asked of `getconf` once, on
 * the first call: a baseline process is given the figure instead (a child process costs its peak
 * RSS some 3.5 MB).
 */
export function clockTicks() {
  if (ticks === undefined) {
    try {
      const { execFileSync } = createRequire(import.meta.url)('node:child_process');
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

/**
 * CPU time (user + system), in ms, from a `stat` file of /proc: `/proc/<pid>/stat` for a process,
 * `/proc/<pid>/task/<tid>/stat` for one of its threads (the main thread's tid is the pid). With
 * `children`, that of its waited-for children instead (cutime + cstime). `ticks`: the clock ticks
 * a second, when known (default {@link clockTicks}).
 */
export function statCpuMs(file, { children = false, ticks: perSecond = clockTicks() } = {}) {
  const stat = readFileSync(file, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const user = children ? 13 : 11;
  return ((Number(fields[user]) + Number(fields[user + 1])) * 1000) / perSecond;
}
