import { defaultGateRepeat, defaultThresholds } from './gate.js';

/** Exit statuses of claw-eval. */
export const exitCodes = {
  ok: 0,
  /** A case failed, or the regression gate tripped. */
  failed: 1,
  /** A usage or configuration error (nothing was run, or nothing more). */
  usage: 2,
  /** Only infrastructure errors (the harness failed; never counted as a pass). */
  infrastructure: 3,
  /** Interrupted (Ctrl-C, SIGTERM). */
  interrupted: 130,
} as const;

const t = defaultThresholds;

const overview = (version: string) => `claw-eval ${version} — scripted tasks replayed through the real claw engine, scored

Usage:
  claw-eval [options]                   run the scripted cases (CI runs this with --gate)
  claw-eval compare <a.json> <b.json>   compare two runs: verdict flips, trajectories, metrics
  claw-eval baseline update             run the cases and rewrite the reviewed baseline
  claw-eval real --trials <k>           the same cases against the configured model
  claw-eval record <case>               record the configured model on a case as a script
  claw-eval list                        the cases, their tags and what each proves
  claw-eval schema                      print the JSON Schema of results.json
  claw-eval help <command>              more about a command
  claw-eval --version | --help

Options of a run:
  --out <dir>            where results.json, results.junit.xml and report.html go
                         (default: ./eval-results)
  --repeat <n>           runs of each case; p50/p95 are taken over them (default 1; with
                         --gate and for a baseline ${defaultGateRepeat})
  --gate                 also compare with the baseline: fail on any case that does not pass,
                         on call or token counts that differ from it, and on p50/p95 overhead
                         or ttfb beyond the baseline's, judged against a calibration measured
                         in the same run (a breach is measured once more before it fails)
  --baseline <file>      the baseline to gate against (default: eval/baselines/scripted.json)
  --filter <pattern>     only cases whose id contains it, or matches it with * (repeatable)
  --tag <tag>            only cases with this tag (repeatable: all of them)
  --cases <dir>          also load the cases in this folder (.js/.mjs modules with a default
                         defineCase export, and recorded sessions, *.recorded.json)
  --keep                 keep each run's temporary workspace (its path is in the report)
  --quiet                no progress lines, only the summary
  --run-timeout-ms <n>   how long one run may take before claw-eval cancels it and fails the
                         case (default 30000; 600000 for real); a run that does not stop
                         within 5 s of that is an infrastructure error and the rest go on

What a run does: each case gets a fresh temporary workspace and a folder beside it that nothing
may change; the runtime is built by the same RuntimeFactory as claw's, with the case's script
as the model, the case's tools, budgets and approval answers; spans go to memory under an "Eval"
span. Scorers: script (no extra model call, no unused round), state (files, outcome, reported
reasoning, nothing outside changed), trajectory, boundary (denied calls changed nothing, the
audit says deny), pairing (every call exactly one Observation), budget (stop reason, exact
model calls, summary calls included, nothing after the stop, cost), trace (Eval → Agent.Run →
Thinking/Compact/Action, one ttfb_ms per model call, token sums), requests (the system message
claw sent: its texts, their order, byte-identical in every request; reasoning never sent back;
what each round's request must hold), compaction (compactions told alike by the reporter, the
result and the events; stored; the next request is the compacted view; counts the case expects).
Canary cases are built to fail one scorer each: they pass only when it fails.

Files written to --out:
  results.json           versioned (schemaVersion 2; \`claw-eval schema\` prints the JSON Schema):
                         git commit, machine, every case's runs, scorer results, trajectories,
                         metrics, spans, transcripts and workspace diffs
  results.junit.xml      one testcase per case (and one for the gate) for CI test reports
  report.html            one self-contained page, no network: open it in any browser
                         (failures first; transcript, span waterfall with ttfb marks,
                         workspace diff, each scorer's reason)

Exit status: 0 everything passed; 1 a case failed or the gate tripped; 2 usage or
configuration error; 3 infrastructure errors only (the harness failed: never a pass);
130 interrupted.

Environment (real and record only): OPENAI_API_KEY (required), OPENAI_BASE_URL, OPENAI_MODEL,
as claw reads them. The scripted suite needs no key and no network.`;

const commands: Record<string, string> = {
  run: `claw-eval [--out <dir>] [--repeat <n>] [--gate] [--baseline <file>] [--filter <pattern>]...
          [--tag <tag>]... [--cases <dir>] [--keep] [--quiet] [--run-timeout-ms <n>]

Runs the scripted cases through the real engine and scores them; prints a table (case,
verdict, model/tool calls, ttfb p50/p95, overhead p50/p95, tokens, change against the
baseline) and writes results.json, results.junit.xml and report.html to --out.

Metrics come off the trace: ttfb_ms of each model call (Thinking span), tool wall time per
wave (Action span), tokens and tool wall time of the run (Agent.Run span), and the engine's
own overhead: the Run span's time minus the scripted model and tool waits.

--gate compares with the baseline (eval/baselines/scripted.json unless --baseline):
  - every case must pass; an infrastructure error is its own verdict, never a pass
  - model calls, tool calls, prompt and completion tokens must equal the baseline's
  - latency is judged against a calibration measured in the same run (PERF-6): a bare agent
    loop without claw (a scripted model streamed, files written, a journal fsynced) runs
    right before every run of every case. Overhead p50/p95, as a multiple of the yardstick
    (the calibration's mean overhead over the runs around the case), must stay within the
    baseline's multiple × ${t.ratio}, + ${t.overheadFloorMs} ms; ttfb p50/p95 (mostly the script's own waits,
    which no machine stretches) within the baseline's ms × ${t.ratio}, + ${t.ttfbFloorMs} ms. The p95
    limits also allow for the machine's noise in this run, the calibration's max − p50 (for
    overhead, times the case's baseline multiple when above 1: a longer run meets more
    stalls), and the ttfb p50 limit its p95 − p50; the overhead p50 gets none (a median
    shrugs off stalls; room there would hide a regression on a busy machine). The baseline
    file holds the thresholds it was reviewed with
  - a case whose latency breaches this runs (calibrated, twice as many times) once more, and
    a figure fails only when it is over its limit the second time too
  - the verdict prints the machine's noise (the calibration's p50/p95/max, and how much
    slower than the baseline's it ran) and each case that was re-measured
  - a case not in the baseline, or a baseline case that did not run, trips it
  - with --filter/--tag only the selected cases are compared
With --gate, each case runs ${defaultGateRepeat} times unless --repeat says otherwise.`,
  compare: `claw-eval compare <a.json> <b.json> [--html <file>]

Compares two results.json files case by case and prints a table: verdict flips (A → B), model
and tool calls, tokens, ttfb and overhead p50/p95 with their change (B − A); then each flip
and each case whose trajectory (the tools it called, in order) changed. --html also writes the
comparison as a self-contained HTML page. Both files must have the same schema version.
Exit status 0 (2 when a file cannot be read).`,
  baseline: `claw-eval baseline update [--repeat <n>] [--baseline <file>] [--out <dir>] [--cases <dir>]
          [--run-timeout-ms <n>]

Runs every case (${defaultGateRepeat} times unless --repeat), each run after a run of the
calibration, and rewrites the baseline (default eval/baselines/scripted.json) with each case's
exact call and token counts, its p50/p95 ttfb, and its p50/p95 overhead both in ms (to read)
and as a multiple of the calibration's yardstick next to it (what the gate compares), with the
calibration's own figures, keeping the thresholds. Take it on a quiet machine: the gate holds
every later run to these figures. Refuses when a case does not pass or its
counts differ between runs. Review the diff of the file before committing it: the gate trusts
it. The run's reports go to --out as usual.`,
  real: `claw-eval real --trials <k> [--filter <pattern>]... [--tag <tag>]... [--model <name>] [--out <dir>]
          [--run-timeout-ms <n>]

Runs the cases that can run against a real model (not the ones with scripted faults, cancel
points, stored sessions or canaries) against the configured model, k times each. Trajectory
checks are relaxed (the expected tools must be called; order and counts may differ) and nothing
is compared with the script. Reports pass@1 (share of trials that passed) and pass^k (chance
that k trials all pass, as tau-bench counts it), per case and overall. Needs OPENAI_API_KEY
(and OPENAI_BASE_URL, OPENAI_MODEL as claw reads them). Never run in CI: it costs money and its
results vary. Exit status 1 when a case failed any trial.`,
  record: `claw-eval record <case> [--out <file>] [--model <name>]

Runs one case against the configured model and writes what the model answered as a script:
<case>.recorded.json in ./eval-results unless --out names the file. Call ids are left to the
harness, the run's temporary paths become {{workspace}} / {{outside}}, secrets (the API key,
secret-looking environment values, sk-… and Bearer tokens) are redacted, and the timing (time
to first token, gaps between stream events) is kept. Put the file in eval/cases/ (or a folder
given with --cases) and it replays as the case "<case>-recorded" with relaxed trajectory checks.
Needs OPENAI_API_KEY like real mode; never run in CI.`,
  list: `claw-eval list [--filter <pattern>]... [--tag <tag>]... [--cases <dir>]

Prints each case's id, tags and what it proves.`,
  schema: `claw-eval schema

Prints the JSON Schema (draft 2020-12) of results.json, the same as eval/schema/results.schema.json.`,
};

/** The text of `claw-eval --help`. */
export function helpText(version: string): string {
  return overview(version);
}

/** The help of one command, or undefined for an unknown one. */
export function commandHelp(command: string): string | undefined {
  return commands[command];
}

export const helpTopics = Object.keys(commands);
