import { defineCase } from '../src/case.js';

// The tool time budget (BUD-4) aborts a stuck tool through its signal and stops the run without
// another model call.
export default defineCase({
  id: 'tool-time-budget',
  title: 'A stuck tool is aborted when the tool time budget runs out; no model call follows.',
  tags: ['budget', 'timing'],
  budgets: { toolTimeBudgetMs: 40 },
  tools: [{ name: 'wait_for_ci', delayMs: 60_000, result: 'green' }],
  prompt: 'Wait for CI.',
  script: [
    { toolCalls: [{ name: 'wait_for_ci', arguments: {} }], usage: { promptTokens: 70, completionTokens: 8 }, ttfbMs: 2 },
  ],
  expect: {
    outcome: { status: 'failed', errorCode: 'tool_time_budget_exceeded' },
    budget: { stop: 'tool_time_budget_exceeded', modelCalls: 1 },
    pairing: { canceled: 1 },
  },
});
