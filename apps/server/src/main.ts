#!/usr/bin/env node
// The `claw-server` executable: the app edge. Only here does the server touch the process (argv,
// env, stdio, signals, exit); everything else gets them passed in.
import packageJson from '../package.json' with { type: 'json' };
import { runServerCli } from './cli.js';

// The first SIGTERM/SIGINT stops the server in order (CH-7); a second one cancels tasks at once.
const now = new AbortController();
let stopRequested = false;
let requestStop: (signal: string) => void = () => undefined;
const stop = new Promise<string>((resolve) => {
  requestStop = resolve;
});
const onSignal = (signal: NodeJS.Signals): void => {
  if (stopRequested) {
    now.abort(new Error(`${signal} again`));
    return;
  }
  stopRequested = true;
  requestStop(signal);
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

const write = (stream: NodeJS.WriteStream) => (line: string): void => {
  stream.write(`${line}\n`);
};

const status = await runServerCli({
  argv: process.argv.slice(2),
  version: packageJson.version,
  env: process.env,
  cwd: process.cwd(),
  out: write(process.stdout),
  err: write(process.stderr),
  stopRequested: stop,
  stopNow: now.signal,
});
await Promise.all([flush(process.stdout), flush(process.stderr)]);
process.exit(status);

function flush(stream: NodeJS.WriteStream): Promise<void> {
  if (stream.destroyed || !stream.writable) return Promise.resolve();
  return new Promise<void>((resolve) => {
    stream.write('', () => resolve());
  });
}
