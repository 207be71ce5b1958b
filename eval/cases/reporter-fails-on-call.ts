import { defineCase } from '../src/case.js';

// ENG-7: a reporter that fails when told of a call (a closed connection) stops the run before any
// tool of the wave runs: no tool runs unseen. Both calls are answered "tool call canceled", and
// the run fails with reporter_failed.
export default defineCase({
  id: 'reporter-fails-on-call',
  title: 'A reporter that fails on the first call of a wave stops the run; no tool of the wave runs.',
  tags: ['reporter', 'tools'],
  real: false,
  faults: { failReporter: { callback: 'onToolCall', nth: 1 } },
  tools: [{ name: 'job', result: (args) => `job ${String(args.n)} done` }],
  prompt: 'Run jobs 1 and 2.',
  script: [
    {
      toolCalls: [{ name: 'job', arguments: { n: 1 } }, { name: 'job', arguments: { n: 2 } }],
      usage: { promptTokens: 80, completionTokens: 20 },
    },
  ],
  expect: {
    outcome: {
      status: 'failed',
      errorCode: 'reporter_failed',
      errorMessageContains: 'the reporter failed in onToolCall; the run was stopped',
    },
    observations: [{ call: 1, contains: 'tool call canceled' }, { call: 2, contains: 'tool call canceled' }],
    pairing: { canceled: 2 },
    reports: { started: 0, results: 0 },
    budget: { modelCalls: 1 },
  },
});
