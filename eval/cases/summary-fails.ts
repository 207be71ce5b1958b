import { defineCase } from '../src/case.js';
import { withPromptTokens, type Round } from '../src/script.js';

// CMP-3 over the real model path: the summary call of a compaction fails (the server answers 503,
// and 503 again when the retrying provider tries once more), and claw falls back. On an 8k-token
// window the model reads spec.md, then writes step modules of ~1,600 characters each (~405 tokens
// a turn); before turn 15 the request would be ~6,550 tokens, past 80 % of the window (6,400;
// turn 14's was ~6,150: margins for a system prompt ~300 characters longer or ~600 shorter on
// another machine), so claw compacts: the summary call fails, the older messages are left out all
// the same (the user's task kept verbatim, the latest ~30 % of the window kept whole, a note that
// the rest could not be summarised), the compaction says why, and the task goes on: ~3,370
// tokens. Having lost what spec.md said, the model reads it again (as the note tells it to) and
// finishes. 19 model calls: 18 turns and the failed summary call (two attempts on the wire).
const prompt = 'Write the step modules src/step01.ts to src/step14.ts as spec.md describes, one per turn, then config.json with the port spec.md gives.';

const spec = '# Spec\n\n- The service listens on port 9311.\n- Every module exports one step function.\n';
const config = '{ "port": 9311 }\n';
const modules = 14;
const two = (n: number): string => String(n).padStart(2, '0');

function moduleSource(n: number): string {
  const lines = [`// Step ${n} of the pipeline: amounts.`, `export function step${two(n)}(entries) {`];
  for (let line = 1; line <= 21; line += 1) {
    lines.push(`  const over${line} = entries.filter((entry) => entry.amount > ${n * 1000 + line * 7});`);
  }
  lines.push('  return over1;', '}', '');
  return lines.join('\n');
}

/** The turn (1-based) before which claw compacts, worked out from the sizes above. */
const SUMMARY_TURN = 15;

/** What the server counted of each answered request, in call order. */
const PROMPT_TOKENS: readonly number[] = [
  1180, 1220, 1620, 2020, 2420, 2820, 3220, 3620, 4020, 4420, 4820, 5230, 5640, 6040, 3260, 3670,
  3710, 3740,
];

const completion = (text: string): number => Math.ceil(text.length / 4);
const call = (name: string, args: Record<string, unknown>): Round => ({
  toolCalls: [{ name, arguments: args }],
  usage: { promptTokens: 0, completionTokens: completion(JSON.stringify(args)) },
});
const overloaded: Round = {
  fault: { type: 'status', status: 503, message: 'The server is overloaded; try again later.' },
  expectRequest: { isSummary: true, contains: ['The service listens on port 9311.'] },
};

const rounds: Round[] = [call('read_file', { path: 'spec.md' })];
for (let n = 1; n <= modules; n += 1) {
  if (n + 1 === SUMMARY_TURN) rounds.push(overloaded, overloaded);
  rounds.push(call('write_file', { path: `src/step${two(n)}.ts`, content: moduleSource(n) }));
}
rounds.push(
  {
    ...call('read_file', { path: 'spec.md' }),
    // The older messages were left out: the task, the note, the latest steps; not spec.md.
    expectRequest: {
      isSummary: false,
      firstUser: prompt,
      contains: ['could not be summarised'],
      absent: ['The service listens on port 9311.', '<summary>'],
    },
  },
  call('write_file', { path: 'config.json', content: config }),
  { text: 'Wrote the 14 step modules and config.json (port 9311).', usage: { promptTokens: 0, completionTokens: 14 } },
);
const script = withPromptTokens(rounds, PROMPT_TOKENS);

export default defineCase({
  id: 'summary-fails',
  title: 'A summary call that fails leaves the older messages out (the task kept) and the task goes on to complete.',
  tags: ['compaction', 'context', 'http'],
  real: false,
  model: { transport: 'openai-http', retries: 1 },
  contextWindowTokens: 8_000,
  files: { 'spec.md': spec },
  prompt,
  script,
  expect: {
    outcome: { status: 'completed', finalTextContains: 'port 9311' },
    files: { 'config.json': { equals: config }, 'src/step14.ts': { equals: moduleSource(14) } },
    trajectory: { counts: { read_file: 2, write_file: modules + 1 } },
    // 18 turns and the failed summary call.
    budget: { modelCalls: 19, sessionTokensFromScript: true },
    compaction: { count: 1, reasons: ['threshold'], summaryCalls: 1, summaryErrors: 1, storedUpTo: 'positive' },
  },
});
