import { defineCase } from '../src/case.js';

// Canary: no budget is set, so the run makes its second model call; the case claims the budget
// stopped it after one.
export default defineCase({
  id: 'canary-budget',
  title: 'Canary: a run that was never stopped must fail the budget scorer that expects a stop.',
  tags: ['canary'],
  canary: 'budget',
  real: false,
  files: { 'data.txt': 'x\n' },
  prompt: 'Read data.txt.',
  script: [
    { toolCalls: [{ name: 'read_file', arguments: { path: 'data.txt' } }], usage: { promptTokens: 90, completionTokens: 30 } },
    { text: 'x', usage: { promptTokens: 100, completionTokens: 1 } },
  ],
  expect: { budget: { stop: 'run_token_budget_exceeded', modelCalls: 1 } },
});
