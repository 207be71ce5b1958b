#!/usr/bin/env node
// The server app. Listeners and the web console arrive with the server issue; until then this
// entry point only answers --version and --help, and says so instead of pretending to work.
import packageJson from '../package.json' with { type: 'json' };

const usage = `claw-server ${packageJson.version} — agent sessions over TCP and WebSocket

Usage:
  claw-server --version     print the version
  claw-server --help        print this help

The TCP and WebSocket listeners and the web console are not built yet.`;

const [first] = process.argv.slice(2);
if (first === '--version' || first === '-v') {
  console.log(packageJson.version);
} else if (first === '--help' || first === '-h') {
  console.log(usage);
} else {
  console.error(`${usage}\n\nclaw-server: nothing to run yet; see --help.`);
  process.exitCode = 2;
}
