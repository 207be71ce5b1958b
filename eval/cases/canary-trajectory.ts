import { defineCase } from '../src/case.js';

// Canary: the run writes before it reads, the case expects read → write.
export default defineCase({
  id: 'canary-trajectory',
  title: 'Canary: tools called in the wrong order must fail the trajectory scorer.',
  tags: ['canary'],
  canary: 'trajectory',
  real: false,
  files: { 'in.txt': 'in\n' },
  prompt: 'Read in.txt, then write out.txt.',
  script: [
    { toolCalls: [{ name: 'write_file', arguments: { path: 'out.txt', content: 'out\n' } }], usage: { promptTokens: 50, completionTokens: 10 } },
    { toolCalls: [{ name: 'read_file', arguments: { path: 'in.txt' } }], usage: { promptTokens: 60, completionTokens: 10 } },
    { text: 'Done.', usage: { promptTokens: 70, completionTokens: 2 } },
  ],
  expect: { trajectory: { strict: ['read_file', 'write_file'] } },
});
