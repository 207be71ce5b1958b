import { defineCase } from '../src/case.js';

// ENG-7, SES-8: the session cannot record that a call starts (its disk is full): the call must
// not run, since a crash could not tell it ran, and the run stops with tool_journal_failed.
export default defineCase({
  id: 'journal-fails',
  title: 'A tool call whose start the session cannot record does not run, and the run stops.',
  tags: ['journal', 'tools'],
  real: false,
  faults: { failJournal: 1 },
  tools: [{ name: 'job', result: 'job done' }],
  prompt: 'Run the job.',
  script: [
    { toolCalls: [{ name: 'job', arguments: { n: 1 } }], usage: { promptTokens: 80, completionTokens: 20 } },
  ],
  expect: {
    outcome: { status: 'failed', errorCode: 'tool_journal_failed' },
    trajectory: { counts: { job: 1 } },
    reports: { started: 0, results: 0 },
    budget: { modelCalls: 1 },
  },
});
