import { defineCase } from '../src/case.js';

// BUD-3 one below its boundary: with maxSubagents 2, one spawn used, the second spawn still runs
// its child. Twin of subagents-at-limit.
export default defineCase({
  id: 'subagents-below-limit',
  title: 'With one spawn fewer than maxSubagents used, the next spawn runs its child.',
  tags: ['budget', 'limit', 'subagent'],
  subagents: true,
  prompt: 'Have two helpers name a colour each.',
  budgets: { maxSubagents: 2 },
  script: [
    { toolCalls: [{ name: 'spawn_subagent', arguments: { task: 'Name a colour.' } }], usage: { promptTokens: 100, completionTokens: 10 }, ttfbMs: 2 },
    { text: 'Red.', usage: { promptTokens: 60, completionTokens: 2 }, ttfbMs: 2 },
    { toolCalls: [{ name: 'spawn_subagent', arguments: { task: 'Name another colour.' } }], usage: { promptTokens: 130, completionTokens: 10 }, ttfbMs: 2 },
    { text: 'Blue.', usage: { promptTokens: 60, completionTokens: 2 }, ttfbMs: 2 },
    { text: 'The helpers said red and blue.', usage: { promptTokens: 170, completionTokens: 9 }, ttfbMs: 2 },
  ],
  expect: {
    outcome: { status: 'completed', finalText: 'The helpers said red and blue.' },
    budget: { modelCalls: 5, sessionTokensFromScript: true },
    trace: { subagentRuns: 2 },
    observations: [
      { call: 1, error: false, contains: 'Red.' },
      { call: 2, error: false, contains: 'Blue.' },
    ],
  },
});
