import { defineCase } from '../src/case.js';

// Canary: the harness appends the call's number to the system message of every request after
// the first, as a system prompt rebuilt per request would. The requests scorer must see that the
// system message changed.
export default defineCase({
  id: 'canary-requests',
  title: 'Canary: a system message that changes between the requests of a run must fail the requests scorer.',
  tags: ['canary'],
  canary: 'requests',
  real: false,
  faults: { driftingSystemPrompt: true },
  files: { 'data.txt': 'x\n' },
  prompt: 'Read data.txt.',
  script: [
    { toolCalls: [{ name: 'read_file', arguments: { path: 'data.txt' } }], usage: { promptTokens: 90, completionTokens: 10 } },
    { text: 'x', usage: { promptTokens: 100, completionTokens: 1 } },
  ],
  expect: { requests: { system: { stable: true } } },
});
