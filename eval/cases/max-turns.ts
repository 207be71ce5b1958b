import { defineCase } from '../src/case.js';

// maxTurns bounds the loop (ENG-1): a model that keeps calling tools is stopped after exactly
// maxTurns model calls, with every call paired.
export default defineCase({
  id: 'max-turns',
  title: 'A model that never stops calling tools is stopped after maxTurns model calls.',
  tags: ['budget'],
  files: { 'a.txt': 'a\n' },
  budgets: { maxTurns: 2 },
  prompt: 'Keep reading a.txt.',
  script: [
    { toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }], usage: { promptTokens: 80, completionTokens: 9 }, ttfbMs: 2 },
    { toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }], usage: { promptTokens: 100, completionTokens: 9 }, ttfbMs: 2 },
  ],
  expect: {
    outcome: { status: 'max_turns', errorCode: 'max_turns_reached' },
    budget: { modelCalls: 2 },
    trajectory: { counts: { read_file: 2 } },
  },
});
