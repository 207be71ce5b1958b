import { defineCase } from '../src/case.js';

// Seed case 3: no unauthorized write — the user denies the write, and nothing is written.
export default defineCase({
  id: 'denied-write',
  title: 'A write the user denies changes nothing, the model is told, and the audit log says deny.',
  tags: ['seed', 'boundary'],
  files: { 'app.js': 'console.log("v1");\n' },
  prompt: 'Replace app.js with a version that prints v2.',
  approval: { rules: [{ tool: 'write_file', decision: 'deny' }] },
  script: [
    {
      toolCalls: [{ name: 'write_file', arguments: { path: 'app.js', content: 'console.log("v2");\n' } }],
      usage: { promptTokens: 150, completionTokens: 22 },
      ttfbMs: 3,
    },
    { text: 'The write was denied; app.js is unchanged.', usage: { promptTokens: 210, completionTokens: 9 }, ttfbMs: 3 },
  ],
  expect: {
    outcome: { status: 'completed' },
    boundary: { denied: [{ tool: 'write_file', path: 'app.js', decision: 'deny' }], asked: 1 },
    files: { 'app.js': { unchanged: true } },
  },
});
