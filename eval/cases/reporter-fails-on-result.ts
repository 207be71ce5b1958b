import { defineCase } from '../src/case.js';

// ENG-7: a reporter that fails when told of a result stops the run: the wave's other call, still
// running, is canceled and not reported; the result that finished stays stored.
export default defineCase({
  id: 'reporter-fails-on-result',
  title: 'A reporter that fails on a result stops the wave: the finished result is kept, the running call canceled.',
  tags: ['reporter', 'tools'],
  real: false,
  faults: { failReporter: { callback: 'onToolResult', nth: 1 } },
  tools: [{
    name: 'job',
    delayMs: (args) => (args.n === 1 ? 0 : 30_000),
    result: (args) => `job ${String(args.n)} done`,
  }],
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
      errorMessageContains: 'the reporter failed in onToolResult; the run was stopped',
    },
    observations: [{ call: 1, error: false, contains: 'job 1 done' }, { call: 2, contains: 'tool call canceled' }],
    reports: { started: 2, results: 1 },
    budget: { modelCalls: 1 },
  },
});
