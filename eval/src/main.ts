#!/usr/bin/env node
// claw-eval: the built app's entry point. The cases are built next to it (dist/cases/), the
// committed baseline sits in eval/baselines/.
import { fileURLToPath } from 'node:url';
import packageJson from '../package.json' with { type: 'json' };
import { main } from './cli.js';

const controller = new AbortController();
let interrupted = false;
const onSignal = (): void => {
  if (interrupted) process.exit(130);
  interrupted = true;
  controller.abort(new Error('claw-eval was interrupted'));
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

const status = await main(
  process.argv.slice(2),
  {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    cwd: process.cwd(),
    signal: controller.signal,
  },
  {
    version: packageJson.version,
    casesDir: fileURLToPath(new URL('./cases/', import.meta.url)),
    baselineFile: fileURLToPath(new URL('../baselines/scripted.json', import.meta.url)),
  },
);
process.off('SIGINT', onSignal);
process.off('SIGTERM', onSignal);
process.exitCode = status;
