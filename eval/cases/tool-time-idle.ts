import { defineCase } from '../src/case.js';

// BUD-4 counts only the tools' execution: a wave of two 60 ms tools in parallel, then a model call
// that takes 300 ms to answer, then one more short tool. The run's tool time is about 80 ms of its
// 350 ms budget (timers up to 270 ms late on a busy machine still fit), although its wall time is
// well over it: the run completes. Counting the model call would make it 380 ms: stopped.
export default defineCase({
  id: 'tool-time-idle',
  title: 'Time outside tools (a slow model call) does not count against the tool time budget.',
  tags: ['budget', 'limit', 'timing'],
  budgets: { toolTimeBudgetMs: 350 },
  tools: [{ name: 'probe', delayMs: (args) => (args.host === 'c' ? 20 : 60), result: 'up' }],
  prompt: 'Probe the hosts.',
  script: [
    {
      toolCalls: [{ name: 'probe', arguments: { host: 'a' } }, { name: 'probe', arguments: { host: 'b' } }],
      usage: { promptTokens: 70, completionTokens: 12 },
      ttfbMs: 2,
    },
    { toolCalls: [{ name: 'probe', arguments: { host: 'c' } }], usage: { promptTokens: 90, completionTokens: 8 }, ttfbMs: 300 },
    { text: 'All three hosts are up.', usage: { promptTokens: 110, completionTokens: 6 }, ttfbMs: 2 },
  ],
  expect: {
    outcome: { status: 'completed', finalText: 'All three hosts are up.' },
    budget: { modelCalls: 3 },
    trajectory: { counts: { probe: 3 } },
    observations: [{ call: 3, error: false, contains: 'up' }],
  },
});
