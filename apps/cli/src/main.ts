#!/usr/bin/env node
// The `claw` executable: the app edge. Only here does claw touch the process (argv, env, stdio,
// signals, exit); everything else gets them passed in (see app.ts).
import { fstatSync } from 'node:fs';
import { runCli } from './cli.js';
import { exitStatus, statusForSignal } from './exit-status.js';
import { Interrupts } from './interrupts.js';

// Before anything is running, a signal simply ends the process.
const interrupts = new Interrupts((signal) => process.exit(statusForSignal(signal)));
process.on('SIGINT', () => interrupts.fire('SIGINT'));
process.on('SIGTERM', () => interrupts.fire('SIGTERM'));

let status: number;
try {
  status = await runCli({
    argv: process.argv.slice(2),
    env: process.env,
    cwd: process.cwd(),
    stdin: process.stdin,
    stdinSource: stdinSource(),
    stdout: process.stdout,
    stderr: process.stderr,
    interrupts,
    tuneJit: true,
  });
} catch (error) {
  process.stderr.write(`claw: unexpected error: ${String(error)}\n`);
  status = exitStatus.failed;
}
// Let what was written reach the pipe or terminal before exiting.
await Promise.all([flush(process.stdout), flush(process.stderr)]);
process.exit(status);

/** Whether stdin is a pipe or a file, whose text `claw -p` takes with the prompt. */
function stdinSource(): 'pipe' | 'file' | 'other' {
  try {
    const stat = fstatSync(0);
    if (stat.isFIFO()) return 'pipe';
    return stat.isFile() ? 'file' : 'other';
  } catch {
    return 'other';
  }
}

function flush(stream: NodeJS.WriteStream): Promise<void> {
  if (stream.destroyed || !stream.writable) return Promise.resolve();
  return new Promise<void>((resolve) => {
    stream.write('', () => resolve());
  });
}
