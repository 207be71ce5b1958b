import { defineCase } from '../src/case.js';

// BUD-5 at its exact boundary. The model costs $1,000 per million tokens in and out, so the first
// reply costs (90 + 30) × 1000 / 1,000,000 = $0.12, exactly the limit: the run stops before the
// next model call. Its twin, run-cost-below-limit, allows $0.121.
export default defineCase({
  id: 'run-cost-at-limit',
  title: 'A reply that brings the run\'s cost exactly to maxRunCostUsd is the last model call.',
  tags: ['budget', 'limit', 'cost'],
  real: false,
  model: { name: 'claw-eval-priced', price: { inputPerMillion: 1000, outputPerMillion: 1000 } },
  files: { 'data.txt': 'a\nb\n' },
  prompt: 'Read data.txt and summarize it.',
  budgets: { maxRunCostUsd: 0.12 },
  script: [
    { toolCalls: [{ name: 'read_file', arguments: { path: 'data.txt' } }], usage: { promptTokens: 90, completionTokens: 30 }, ttfbMs: 2 },
  ],
  expect: {
    outcome: {
      status: 'failed',
      errorCode: 'run_cost_budget_exceeded',
      errorMessageContains: 'run cost budget exceeded: used $0.1200 of $0.1200',
    },
    budget: { stop: 'run_cost_budget_exceeded', modelCalls: 1, costUsd: 0.12 },
    observations: [{ call: 1, error: false, contains: 'a\nb' }],
  },
});
