// Vitest global setup: builds the apps (`claw`, `claw-server`, the web console, `claw-eval`), the
// examples and every package they import before the tests run, because their end-to-end tests
// spawn the built apps (dist/main.js) and examples, which load the packages' builds, not their
// sources, the server serves the console's build, and the packed-package test packs them all.
// turbo caches, so this is quick when nothing changed.
import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const turboArgs = [
  'turbo',
  'run',
  'build',
  '--filter=@claw/cli...',
  '--filter=@claw/server...',
  '--filter=@claw/web...',
  '--filter=@claw/eval...',
  '--filter=@claw/examples...',
  '--output-logs=errors-only',
];

export async function setup(): Promise<void> {
  const [command, args] = buildCommand();
  const started = Date.now();
  const result = await run(command, args);
  if (result.code !== 0) {
    const output = `${result.stdout}\n${result.stderr}`.trim().split('\n').slice(-40).join('\n');
    throw new Error(
      `Building the claw apps for the end-to-end tests failed (exit ${result.code}).\n` +
      `Command: ${[command, ...args].join(' ')} (in ${root})\n${output}\n` +
      'Fix the build (run the command above to see every error), then run the tests again.',
    );
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`global setup: built the apps and their packages in ${seconds}s`);
}

/**
 * `npx turbo …`; turbo needs the workspace's package manager (pnpm) on PATH, which it is when the
 * tests run through pnpm. When it is not (e.g. `npx vitest`), run turbo through the pinned pnpm.
 */
function buildCommand(): [string, string[]] {
  const pnpmOnPath = spawnSync('pnpm', ['--version'], { cwd: root, stdio: 'ignore' }).status === 0;
  if (pnpmOnPath) return ['npx', turboArgs];
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    packageManager?: string;
  };
  const pnpm = manifest.packageManager?.startsWith('pnpm@') === true
    ? manifest.packageManager.split('+')[0] ?? 'pnpm'
    : 'pnpm';
  return ['npx', ['-y', pnpm, 'exec', ...turboArgs]];
}

function run(
  command: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: root, maxBuffer: 64 * 1024 * 1024, env: process.env },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolve({ code, stdout, stderr: error !== null && stderr === '' ? error.message : stderr });
      },
    );
  });
}
