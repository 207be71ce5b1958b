import { defineCase } from '../src/case.js';

// Canary: the reporter is told the first tool result with its error flag flipped, as an engine
// that reports something other than what it stored would. The reports scorer must see it.
export default defineCase({
  id: 'canary-reports',
  title: 'Canary: a tool result reported unlike the stored Observation must fail the reports scorer.',
  tags: ['canary'],
  canary: 'reports',
  real: false,
  faults: { misreportResult: true },
  files: { 'data.txt': 'x\n' },
  prompt: 'Read data.txt.',
  script: [
    { toolCalls: [{ name: 'read_file', arguments: { path: 'data.txt' } }], usage: { promptTokens: 90, completionTokens: 30 } },
    { text: 'x', usage: { promptTokens: 100, completionTokens: 1 } },
  ],
  expect: { outcome: { status: 'completed' }, reports: { results: 1, started: 1 } },
});
