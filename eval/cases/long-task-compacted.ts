import { defineCase } from '../src/case.js';
import { withPromptTokens, type Round } from '../src/script.js';

// CMP-1, CMP-2, CMP-4, CMP-6, CMP-7: a 60-turn task on a 16k-token window. The model reads spec.md
// and notes.md first, then writes 56 modules of ~2,000 characters each (the content is in its own
// tool calls, which pruning cannot shrink; the results are short) and at the end config.json,
// whose values only spec.md gives. Each write adds 495 tokens to the request (claw's estimate,
// 4 characters a token), so claw compacts when a request would pass 80 % of the window (12,800
// tokens): before turn 26 (the request would be ~13,020 tokens; turn 25's was ~12,530), then
// before turns 40 and 54 (~13,000; ~12,510 before), each time down to ~6,070 tokens: the task,
// the notes and the latest ~30 % of the window. The margins (~200 tokens either side; the case
// still passes with 600 more characters of instructions in the system prompt) absorb a system
// prompt a little longer or shorter on another machine (its paths, platform, date).
//
// Each compaction makes one summary call, which the script answers with notes that carry what
// spec.md and notes.md say. The summary rounds check the request they answer (expectRequest), and
// a summary call that reaches a round not written for one fails the case, so the script and the
// calls stay in step; the last turns' requests must hold the task verbatim first, then the notes.
// 63 model calls: 60 turns and 3 summary calls.
// A round's prompt tokens are what the server counted of its request (claw's own estimate of
// it, less ~100 for the tool schemas, to the ten below): 494,440 prompt tokens in all.
const prompt =
  'Write the step modules src/step01.ts to src/step56.ts as spec.md and notes.md describe, one ' +
  'per turn, then write config.json with the settings spec.md gives.';

const spec = [
  '# Ledger service: spec',
  '',
  '- The service listens on port 8417.',
  '- Failed writes are retried 3 times, 250 ms apart.',
  '- Logs go to logs/ledger.log.',
  '- Every module in src/ exports one step function, stepNN, and nothing else.',
  '',
].join('\n');

const notes = [
  '# Notes from the last review',
  '',
  '- Keep each module under 80 lines.',
  '- config.json is read at start-up; its keys are port, retries and logFile.',
  '- A step takes the entries of the previous step and returns the ones it keeps; it never',
  '  changes an entry in place, so that a failed step can be run again on the same input.',
  '- Amounts are whole cents. A step that compares amounts compares cents, never floats, and',
  '  names its thresholds after what they mean rather than after their value.',
  '- Each step is tested on its own with a fixture of a few entries; the fixtures live next to',
  '  the tests, not in src/.',
  '- The pipeline runs the steps in the order of their numbers; a step never calls another.',
  '- Keep the exports to the one step function: the loader takes the first export it finds.',
  '- Log through the logger the service passes in; never write to the console.',
  '- Prefer a plain loop where a chain of array methods would walk the entries more than twice.',
  '- Name a module after its number only; what a step does goes in its first comment line.',
  '- Keep the thresholds of a step in the order they are checked, smallest first.',
  '- A step that drops every entry is a bug: the pipeline stops and says which step it was.',
  '- No step reads the clock: the entries carry their own dates.',
  '',
].join('\n');

/** What the notes must carry for the end of the task: only spec.md and notes.md say it. */
const facts =
  'spec.md: the service listens on port 8417; failed writes are retried 3 times, 250 ms apart; ' +
  'logs go to logs/ledger.log. notes.md: config.json keys are port, retries and logFile.';

const config = '{ "port": 8417, "retries": 3, "logFile": "logs/ledger.log" }\n';

const modules = 56;
/** The turns (1-based) before which claw compacts, worked out from the sizes above. */
const SUMMARY_BEFORE: readonly number[] = [26, 40, 54];

/** The prompt tokens of each model call, in call order (summary calls included). */
const PROMPT_TOKENS: readonly number[] = [
  1190, 1260, 1600, 2080, 2570, 3060, 3550, 4040, 4520, 5010,
  5500, 5990, 6480, 6980, 7470, 7970, 8460, 8960, 9450, 9950,
  10_440, 10_940, 11_430, 11_930, 12_420, 7470, 5970, 6460, 6960, 7450,
  7950, 8440, 8940, 9430, 9930, 10_420, 10_920, 11_410, 11_910, 12_400,
  7410, 5970, 6460, 6960, 7450, 7950, 8440, 8940, 9430, 9930,
  10_420, 10_920, 11_410, 11_910, 12_400, 7410, 5970, 6460, 6960, 7450,
  7950, 8440, 8490,
];

const two = (n: number): string => String(n).padStart(2, '0');

/** A module of ~2,000 characters, different in every file. */
function moduleSource(n: number): string {
  const lines = [`// Step ${n} of the ledger pipeline.`, `export function step${two(n)}(entries) {`];
  for (let line = 1; line <= 26; line += 1) {
    lines.push(`  const over${line} = entries.filter((entry) => entry.amount > ${n * 1000 + line * 7});`);
  }
  lines.push(`  return [${Array.from({ length: 26 }, (_, line) => `over${line + 1}`).slice(0, 3).join(', ')}].flat();`, '}', '');
  return lines.join('\n');
}

/** The notes the summary call before turn `turn` writes. */
function summary(turn: number): string {
  const written = turn - 3;
  return [
    `Goal: ${prompt}`,
    `Done so far: read spec.md and notes.md; wrote src/step01.ts to src/step${two(written)}.ts, one per turn, each with its one export.`,
    'Decisions: each step filters the entries by amount thresholds (in cents, smallest first) and returns the entries it keeps; no step changes an entry in place, reads the clock or calls another step.',
    `Files: ${facts} notes.md also says: modules under 80 lines, amounts in whole cents, one export per module, log through the logger the service passes in.`,
    'Verified: every write_file call succeeded; no step module was written twice, and none was read back.',
    'Errors: none.',
    `Remaining: src/step${two(written + 1)}.ts to src/step${two(modules)}.ts, then config.json with port, retries and logFile from spec.md.`,
  ].join('\n');
}

/** Completion tokens of a reply: its text and tool calls, 4 characters a token. */
const completion = (text: string): number => Math.ceil(text.length / 4);

/** A round that calls one tool (its usage filled in later). */
function call(name: string, args: Record<string, unknown>): Round {
  return {
    toolCalls: [{ name, arguments: args }],
    usage: { promptTokens: 0, completionTokens: completion(JSON.stringify(args)) },
  };
}

function turnRound(turn: number): Round {
  if (turn === 1) return call('read_file', { path: 'spec.md' });
  if (turn === 2) return call('read_file', { path: 'notes.md' });
  if (turn <= modules + 2) {
    const n = turn - 2;
    return call('write_file', { path: `src/step${two(n)}.ts`, content: moduleSource(n) });
  }
  if (turn === modules + 3) {
    return {
      ...call('write_file', { path: 'config.json', content: config }),
      // The values come from spec.md, read 58 turns ago: the request still carries them.
      expectRequest: { isSummary: false, firstUser: prompt, contains: ['<summary>\n', facts] },
    };
  }
  const text = 'Wrote src/step01.ts to src/step56.ts and config.json (port 8417, 3 retries, logs/ledger.log).';
  return {
    text,
    usage: { promptTokens: 0, completionTokens: completion(text) },
    // The task verbatim, then the notes in place of everything the summaries replaced.
    expectRequest: {
      isSummary: false,
      firstUser: prompt,
      contains: ['<summary>\n', facts],
      absent: ['# Ledger service: spec', '# Notes from the last review', moduleSource(1)],
    },
  };
}

function summaryRound(turn: number, index: number): Round {
  return {
    text: summary(turn),
    usage: { promptTokens: 0, completionTokens: completion(summary(turn)) },
    // The first summary call reads spec.md's result in its transcript; later ones, the notes
    // before them.
    expectRequest: {
      isSummary: true,
      contains: index === 0 ? ['The service listens on port 8417.'] : ['<earlier-summary>', facts],
    },
  };
}

const rounds: Round[] = [];
for (let turn = 1; turn <= modules + 4; turn += 1) {
  const index = SUMMARY_BEFORE.indexOf(turn);
  if (index >= 0) rounds.push(summaryRound(turn, index));
  rounds.push(turnRound(turn));
}
const script = withPromptTokens(rounds, PROMPT_TOKENS);

export default defineCase({
  id: 'long-task-compacted',
  title: 'A 60-turn task on a 16k-token window is compacted as it grows; its last turns still have the task and what its first reads found.',
  tags: ['compaction', 'context'],
  real: false,
  contextWindowTokens: 16_000,
  files: { 'spec.md': spec, 'notes.md': notes },
  prompt,
  script,
  expect: {
    outcome: { status: 'completed', finalTextContains: 'port 8417' },
    files: {
      'config.json': { equals: config },
      'src/step01.ts': { equals: moduleSource(1) },
      'src/step56.ts': { equals: moduleSource(56) },
    },
    trajectory: { counts: { read_file: 2, write_file: modules + 1 } },
    budget: { modelCalls: modules + 4 + SUMMARY_BEFORE.length, sessionTokensFromScript: true },
    compaction: {
      count: SUMMARY_BEFORE.length,
      reasons: SUMMARY_BEFORE.map(() => 'threshold' as const),
      summaryCalls: SUMMARY_BEFORE.length,
      summaryErrors: 0,
      storedUpTo: 'positive',
    },
    requests: { system: { stable: true } },
  },
});
