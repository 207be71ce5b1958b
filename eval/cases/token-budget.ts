import { defineCase } from '../src/case.js';

// Seed case 5: the run token budget stops the run, and the model was called exactly once.
export default defineCase({
  id: 'token-budget',
  title: 'A reply that uses up the run token budget is the last: the model is called exactly once.',
  tags: ['seed', 'budget'],
  files: { 'data.txt': 'a\nb\n' },
  prompt: 'Read data.txt and summarize it.',
  budgets: { maxRunTokens: 100 },
  script: [
    {
      toolCalls: [{ name: 'read_file', arguments: { path: 'data.txt' } }],
      usage: { promptTokens: 90, completionTokens: 30 },
      ttfbMs: 3,
    },
  ],
  expect: {
    outcome: { status: 'failed', errorCode: 'run_token_budget_exceeded' },
    budget: { stop: 'run_token_budget_exceeded', modelCalls: 1 },
  },
});
