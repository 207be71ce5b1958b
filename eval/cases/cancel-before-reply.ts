import { defineCase } from '../src/case.js';

// ENG-5 before any reply: the cancel comes as the first model call starts. The run ends canceled
// with no answer and no tool call, the prompt alone in its history.
export default defineCase({
  id: 'cancel-before-reply',
  title: 'Canceling during the first model call ends the run canceled, with an empty answer.',
  tags: ['cancel'],
  files: { 'a.txt': 'a\n' },
  prompt: 'Read a.txt.',
  cancel: { when: 'model_call', call: 1 },
  script: [
    { toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }], usage: { promptTokens: 80, completionTokens: 9 }, ttfbMs: 200 },
  ],
  expect: {
    outcome: { status: 'canceled', finalText: '' },
    pairing: { canceled: 0 },
    trajectory: { strict: [] },
  },
});
