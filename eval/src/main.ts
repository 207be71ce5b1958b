#!/usr/bin/env node
// The evaluation app. Its cases arrive with the eval issue; until then this
// entry point only answers --version and --help, and says so instead of pretending to work.
import packageJson from '../package.json' with { type: 'json' };

const usage = `claw-eval ${packageJson.version} — scripted evaluation of the claw engine

Usage:
  claw-eval --version     print the version
  claw-eval --help        print this help

The evaluation cases are not built yet.`;

const [first] = process.argv.slice(2);
if (first === '--version' || first === '-v') {
  console.log(packageJson.version);
} else if (first === '--help' || first === '-h') {
  console.log(usage);
} else {
  console.error(`${usage}\n\nclaw-eval: nothing to run yet; see --help.`);
  process.exitCode = 2;
}
