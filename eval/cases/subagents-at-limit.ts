import { defineCase } from '../src/case.js';

// BUD-3 at its exact boundary: with maxSubagents 1 the first spawn runs a child (one model call)
// and uses the budget up; the second spawn fails without calling the model, as an error
// Observation the run goes on from. Its twin, subagents-below-limit, allows two.
export default defineCase({
  id: 'subagents-at-limit',
  title: 'With maxSubagents spawns used, the next spawn fails without a model call and the run goes on.',
  tags: ['budget', 'limit', 'subagent'],
  subagents: true,
  prompt: 'Have two helpers name a colour each.',
  budgets: { maxSubagents: 1 },
  script: [
    { toolCalls: [{ name: 'spawn_subagent', arguments: { task: 'Name a colour.' } }], usage: { promptTokens: 100, completionTokens: 10 }, ttfbMs: 2 },
    { text: 'Red.', usage: { promptTokens: 60, completionTokens: 2 }, ttfbMs: 2 },
    { toolCalls: [{ name: 'spawn_subagent', arguments: { task: 'Name another colour.' } }], usage: { promptTokens: 130, completionTokens: 10 }, ttfbMs: 2 },
    { text: 'One helper said red; no second helper was allowed.', usage: { promptTokens: 170, completionTokens: 12 }, ttfbMs: 2 },
  ],
  expect: {
    outcome: { status: 'completed', finalTextContains: 'red' },
    budget: { modelCalls: 4, sessionTokensFromScript: true },
    trace: { subagentRuns: 1 },
    observations: [
      { call: 1, error: false, contains: 'Red.' },
      { call: 2, error: true, contains: 'subagent budget exceeded: used 1 spawns of 1 spawns' },
    ],
  },
});
