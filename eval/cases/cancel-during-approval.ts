import { defineCase } from '../src/case.js';

// Canceling while a write waits for approval: the question is dropped, the call is paired with
// "tool call canceled", and nothing is written.
export default defineCase({
  id: 'cancel-during-approval',
  title: 'A cancel while a write waits for approval pairs the call and writes nothing.',
  tags: ['cancel', 'approval'],
  real: false,
  cancel: { when: 'approval' },
  prompt: 'Create plan.md.',
  script: [
    { toolCalls: [{ name: 'write_file', arguments: { path: 'plan.md', content: '# plan\n' } }], usage: { promptTokens: 80, completionTokens: 12 }, ttfbMs: 2 },
  ],
  expect: {
    outcome: { status: 'canceled' },
    pairing: { canceled: 1 },
    files: { 'plan.md': { absent: true } },
  },
});
