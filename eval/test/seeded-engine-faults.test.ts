import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { build, type Options } from 'tsup';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evalRoot, removeTempFolders, tempFolder } from './helpers.js';

// EVAL-7: faults seeded into the engine itself (not through the harness's fault options) must
// each make claw-eval fail. claw-eval is built as it ships (eval/tsup.config.ts) into a temporary
// folder, with the engine's sources changed as it is bundled: every fault is compiled in, off
// unless CLAW_EVAL_SEEDED_FAULT names it (one build, as StrykerJS switches its mutants). The
// working tree is never changed. If the engine's code moves so that a fault's text is no longer
// found, the build fails and says which fault to update.

interface SeededFault {
  id: string;
  /** The engine's source file (under packages/engine/src) the fault is in. */
  file: string;
  /** Code found exactly once in that file, where the fault is (default: `original`). */
  anchor?: string;
  /** The expression (the first of its kind in `anchor`) that the fault changes... */
  original: string;
  /** ...and what it becomes. */
  faulty: string;
  /** The cases that must fail because of it (others may fail too). */
  caughtBy: string[];
}

const faults: SeededFault[] = [
  {
    id: 'budget-off-by-one',
    file: 'budgets.ts',
    original: 'used >= limit',
    faulty: 'used > limit',
    caughtBy: ['run-tokens-at-limit', 'session-tokens-at-limit', 'run-cost-at-limit', 'session-cost-at-limit'],
  },
  {
    id: 'spawn-off-by-one',
    file: 'run-budget.ts',
    original: 'this.spawns >= limit',
    faulty: 'this.spawns > limit',
    caughtBy: ['subagents-at-limit'],
  },
  {
    id: 'wave-not-waiting',
    file: 'tool-wave.ts',
    original: 'Promise.all(running)',
    faulty: 'Promise.race(running)',
    caughtBy: ['parallel-wave', 'tool-time-accumulates'],
  },
  {
    // A tool stopped by the cancel is answered with its abort error instead of "tool call canceled".
    id: 'cancel-not-paired',
    file: 'tool-call.ts',
    anchor: 'if (signal.aborted) return { observation: canceledObservation(call.id), outcome: \'canceled\' };\n' +
      '    // The run\'s reporter failed inside the tool',
    original: 'signal.aborted',
    faulty: 'false',
    caughtBy: ['cancel-pairing', 'tool-time-budget'],
  },
];

const switchName = 'CLAW_EVAL_SEEDED_FAULT';
const engineSources = path.resolve(evalRoot, '..', 'packages', 'engine', 'src');

type EsbuildPlugin = NonNullable<Options['esbuildPlugins']>[number];

/** Compiles every fault into the engine's files as they are loaded, each behind its switch. */
const seedFaults: EsbuildPlugin = {
  name: 'seeded-engine-faults',
  setup(setup) {
    const files = [...new Set(faults.map((fault) => fault.file))];
    const filter = new RegExp(`[\\\\/]packages[\\\\/]engine[\\\\/]src[\\\\/](?:${files.map((file) => file.replace('.', '\\.')).join('|')})$`);
    setup.onLoad({ filter }, async (args) => {
      let code = await readFile(args.path, 'utf8');
      for (const fault of faults.filter((candidate) => path.join(engineSources, candidate.file) === args.path)) {
        const anchor = fault.anchor ?? fault.original;
        const found = code.split(anchor).length - 1;
        if (found !== 1 || !anchor.includes(fault.original)) {
          throw new Error(
            `the seeded fault "${fault.id}" looks for \`${anchor}\` in packages/engine/src/${fault.file} ` +
            `and found it ${found} time(s): update the fault to the engine's current code`,
          );
        }
        const switched = `(process.env.${switchName} === ${JSON.stringify(fault.id)} ? (${fault.faulty}) : (${fault.original}))`;
        code = code.replace(anchor, () => anchor.replace(fault.original, () => switched));
      }
      return { contents: code, loader: 'ts' };
    });
  },
};

interface EvalOutcome {
  exitCode: number;
  output: string;
  failed: string[];
}

let built: string;

/** Runs the whole scripted suite with the built claw-eval, with `fault` switched on. */
async function runEval(fault?: string): Promise<EvalOutcome> {
  const out = await tempFolder('claw-eval-faults-out-');
  const env = { ...process.env, [switchName]: fault ?? '' };
  const { exitCode, output } = await new Promise<{ exitCode: number; output: string }>((resolve) => {
    // A fault that hangs a run (a wave waiting on no call) fails its case after 10 s, not 30.
    const args = [path.join(built, 'main.js'), '--quiet', '--out', out, '--run-timeout-ms', '10000'];
    execFile(process.execPath, args, { env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ exitCode: code, output: `${stdout}${stderr}` });
    });
  });
  const results = JSON.parse(await readFile(path.join(out, 'results.json'), 'utf8')) as {
    cases: Array<{ id: string; verdict: string }>;
  };
  const failed = results.cases.filter((result) => result.verdict !== 'pass').map((result) => result.id);
  return { exitCode, output, failed };
}

describe('faults seeded into the engine', () => {
  beforeAll(async () => {
    const folder = await tempFolder('claw-eval-faults-');
    built = path.join(folder, 'dist');
    // claw-eval's own build options (by path: the config reaches outside eval's TypeScript project).
    const config = path.join(evalRoot, 'tsup.config.ts');
    const { default: shipped } = (await import(config)) as { default: Options };
    const { entry, esbuildPlugins, ...options } = shipped;
    await build({
      ...options,
      config: false,
      silent: true,
      entry: Object.fromEntries(
        Object.entries(entry as Record<string, string>).map(([name, file]) => [name, path.join(evalRoot, file)]),
      ),
      outDir: built,
      esbuildPlugins: [...(esbuildPlugins ?? []), seedFaults],
    });
  }, 60_000);

  afterAll(removeTempFolders);

  it('the build with every fault switched off passes the whole suite', async () => {
    const outcome = await runEval();
    expect(outcome.failed).toEqual([]);
    expect(outcome.exitCode, outcome.output).toBe(0);
  }, 60_000);

  it.each(faults)('claw-eval fails with the fault $id', async (fault) => {
    const outcome = await runEval(fault.id);
    expect(outcome.exitCode, outcome.output).toBe(1);
    expect(outcome.failed).toEqual(expect.arrayContaining(fault.caughtBy));
  }, 60_000);
});
