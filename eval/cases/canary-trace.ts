import { defineCase } from '../src/case.js';

// Canary: the model reports one prompt token more per reply than the script says; the trace
// scorer's token sums must not match.
export default defineCase({
  id: 'canary-trace',
  title: 'Canary: token usage that differs from the script must fail the trace scorer.',
  tags: ['canary'],
  canary: 'trace',
  real: false,
  faults: { misreportUsage: true },
  prompt: 'Say hi.',
  script: [{ text: 'hi', usage: { promptTokens: 40, completionTokens: 1 } }],
  expect: { outcome: { status: 'completed' } },
});
