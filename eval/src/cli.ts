import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { isUserError, errorMessage } from '@claw/core';
import type { EvalCase } from './case.js';
import { gitState, machineInfo } from './environment.js';
import { EvalError } from './errors.js';
import {
  baselineFrom,
  defaultGateRepeat,
  gateWithRemeasure,
  readBaseline,
  remeasureRepeat,
  writeBaseline,
  type Baseline,
} from './gate.js';
import { commandHelp, exitCodes, helpText } from './help.js';
import { loadCases, selectCases } from './load-cases.js';
import { realSettings, recordCase, writeRecording } from './record.js';
import { buildResults, resultsJsonSchema, type Results } from './results.js';
import { compareResults, readResults, renderComparison, renderComparisonHtml } from './report/compare.js';
import { renderHtmlReport } from './report/html.js';
import { renderJUnit } from './report/junit.js';
import { renderSummary, renderTable } from './report/table.js';
import { runSuite, scoreRun, type CaseResult, type SuiteOptions } from './suite.js';

/** Where the app's input and output go (the process's, or a test's). */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  signal?: AbortSignal;
}

export interface CliOptions {
  version: string;
  /** The built-in cases. */
  casesDir: string;
  /** The committed baseline. */
  baselineFile: string;
}

const runOptions = {
  out: { type: 'string' },
  repeat: { type: 'string' },
  gate: { type: 'boolean' },
  baseline: { type: 'string' },
  filter: { type: 'string', multiple: true },
  tag: { type: 'string', multiple: true },
  cases: { type: 'string', multiple: true },
  keep: { type: 'boolean' },
  quiet: { type: 'boolean' },
  'run-timeout-ms': { type: 'string' },
  trials: { type: 'string' },
  model: { type: 'string' },
  html: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

type Values = ReturnType<typeof parse>['values'];

const commandNames = ['run', 'compare', 'baseline', 'real', 'record', 'list', 'schema', 'help'] as const;
type CommandName = (typeof commandNames)[number];

/** Flags each command takes (anything else is a usage error, said as such). */
const allowedFlags: Record<CommandName, ReadonlyArray<keyof typeof runOptions>> = {
  run: ['out', 'repeat', 'gate', 'baseline', 'filter', 'tag', 'cases', 'keep', 'quiet', 'run-timeout-ms'],
  compare: ['html'],
  baseline: ['out', 'repeat', 'baseline', 'cases', 'quiet', 'keep', 'run-timeout-ms'],
  real: ['out', 'trials', 'filter', 'tag', 'cases', 'model', 'quiet', 'keep', 'run-timeout-ms'],
  record: ['out', 'model', 'cases'],
  list: ['filter', 'tag', 'cases'],
  schema: [],
  help: [],
};

function usage(message: string, command?: string): EvalError {
  const hint = command === undefined || command === 'run' ? 'claw-eval --help' : `claw-eval help ${command}`;
  return new EvalError(`${message} (see \`${hint}\`)`, { code: 'usage', userError: true });
}

function parse(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      options: runOptions,
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw usage(errorMessage(error).replace(/\. To specify a positional argument.*$/, ''));
  }
}

/** A parsed command line. */
export interface Command {
  name: CommandName;
  positionals: string[];
  values: Values;
}

/**
 * Reads the command line: the command (default `run`), its positionals and its flags.
 *
 * @throws EvalError `usage` for an unknown command or flag, a flag the command does not take, or
 *   a missing or malformed argument.
 */
export function parseCommand(argv: readonly string[]): Command {
  const { values, positionals } = parse(argv);
  const [first, ...rest] = positionals;
  let name: CommandName = 'run';
  let args = positionals;
  if (first !== undefined) {
    if (!(commandNames as readonly string[]).includes(first)) {
      throw usage(`unknown command "${first}"; the commands are ${commandNames.join(', ')}`);
    }
    name = first as CommandName;
    args = rest;
  }
  if (values.help === true || values.version === true) return { name, positionals: args, values };
  for (const flag of Object.keys(values) as Array<keyof typeof runOptions>) {
    if (!allowedFlags[name].includes(flag)) {
      throw usage(`--${flag} is not an option of ${name === 'run' ? 'a run' : `\`claw-eval ${name}\``}`, name);
    }
  }
  const expected: Record<CommandName, [number, number, string]> = {
    run: [0, 0, ''],
    compare: [2, 2, 'two results files: claw-eval compare <a.json> <b.json>'],
    baseline: [1, 1, 'claw-eval baseline update'],
    real: [0, 0, ''],
    record: [1, 1, 'the id of one case: claw-eval record <case>'],
    list: [0, 0, ''],
    schema: [0, 0, ''],
    help: [0, 1, 'at most one command'],
  };
  const [min, max, what] = expected[name];
  if (args.length < min || args.length > max) {
    throw usage(
      args.length > max && max === 0
        ? `unexpected argument "${args[0]}"`
        : `${name} needs ${what}`,
      name,
    );
  }
  if (name === 'baseline' && args[0] !== 'update') {
    throw usage(`unknown baseline command "${args[0]}"; the one there is: claw-eval baseline update`, 'baseline');
  }
  if (name === 'real' && values.trials === undefined) {
    throw usage('real needs --trials <k>: how many times to run each case', 'real');
  }
  for (const [flag, text, min] of [['repeat', values.repeat, 1], ['trials', values.trials, 1]] as const) {
    if (text !== undefined && (!/^\d+$/.test(text) || Number(text) < min || Number(text) > 1000)) {
      throw usage(`--${flag} must be a whole number from ${min} to 1000, not "${text}"`, name);
    }
  }
  const runTimeout = values['run-timeout-ms'];
  if (runTimeout !== undefined && (!/^\d+$/.test(runTimeout) || Number(runTimeout) < 100 ||
    Number(runTimeout) > 86_400_000)) {
    throw usage(
      `--run-timeout-ms must be a whole number of milliseconds from 100 to 86400000, not "${runTimeout}"`,
      name,
    );
  }
  return { name, positionals: args, values };
}

/** Runs claw-eval with `argv` (without node and the script); returns the exit status. */
export async function main(
  argv: readonly string[],
  io: CliIo,
  options: CliOptions,
): Promise<number> {
  try {
    const command = parseCommand(argv);
    if (command.values.version === true) {
      io.stdout(`${options.version}\n`);
      return exitCodes.ok;
    }
    if (command.values.help === true || command.name === 'help') {
      const topic = command.name === 'help' ? command.positionals[0] : command.name;
      const text = topic === undefined || (topic === 'run' && command.name !== 'help')
        ? helpText(options.version)
        : commandHelp(topic);
      if (text === undefined) throw usage(`no help on "${topic}"; the commands are ${commandNames.join(', ')}`);
      io.stdout(`${text}\n`);
      return exitCodes.ok;
    }
    switch (command.name) {
      case 'run':
        return await runCommand(command, io, options, 'run');
      case 'baseline':
        return await runCommand(command, io, options, 'baseline');
      case 'real':
        return await runCommand(command, io, options, 'real');
      case 'compare':
        return await compareCommand(command, io);
      case 'record':
        return await recordCommand(command, io, options);
      case 'list':
        return await listCommand(command, io, options);
      case 'schema':
        io.stdout(`${JSON.stringify(resultsJsonSchema(), null, 2)}\n`);
        return exitCodes.ok;
    }
  } catch (error) {
    if (io.signal?.aborted === true) {
      io.stderr('claw-eval: interrupted; no results were written\n');
      return exitCodes.interrupted;
    }
    if (isUserError(error)) {
      io.stderr(`claw-eval: ${errorMessage(error)}\n`);
      return exitCodes.usage;
    }
    io.stderr(`claw-eval: internal error: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
    return exitCodes.infrastructure;
  }
}

async function loadAll(command: Command, io: CliIo, options: CliOptions): Promise<EvalCase[]> {
  const builtin = await loadCases(options.casesDir);
  const extra: EvalCase[] = [];
  for (const folder of command.values.cases ?? []) {
    const known = [...builtin, ...extra];
    extra.push(...(await loadCases(path.resolve(io.cwd, folder), { known })));
  }
  const all = [...builtin, ...extra];
  const ids = new Set<string>();
  for (const evalCase of all) {
    if (ids.has(evalCase.id)) {
      throw new EvalError(`two cases have the id "${evalCase.id}" (one in ${command.values.cases?.join(', ')}); ids must be unique`, {
        code: 'case_duplicate',
        userError: true,
      });
    }
    ids.add(evalCase.id);
  }
  return all;
}

function selected(command: Command, cases: readonly EvalCase[]): EvalCase[] {
  const filters = command.values.filter ?? [];
  const tags = command.values.tag ?? [];
  const chosen = selectCases(cases, { filters, tags });
  if (chosen.length === 0) {
    throw usage(
      `no case matches${filters.length > 0 ? ` --filter ${filters.join(', ')}` : ''}${tags.length > 0 ? ` --tag ${tags.join(', ')}` : ''}; ` +
      `the cases are: ${cases.map((evalCase) => evalCase.id).join(', ')}`,
      command.name,
    );
  }
  return chosen;
}

async function writeReports(results: Results, folder: string): Promise<string[]> {
  await mkdir(folder, { recursive: true });
  const files = {
    json: path.join(folder, 'results.json'),
    junit: path.join(folder, 'results.junit.xml'),
    html: path.join(folder, 'report.html'),
  };
  await writeFile(files.json, `${JSON.stringify(results, null, 2)}\n`);
  await writeFile(files.junit, renderJUnit(results));
  await writeFile(files.html, renderHtmlReport(results));
  return [files.json, files.junit, files.html];
}

function progress(io: CliIo, quiet: boolean) {
  return (result: CaseResult): void => {
    if (quiet) return;
    const seconds = result.samples.reduce((total, sample) => total + sample.run.wallMs, 0) / 1000;
    const label = result.verdict === 'pass' ? 'pass ' : result.verdict === 'fail' ? 'FAIL ' : 'ERROR';
    io.stderr(`  ${label} ${result.id} (${result.samples.length} run(s), ${seconds.toFixed(1)} s)\n`);
  };
}

async function runCommand(
  command: Command,
  io: CliIo,
  options: CliOptions,
  kind: 'run' | 'baseline' | 'real',
): Promise<number> {
  const { values } = command;
  const cases = await loadAll(command, io, options);
  let chosen = kind === 'baseline' ? cases : selected(command, cases);
  const settings = kind === 'real'
    ? await realSettings({
        env: io.env,
        workDir: io.cwd,
        ...(values.model === undefined ? {} : { model: values.model }),
      })
    : undefined;
  if (kind === 'real') {
    chosen = chosen.filter((evalCase) => evalCase.real !== false);
    if (chosen.length === 0) throw usage('none of the selected cases can run against a real model', 'real');
  }
  const baselineFile = path.resolve(io.cwd, values.baseline ?? options.baselineFile);
  const gate = values.gate === true;
  // A gate without a baseline fails before anything runs.
  let baseline: Baseline | undefined = gate ? await readBaseline(baselineFile) : undefined;
  if (baseline === undefined && kind === 'run') baseline = await readBaseline(baselineFile).catch(() => undefined);
  const repeat = Number(values.trials ?? values.repeat ?? (gate || kind === 'baseline' ? defaultGateRepeat : 1));
  const quiet = values.quiet === true;
  if (!quiet) {
    io.stderr(`claw-eval: ${chosen.length} case(s), ${repeat} ${kind === 'real' ? 'trial' : 'run'}(s) each${kind === 'real' ? ` against ${settings?.model}` : ''}\n`);
  }
  // The gate and a baseline judge latency against a calibration run before every run (PERF-6).
  const calibrate = kind !== 'real' && (gate || kind === 'baseline');
  const suiteOptions: SuiteOptions = {
    repeat,
    mode: kind === 'real' ? 'real' : 'scripted',
    onCase: progress(io, quiet),
    run: {
      ...(settings === undefined ? {} : { settings }),
      ...(values.keep === true ? { keepFolders: true } : {}),
      ...(values['run-timeout-ms'] === undefined ? {} : { timeoutMs: Number(values['run-timeout-ms']) }),
    },
    ...(calibrate ? { calibration: {} } : {}),
    ...(io.signal === undefined ? {} : { signal: io.signal }),
  };
  const suite = await runSuite(chosen, suiteOptions);
  const context = {
    version: options.version,
    git: await repositoryState(io.cwd, options.casesDir),
    machine: machineInfo(),
    filters: values.filter ?? [],
    tags: values.tag ?? [],
    ...(settings === undefined ? {} : { model: settings.model }),
  };
  let results = buildResults(suite, context);
  if (gate && baseline !== undefined) {
    const isSelection = (values.filter ?? []).length > 0 || (values.tag ?? []).length > 0;
    const verdict = await gateWithRemeasure(results, baseline, {
      baselineFile,
      selected: isSelection,
      remeasure: async (ids) => {
        if (!quiet) {
          io.stderr(`claw-eval: re-measuring the latency of ${ids.join(', ')} (over the gate's limit once)\n`);
        }
        const again = chosen.filter((evalCase) => ids.includes(evalCase.id));
        const twice = { ...suiteOptions, repeat: remeasureRepeat(repeat) };
        const remeasured = await runSuite(again, twice);
        return buildResults(remeasured, context);
      },
    });
    results = buildResults(suite, context, verdict);
  }
  const out = path.resolve(io.cwd, values.out ?? 'eval-results');
  const files = await writeReports(results, out);
  io.stdout(`${renderSummary(results, { ...(baseline === undefined ? {} : { baseline }), files })}\n`);
  if (kind === 'baseline') {
    let written: Baseline;
    try {
      // The thresholds the baseline was reviewed with stay.
      const previous = baseline ?? (await readBaseline(baselineFile).catch(() => undefined));
      written = baselineFrom(results, previous?.thresholds);
    } catch (error) {
      io.stderr(`claw-eval: ${errorMessage(error)}\n`);
      return exitCodes.failed;
    }
    await writeBaseline(baselineFile, written);
    io.stdout(`wrote the baseline ${baselineFile} (${Object.keys(written.cases).length} cases, ${repeat} runs each): review its diff before committing it\n`);
    return exitCodes.ok;
  }
  if (results.summary.failed > 0 || results.gate?.passed === false) return exitCodes.failed;
  if (results.summary.errors > 0) return exitCodes.infrastructure;
  return exitCodes.ok;
}

/** The git state of the working folder, else of the folder claw-eval's cases are in. */
async function repositoryState(cwd: string, casesDir: string): Promise<Results['git']> {
  const state = await gitState(cwd);
  return state.sha === null ? gitState(casesDir) : state;
}

async function compareCommand(command: Command, io: CliIo): Promise<number> {
  const [first, second] = command.positionals.map((file) => path.resolve(io.cwd, file));
  if (first === undefined || second === undefined) throw usage('compare needs two results files', 'compare');
  const comparison = compareResults(await readResults(first), await readResults(second), {
    a: first,
    b: second,
  });
  io.stdout(`${renderComparison(comparison)}\n`);
  if (command.values.html !== undefined) {
    const file = path.resolve(io.cwd, command.values.html);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, renderComparisonHtml(comparison));
    io.stdout(`wrote ${file}\n`);
  }
  return exitCodes.ok;
}

async function recordCommand(command: Command, io: CliIo, options: CliOptions): Promise<number> {
  const id = command.positionals[0] ?? '';
  const cases = await loadAll(command, io, options);
  const evalCase = cases.find((candidate) => candidate.id === id);
  if (evalCase === undefined) {
    throw usage(`no case "${id}"; the cases are: ${cases.map((candidate) => candidate.id).join(', ')}`, 'record');
  }
  const settings = await realSettings({
    env: io.env,
    workDir: io.cwd,
    ...(command.values.model === undefined ? {} : { model: command.values.model }),
  });
  io.stderr(`claw-eval: recording ${settings.model} on ${evalCase.id}\n`);
  const { recording, run } = await recordCase(evalCase, {
    settings,
    env: io.env,
    ...(io.signal === undefined ? {} : { signal: io.signal }),
  });
  const out = command.values.out;
  const file = await writeRecording(
    recording,
    out === undefined
      ? { folder: path.resolve(io.cwd, 'eval-results') }
      : { file: path.resolve(io.cwd, out) },
  );
  const scored = scoreRun(evalCase, run, { relaxed: true });
  io.stdout(
    `recorded ${recording.rounds.length} round(s) of ${recording.model} on ${evalCase.id} (the run ended ${run.status}; relaxed verdict: ${scored.verdict})\n` +
    `wrote ${file}\n` +
    `To replay it, put it in eval/cases/ (or a folder given with --cases): it runs as the case "${evalCase.id}-recorded".\n`,
  );
  return exitCodes.ok;
}

async function listCommand(command: Command, io: CliIo, options: CliOptions): Promise<number> {
  const cases = selected(command, await loadAll(command, io, options));
  const rows = cases.map((evalCase) => [
    evalCase.id,
    evalCase.tags.join(','),
    evalCase.real === false ? 'scripted only' : 'also real',
    evalCase.title,
  ]);
  io.stdout(`${renderTable(['case', 'tags', 'modes', 'what it proves'], rows)}\n${cases.length} case(s)\n`);
  return exitCodes.ok;
}
