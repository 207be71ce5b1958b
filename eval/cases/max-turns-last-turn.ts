import { defineCase } from '../src/case.js';

// maxTurns one below its boundary (ENG-1): a model that answers on the last allowed turn completes
// the run. Twin of max-turns, where the last allowed turn still calls a tool.
export default defineCase({
  id: 'max-turns-last-turn',
  title: 'A final answer on the last of maxTurns model calls completes the run.',
  tags: ['budget', 'limit'],
  files: { 'a.txt': 'a\n' },
  budgets: { maxTurns: 2 },
  prompt: 'Read a.txt.',
  script: [
    { toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }], usage: { promptTokens: 80, completionTokens: 9 }, ttfbMs: 2 },
    { text: 'It says a.', usage: { promptTokens: 100, completionTokens: 4 }, ttfbMs: 2 },
  ],
  expect: {
    outcome: { status: 'completed', finalText: 'It says a.' },
    budget: { modelCalls: 2 },
    trajectory: { strict: ['read_file'] },
  },
});
