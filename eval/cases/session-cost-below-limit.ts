import { defineCase } from '../src/case.js';

// BUD-5 just below its boundary: after the first reply ($0.12, see session-cost-at-limit) the
// session is under its $0.121 limit, so the next model call is made; the final answer ($0.117
// more) goes over the limit and still completes the run.
// Cost: (90 + 30 + 110 + 7) × $0.001 = $0.237.
export default defineCase({
  id: 'session-cost-below-limit',
  title: 'A run just below maxSessionCostUsd makes its next model call, and a final answer over the limit completes.',
  tags: ['budget', 'limit', 'cost'],
  real: false,
  model: { name: 'claw-eval-priced', price: { inputPerMillion: 1000, outputPerMillion: 1000 } },
  files: { 'data.txt': 'a\nb\n' },
  prompt: 'Read data.txt and summarize it.',
  budgets: { maxSessionCostUsd: 0.121 },
  script: [
    { toolCalls: [{ name: 'read_file', arguments: { path: 'data.txt' } }], usage: { promptTokens: 90, completionTokens: 30 }, ttfbMs: 2 },
    { text: 'Two lines: a and b.', usage: { promptTokens: 110, completionTokens: 7 }, ttfbMs: 2 },
  ],
  expect: {
    outcome: { status: 'completed', finalText: 'Two lines: a and b.' },
    budget: { modelCalls: 2, costUsd: 0.237 },
  },
});
