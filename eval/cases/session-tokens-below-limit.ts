import { defineCase } from '../src/case.js';

// BUD-1 one below its boundary: after the first reply the session holds 120 of 121 tokens, so the
// next model call is made; its final answer goes over the limit and still completes the run (a
// budget stops the *next* call). Twin of session-tokens-at-limit.
export default defineCase({
  id: 'session-tokens-below-limit',
  title: 'A run one token below maxSessionTokens makes its next model call, and a final answer over the limit completes.',
  tags: ['budget', 'limit'],
  files: { 'data.txt': 'a\nb\n' },
  prompt: 'Read data.txt and summarize it.',
  budgets: { maxSessionTokens: 121 },
  script: [
    { toolCalls: [{ name: 'read_file', arguments: { path: 'data.txt' } }], usage: { promptTokens: 90, completionTokens: 30 }, ttfbMs: 2 },
    { text: 'Two lines: a and b.', usage: { promptTokens: 110, completionTokens: 7 }, ttfbMs: 2 },
  ],
  expect: {
    outcome: { status: 'completed', finalText: 'Two lines: a and b.' },
    budget: { modelCalls: 2, sessionTokensFromScript: true },
  },
});
