import { defineCase } from '../src/case.js';

// Canary: the script's second round says it answers claw's summary call, but claw never compacts
// (the window is large): the request that round answers is an ordinary turn. The requests scorer
// must see that the request is not what the round was written for.
export default defineCase({
  id: 'canary-round-request',
  title: 'Canary: a round written for a summary call that answers an ordinary turn must fail the requests scorer.',
  tags: ['canary'],
  canary: 'requests',
  real: false,
  files: { 'data.txt': 'x\n' },
  prompt: 'Read data.txt.',
  script: [
    { toolCalls: [{ name: 'read_file', arguments: { path: 'data.txt' } }], usage: { promptTokens: 90, completionTokens: 10 } },
    { text: 'Goal: read data.txt. Done so far: read it.', usage: { promptTokens: 100, completionTokens: 12 }, expectRequest: { isSummary: true } },
  ],
  expect: { outcome: { status: 'completed' } },
});
