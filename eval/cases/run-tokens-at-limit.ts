import { defineCase } from '../src/case.js';

// BUD-2 at its exact boundary: the first reply brings the run's tokens to the limit (90 + 30 =
// 120 of 120), so the run stops before the next model call. Its twin, run-tokens-below-limit,
// allows one token more and the run goes on.
export default defineCase({
  id: 'run-tokens-at-limit',
  title: 'A reply that brings the run\'s tokens exactly to maxRunTokens is the last model call.',
  tags: ['budget', 'limit'],
  files: { 'data.txt': 'a\nb\n' },
  prompt: 'Read data.txt and summarize it.',
  budgets: { maxRunTokens: 120 },
  script: [
    { toolCalls: [{ name: 'read_file', arguments: { path: 'data.txt' } }], usage: { promptTokens: 90, completionTokens: 30 }, ttfbMs: 2 },
  ],
  expect: {
    outcome: {
      status: 'failed',
      errorCode: 'run_token_budget_exceeded',
      errorMessageContains: 'run token budget exceeded: used 120 tokens of 120 tokens',
    },
    budget: { stop: 'run_token_budget_exceeded', modelCalls: 1, sessionTokensFromScript: true },
    observations: [{ call: 1, error: false, contains: 'a\nb' }],
  },
});
