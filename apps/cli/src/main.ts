#!/usr/bin/env node
// The terminal app. The REPL, one-shot mode and demo arrive with the CLI issue; until then this
// entry point only answers --version and --help, and says so instead of pretending to work.
import packageJson from '../package.json' with { type: 'json' };

const usage = `claw ${packageJson.version} — a coding agent in your terminal

Usage:
  claw --version     print the version
  claw --help        print this help

The interactive REPL, one-shot mode (-p) and "claw demo" are not built yet.`;

const [first] = process.argv.slice(2);
if (first === '--version' || first === '-v') {
  console.log(packageJson.version);
} else if (first === '--help' || first === '-h') {
  console.log(usage);
} else {
  console.error(`${usage}\n\nclaw: nothing to run yet; see --help.`);
  process.exitCode = 2;
}
