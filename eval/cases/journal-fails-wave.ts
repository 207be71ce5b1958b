import { defineCase } from '../src/case.js';

// ENG-7, SES-8: the session's disk fills up as a wave of two calls starts, so neither start can
// be recorded. Neither call runs, and the run stops with the first call's failure (the one the
// user should read about first), not with a later one's.
export default defineCase({
  id: 'journal-fails-wave',
  title: 'When no call of a wave can be recorded, none runs, and the run stops with the first one\'s failure.',
  tags: ['journal', 'tools'],
  real: false,
  faults: { failJournal: 1 },
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
      errorCode: 'tool_journal_failed',
      errorMessageContains: 'the session could not record the start of tool call call_1_1 (job)',
    },
    trajectory: { counts: { job: 2 } },
    reports: { started: 0, results: 0 },
    budget: { modelCalls: 1 },
  },
});
