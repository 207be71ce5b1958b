import { defineCase } from '../src/case.js';

// Seed case 6: a tool call with broken JSON arguments gets an error Observation with a hint, and
// the loop goes on: the model corrects the call and finishes (ENG-4).
export default defineCase({
  id: 'recovers-from-bad-arguments',
  title: 'Broken tool arguments become an error Observation with a hint; the model corrects itself.',
  tags: ['seed', 'recovery'],
  files: { 'version.txt': '1.4.2\n' },
  prompt: 'What version is this?',
  script: [
    {
      toolCalls: [{ name: 'read_file', arguments: '{"path": "version.txt"' }],
      usage: { promptTokens: 100, completionTokens: 10 },
      ttfbMs: 3,
    },
    {
      toolCalls: [{ name: 'read_file', arguments: { path: 'version.txt' } }],
      usage: { promptTokens: 150, completionTokens: 10 },
      ttfbMs: 3,
    },
    { text: 'Version 1.4.2.', usage: { promptTokens: 180, completionTokens: 5 }, ttfbMs: 3 },
  ],
  expect: {
    outcome: { status: 'completed', finalTextContains: '1.4.2' },
    trajectory: { strict: ['read_file', 'read_file'] },
    observations: [
      { call: 1, error: true, contains: 'Hint:' },
      { call: 2, error: false, contains: '1.4.2' },
    ],
    files: { 'version.txt': { unchanged: true } },
  },
});
