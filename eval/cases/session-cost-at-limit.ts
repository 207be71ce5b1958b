import { defineCase } from '../src/case.js';

// BUD-5 at its exact boundary. The model costs $1,000 per million tokens in and out, so the first
// reply costs (90 + 30) × 1000 / 1,000,000 = $0.12: the session (new, so it holds only this run)
// costs exactly the limit, and the run stops before the next model call. Its twin,
// session-cost-below-limit, allows $0.121.
export default defineCase({
  id: 'session-cost-at-limit',
  title: 'A reply that brings the run\'s cost exactly to maxSessionCostUsd is the last model call.',
  tags: ['budget', 'limit', 'cost'],
  real: false,
  model: { name: 'claw-eval-priced', price: { inputPerMillion: 1000, outputPerMillion: 1000 } },
  files: { 'data.txt': 'a\nb\n' },
  prompt: 'Read data.txt and summarize it.',
  budgets: { maxSessionCostUsd: 0.12 },
  script: [
    { toolCalls: [{ name: 'read_file', arguments: { path: 'data.txt' } }], usage: { promptTokens: 90, completionTokens: 30 }, ttfbMs: 2 },
  ],
  expect: {
    outcome: {
      status: 'failed',
      errorCode: 'session_cost_budget_exceeded',
      errorMessageContains: 'session cost budget exceeded: used $0.1200 of $0.1200',
    },
    budget: { stop: 'session_cost_budget_exceeded', modelCalls: 1, costUsd: 0.12 },
    observations: [{ call: 1, error: false, contains: 'a\nb' }],
  },
});
