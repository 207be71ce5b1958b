import { defineCase } from '../src/case.js';

// Canary: the script has a round the run never asks for (the model's last reply ends the run
// first). The script scorer must report the unused round.
export default defineCase({
  id: 'canary-script',
  title: 'Canary: a scripted round the run never uses must fail the script scorer.',
  tags: ['canary'],
  canary: 'script',
  real: false,
  prompt: 'Say hi.',
  script: [
    { text: 'hi', usage: { promptTokens: 40, completionTokens: 1 } },
    { text: 'never asked for', usage: { promptTokens: 50, completionTokens: 3 } },
  ],
  expect: { outcome: { status: 'completed' } },
});
