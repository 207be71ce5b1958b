import { defineCase } from '../src/case.js';

// ENG-5 while the model answers: the cancel comes as the second model call starts, while its
// reply streams (its first token is 200 ms away). The call stops at once and the run ends
// canceled, with the first turn's call paired and no tool of the unfinished reply run.
export default defineCase({
  id: 'cancel-during-model-call',
  title: 'Canceling during a model call stops it at once: the run ends canceled, its history paired.',
  tags: ['cancel'],
  files: { 'a.txt': 'a\n' },
  prompt: 'Read a.txt, then write b.txt.',
  cancel: { when: 'model_call', call: 2 },
  script: [
    { toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }], usage: { promptTokens: 80, completionTokens: 9 }, ttfbMs: 2 },
    {
      toolCalls: [{ name: 'write_file', arguments: { path: 'b.txt', content: 'b\n' } }],
      usage: { promptTokens: 100, completionTokens: 12 },
      ttfbMs: 200,
    },
  ],
  expect: {
    outcome: { status: 'canceled' },
    pairing: { canceled: 0 },
    trajectory: { strict: ['read_file'] },
    files: { 'b.txt': { absent: true } },
  },
});
