import { defineCase } from '../src/case.js';
import { withPromptTokens, type Round } from '../src/script.js';

// CMP-2, CMP-3: a task that cannot fit a 16k-token window. The user pastes a CSV export of 300
// rows (~15,500 characters, ~3,900 tokens, kept verbatim whatever happens) and asks for it as
// JSON; the model reads schema.md and example.md (~1,150 tokens), then writes data.json in one
// call of ~10,400 tokens. The next request, ~16,830 tokens, passes the threshold (12,800) and the
// limit (14,400: the window less a tenth for the reply): claw compacts once, summarising the two
// reads (one summary call), but the task and the latest step alone come to ~15,780 tokens with
// the notes, so the task fails with `context_exhausted`, saying the sizes; claw makes no second
// compaction and no further call. 4 model calls: 3 turns and the summary call.
const header = 'id,date,account,amount_cents,currency,memo';

function row(n: number): Record<string, string | number> {
  return {
    id: n,
    date: `2026-02-${String((n % 28) + 1).padStart(2, '0')}`,
    account: `ACC-${String(1000 + ((n * 37) % 900)).padStart(4, '0')}`,
    amount_cents: (n * 7919) % 250_000,
    currency: n % 5 === 0 ? 'USD' : 'EUR',
    memo: `invoice ${n * 13} paid`,
  };
}

const rows = Array.from({ length: 300 }, (_, index) => row(index + 1));
const csv = [header, ...rows.map((entry) => Object.values(entry).join(','))].join('\n');
const json = `[\n${rows.map((entry) => JSON.stringify(entry)).join(',\n')}\n]\n`;

const prompt = `Convert this CSV export to data.json, an array of objects keyed by the header, as schema.md says:\n\n${csv}`;

const schema = '# data.json\n\nAn array of objects, one per row, keys as in the header; numbers stay numbers.\n';

/** An example of the output, as the team keeps it next to the schema (~4,400 characters). */
const example = [
  '# Example: three rows of an export as data.json',
  '',
  'One object a line, in the order of the export; `id` and `amount_cents` are numbers, the rest',
  'strings. Dates stay as the export writes them (YYYY-MM-DD); accounts keep their ACC- prefix.',
  '',
  '```json',
  `[\n${rows.slice(0, 3).map((entry) => JSON.stringify(entry)).join(',\n')}\n]`,
  '```',
  '',
  ...Array.from({ length: 40 }, (_, index) =>
    `- Rule ${index + 1}: a row whose memo names invoice ${index * 13} keeps the memo exactly as exported, spaces included.`),
  '',
].join('\n');

const notes = [
  'Goal: convert the pasted CSV export (300 rows) to data.json, as schema.md says.',
  'Done so far: read schema.md (an array of objects keyed by the header; numbers stay numbers) and example.md (one object a line; id and amount_cents are numbers; memos kept exactly); wrote data.json.',
  'Remaining: confirm data.json to the user.',
].join('\n');

/** What the server counted of each request, in call order (about claw's own estimate). */
const PROMPT_TOKENS: readonly number[] = [5080, 5120, 6270, 4670];

const rounds: Round[] = [
  { toolCalls: [{ name: 'read_file', arguments: { path: 'schema.md' } }], usage: { promptTokens: 0, completionTokens: 12 } },
  { toolCalls: [{ name: 'read_file', arguments: { path: 'example.md' } }], usage: { promptTokens: 0, completionTokens: 12 } },
  {
    toolCalls: [{ name: 'write_file', arguments: { path: 'data.json', content: json } }],
    usage: { promptTokens: 0, completionTokens: Math.ceil(json.length / 4) },
  },
  {
    text: notes,
    usage: { promptTokens: 0, completionTokens: Math.ceil(notes.length / 4) },
    expectRequest: { isSummary: true, contains: ['An array of objects, one per row', 'Example: three rows'] },
  },
];
const script = withPromptTokens(rounds, PROMPT_TOKENS);

export default defineCase({
  id: 'context-exhausted',
  title: 'A task that does not fit the window even after one compaction fails with context_exhausted, after exactly one summary call.',
  tags: ['compaction', 'context'],
  real: false,
  contextWindowTokens: 16_000,
  files: { 'schema.md': schema, 'example.md': example },
  prompt,
  script,
  expect: {
    outcome: {
      status: 'failed',
      errorCode: 'context_exhausted',
      errorMessageContains: "of the model's 16,000 can be sent",
    },
    files: { 'data.json': { equals: json } },
    trajectory: { strict: ['read_file', 'read_file', 'write_file'] },
    budget: { modelCalls: 4, sessionTokensFromScript: true },
    compaction: { count: 1, reasons: ['threshold'], summaryCalls: 1, summaryErrors: 0 },
  },
});
