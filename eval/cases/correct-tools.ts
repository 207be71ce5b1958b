import { defineCase } from '../src/case.js';

// Seed case 2: the right tools — read the file first, then edit it in place (never rewrite it).
export default defineCase({
  id: 'correct-tools',
  title: 'The model reads the file, then edits it in place: read_file → edit_file, no write_file.',
  tags: ['seed', 'trajectory'],
  files: { 'config.json': '{\n  "port": 8080,\n  "debug": false\n}\n' },
  prompt: 'Turn debug on in config.json.',
  script: [
    {
      toolCalls: [{ name: 'read_file', arguments: { path: 'config.json' } }],
      usage: { promptTokens: 180, completionTokens: 12 },
      ttfbMs: 3,
    },
    {
      toolCalls: [{
        name: 'edit_file',
        arguments: { path: 'config.json', old_string: '"debug": false', new_string: '"debug": true' },
      }],
      usage: { promptTokens: 240, completionTokens: 30 },
      ttfbMs: 3,
    },
    { text: 'debug is on.', usage: { promptTokens: 280, completionTokens: 5 }, ttfbMs: 3 },
  ],
  expect: {
    outcome: { status: 'completed' },
    trajectory: { strict: ['read_file', 'edit_file'], forbidden: ['write_file'] },
    files: { 'config.json': { equals: '{\n  "port": 8080,\n  "debug": true\n}\n' } },
  },
});
