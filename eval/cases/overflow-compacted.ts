import { defineCase } from '../src/case.js';
import { withPromptTokens, type Round } from '../src/script.js';

// CMP-1, CMP-2, CMP-3 over the real model path (OpenAI client, retrying provider, HTTP): claw
// takes the model's context to be 24,000 tokens (so it would compact only past 19,200), but the
// server runs it with 14,000, as local servers often do. The model reads eleven parts of a log of
// ~4,950 characters each (~1,240 tokens a read); request 12 is ~14,950 tokens and the server
// refuses it with `context_length_exceeded` (the body OpenAI sends). The provider does not retry
// that; claw compacts at once (`overflow`: old results pruned beyond the latest ~6,000 tokens of
// them, then one summary call, keeping the latest ~15 % of the window) and sends call 12 again,
// once: ~3,970 tokens. It is answered, and the task completes. 15 model calls: 11 reads, the
// refused call, the summary call, call 12 again and the final answer. The prompt tokens are the
// server's count of each answered request (about claw's own estimate).
const prompt = 'Read log/part01.txt to log/part11.txt, one at a time, then write report.md: how many requests failed in all.';

const two = (n: number): string => String(n).padStart(2, '0');

/** A part of the log: 80 lines of ~70 characters, 3 of them failures. */
function part(n: number): string {
  const lines: string[] = [];
  for (let line = 1; line <= 80; line += 1) {
    const failed = line % 27 === 0;
    lines.push(`2026-03-${two(n)}T10:${two(line % 60)}:00Z req-${n}-${line} ${failed ? 'FAILED 502 upstream' : 'ok 200 in 41 ms'} /api/v1/ledger`);
  }
  return `${lines.join('\n')}\n`;
}

const parts = 11;
const files = Object.fromEntries(
  Array.from({ length: parts }, (_, index) => [`log/part${two(index + 1)}.txt`, part(index + 1)]),
);

/** The prompt tokens of each answered call, in call order, as the server counted them. */
const PROMPT_TOKENS: readonly number[] = [
  1280, 2520, 3760, 5000, 6230, 7470, 8710, 9950, 11_190, 12_430, 13_690, 1640, 3960, 4020,
];

const notes = [
  `Goal: ${prompt}`,
  'Done so far: read log/part01.txt to log/part09.txt; each part has 80 requests, 2 of them FAILED 502 upstream.',
  'Files: log/partNN.txt: one request a line, "ok 200" or "FAILED 502 upstream".',
  'Remaining: the failures of log/part10.txt and log/part11.txt, then write report.md with the total.',
].join('\n');

const report = '# Failed requests\n\n22 of 880 requests failed (2 in each of the 11 parts), all with 502 upstream.\n';

const rounds: Round[] = [
  ...Array.from({ length: parts }, (_, index): Round => ({
    toolCalls: [{ name: 'read_file', arguments: { path: `log/part${two(index + 1)}.txt` } }],
    usage: { promptTokens: 0, completionTokens: 14 },
  })),
  // Call 12: the request no longer fits the model's real context.
  {
    fault: {
      type: 'status',
      status: 400,
      code: 'context_length_exceeded',
      message: "This model's maximum context length is 14000 tokens. However, your messages resulted in 14952 tokens. Please reduce the length of the messages.",
    },
    expectRequest: { isSummary: false },
  },
  // The summary call of the compaction that follows: it sees the reads (the older ones pruned).
  {
    text: notes,
    usage: { promptTokens: 0, completionTokens: Math.ceil(notes.length / 4) },
    expectRequest: { isSummary: true, contains: ['log/part01.txt', prompt] },
  },
  // Call 12 again, once, on the compacted conversation: the task, the notes, the latest reads.
  {
    toolCalls: [{ name: 'write_file', arguments: { path: 'report.md', content: report } }],
    usage: { promptTokens: 0, completionTokens: 40 },
    expectRequest: {
      isSummary: false,
      firstUser: prompt,
      contains: [`<summary>\n${notes}\n</summary>`, 'req-11-80 ok 200'],
      absent: ['req-1-1 ok 200', 'req-7-1 ok 200'],
    },
  },
  { text: 'Wrote report.md: 22 of 880 requests failed.', usage: { promptTokens: 0, completionTokens: 12 } },
];
const script = withPromptTokens(rounds, PROMPT_TOKENS);

export default defineCase({
  id: 'overflow-compacted',
  title: 'A server that says the request is too long (context_length_exceeded) makes claw compact at once and send the call again, once; the task completes.',
  tags: ['compaction', 'context', 'provider', 'http'],
  real: false,
  model: { transport: 'openai-http' },
  contextWindowTokens: 24_000,
  files,
  prompt,
  script,
  expect: {
    outcome: { status: 'completed', finalTextContains: '22 of 880' },
    files: { 'report.md': { equals: report } },
    trajectory: { counts: { read_file: parts, write_file: 1 } },
    budget: { modelCalls: 15, sessionTokensFromScript: true },
    compaction: { count: 1, reasons: ['overflow'], summaryCalls: 1, summaryErrors: 0, storedUpTo: 'positive' },
  },
});
