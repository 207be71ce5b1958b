import { defineCase } from '../src/case.js';

// BUD-4 below and at its limit. The first wave runs two 150 ms tools in parallel: it counts its
// wall time once (about 150 ms; the sum, 300 ms, would be over the 270 ms budget and stop the run
// here), so the next model call is made. The second wave's tool would take a minute: the budget's
// timer, armed with what is left (about 120 ms), aborts it when the run's tool time reaches
// 270 ms, and the run stops without another model call. Timers that fire late on a busy machine
// only make the first wave look longer: up to 120 ms late is still below the budget.
export default defineCase({
  id: 'tool-time-accumulates',
  title: 'Tool time adds up across waves, a parallel wave counted once: below the budget the run goes on, at it the stuck tool is aborted.',
  tags: ['budget', 'limit', 'timing'],
  budgets: { toolTimeBudgetMs: 270 },
  tools: [
    { name: 'probe', delayMs: 150, result: 'up' },
    { name: 'wait_for_ci', delayMs: 60_000, result: 'green' },
  ],
  prompt: 'Probe both hosts, then wait for CI.',
  script: [
    {
      toolCalls: [{ name: 'probe', arguments: { host: 'a' } }, { name: 'probe', arguments: { host: 'b' } }],
      usage: { promptTokens: 70, completionTokens: 12 },
      ttfbMs: 2,
    },
    { toolCalls: [{ name: 'wait_for_ci', arguments: {} }], usage: { promptTokens: 90, completionTokens: 8 }, ttfbMs: 2 },
  ],
  expect: {
    outcome: {
      status: 'failed',
      errorCode: 'tool_time_budget_exceeded',
      errorMessageContains: 'ms of 270 ms',
    },
    budget: { stop: 'tool_time_budget_exceeded', modelCalls: 2 },
    pairing: { canceled: 1 },
    observations: [
      { call: 1, error: false, contains: 'up' },
      { call: 2, error: false, contains: 'up' },
      { call: 3, error: true, contains: 'tool call canceled' },
    ],
    trace: { waveWall: 'slowest' },
  },
});
