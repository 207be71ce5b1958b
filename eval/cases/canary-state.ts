import { defineCase } from '../src/case.js';

// Canary: the run writes "B" where the case expects "A". The state scorer must fail it; a state
// scorer that passes anything fails the suite here.
export default defineCase({
  id: 'canary-state',
  title: 'Canary: a file with the wrong content must fail the state scorer.',
  tags: ['canary'],
  canary: 'state',
  real: false,
  prompt: 'Write A to letter.txt.',
  script: [
    { toolCalls: [{ name: 'write_file', arguments: { path: 'letter.txt', content: 'B\n' } }], usage: { promptTokens: 50, completionTokens: 10 } },
    { text: 'Done.', usage: { promptTokens: 60, completionTokens: 2 } },
  ],
  expect: { files: { 'letter.txt': { equals: 'A\n' } } },
});
