// Mutation testing of the engine's budgets, tool waves and cancellation with claw-eval as the
// test (EVAL-7). Run from the repository root: `pnpm --filter @claw/eval mutate` (about a quarter
// of an hour on two cores, so not part of CI). What survives is in eval/MUTANTS.md.
//
// StrykerJS copies the repository into a temporary folder (never mutating the working tree),
// instruments the files below there with every mutant at once, builds claw-eval in the copy once
// (eval/mutation/tsup.config.mjs: the engine bundled from the copy's instrumented sources), then
// runs the whole scripted suite once per mutant with the mutant switched on by its environment
// variable. A mutant is killed when claw-eval exits non-zero (a case failed) or hangs.
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const engine = 'packages/engine/src';

// The copy is built before Stryker links node_modules into it: its build resolves third-party
// packages from this project (the build command inherits this process's environment).
process.env.CLAW_EVAL_MODULES_FROM = root;

/** The lines of an engine file, numbered from 1. */
function linesOf(file) {
  return readFileSync(path.join(root, engine, file), 'utf8').split('\n');
}

/** `file:n-n` for each line of the file that matches `pattern`. */
function linesMatching(file, pattern) {
  return linesOf(file).flatMap((line, index) =>
    pattern.test(line) ? [`${engine}/${file}:${index + 1}-${index + 1}`] : [],
  );
}

/**
 * `file:a-b`: from the first line matching `start` (after the first matching `after`, when
 * given) to the next line matching `end`. Found by text, not by number, so that edits elsewhere
 * in the file do not move the range.
 */
function linesBetween(file, { after, start, end }) {
  const lines = linesOf(file);
  const from = after === undefined ? 0 : lines.findIndex((line) => after.test(line));
  const first = lines.findIndex((line, index) => index >= from && start.test(line));
  const last = lines.findIndex((line, index) => index > first && end.test(line));
  if (from < 0 || first < 0 || last < 0) {
    throw new Error(`eval/stryker.config.mjs: the range to mutate is no longer in ${engine}/${file}`);
  }
  return `${engine}/${file}:${first + 1}-${last + 1}`;
}

export const mutate = [
  // Budgets (BUD-1 … BUD-5): the limits, what a run and its subagents share, and the clock of the
  // tool time budget (BUD-4).
  `${engine}/budgets.ts`,
  `${engine}/run-budget.ts`,
  linesBetween('limiter.ts', { start: /^export class ActivityClock /, end: /^}$/ }),
  ...linesMatching('act.ts', /stopSignal/),
  // Tool waves (ENG-2, ENG-7).
  `${engine}/tool-wave.ts`,
  // Cancellation (ENG-5): the calls of a wave canceled at each step, the model call stopped,
  // the run ending canceled with every appended call paired (EnsureToolObservations).
  `${engine}/history.ts`,
  linesBetween('observations.ts', { start: /^export const canceledObservationText/, end: /^}$/ }),
  ...linesMatching('tool-call.ts', /signal\.aborted/),
  ...linesMatching('model-call.ts', /throwIfAborted\(signal\)|signal\.aborted/),
  ...linesMatching('engine.ts', /throwIfAborted\(signal\)/),
  linesBetween('engine.ts', {
    after: /^ {2}private async execute\(/,
    start: /^ {4}} catch \(caught\) \{$/,
    end: /^ {4}const toolWallMs = /,
  }),
];

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate,
  testRunner: 'command',
  commandRunner: { command: 'node eval/dist/main.js --quiet --out eval-results' },
  buildCommand: 'tsup --config eval/mutation/tsup.config.mjs',
  coverageAnalysis: 'off',
  // Never in place: the working tree is shared; Stryker works in a copy in the system's temp
  // folder.
  inPlace: false,
  tempDirName: path.join(tmpdir(), 'claw-stryker'),
  cleanTempDir: 'always',
  // What the copy does not need (claw-eval bundles the packages from their sources).
  ignorePatterns: [
    '/.turbo', '/.changeset', '/apps', '/bench', '/examples', '/eval-results', '/test-artifacts',
    '/.vitest-results.json', 'dist', '*.tsbuildinfo',
  ],
  concurrency: 1,
  // A run of the suite takes a few seconds; a mutant that makes a run hang is stopped here (and
  // counted as detected) instead of at the harness's 30 s limit.
  timeoutMS: 10_000,
  timeoutFactor: 1.5,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'eval-results/mutation/mutation.html' },
  jsonReporter: { fileName: 'eval-results/mutation/mutation.json' },
  thresholds: { high: 90, low: 80, break: null },
};
