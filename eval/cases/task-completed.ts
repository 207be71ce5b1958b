import { defineCase } from '../src/case.js';

// Seed case 1: the task is completed — the file the user asked for exists with its content.
export default defineCase({
  id: 'task-completed',
  title: 'The task is done: the file the user asked for exists with the right content.',
  tags: ['seed'],
  files: { 'README.md': '# greeter\n\nSays hello.\n' },
  prompt: 'Create hello.txt that says "hello, claw".',
  script: [
    {
      toolCalls: [{ name: 'write_file', arguments: { path: 'hello.txt', content: 'hello, claw\n' } }],
      usage: { promptTokens: 210, completionTokens: 24 },
      ttfbMs: 4,
    },
    { text: 'Created hello.txt.', usage: { promptTokens: 260, completionTokens: 6 }, ttfbMs: 4 },
  ],
  expect: {
    outcome: { status: 'completed', finalTextContains: 'hello.txt' },
    files: { 'hello.txt': { equals: 'hello, claw\n' }, 'README.md': { unchanged: true } },
  },
});
