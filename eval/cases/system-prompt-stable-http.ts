import { defineCase } from '../src/case.js';

// REAL-1 on the real model path: the request bodies the OpenAI client sends over HTTP (a retried
// attempt included) all begin with the same system message, environment block and all.
export default defineCase({
  id: 'system-prompt-stable-http',
  title: 'Over HTTP, every request body (a retried attempt too) begins with one byte-identical system message holding the environment block.',
  tags: ['requests', 'real-models', 'http'],
  real: false,
  model: { transport: 'openai-http', retries: 1 },
  files: {
    '.git/HEAD': 'ref: refs/heads/main\n',
    'version.txt': '1.0.0\n',
  },
  prompt: 'Bump version.txt to 1.0.1.',
  script: [
    {
      toolCalls: [{ name: 'read_file', arguments: { path: 'version.txt' } }],
      usage: { promptTokens: 1800, completionTokens: 12 },
      ttfbMs: 3,
    },
    { fault: { type: 'status', status: 429, message: 'rate limited' } },
    {
      toolCalls: [{ name: 'write_file', arguments: { path: 'version.txt', content: '1.0.1\n' } }],
      usage: { promptTokens: 1850, completionTokens: 20 },
      ttfbMs: 3,
    },
    { text: 'Bumped to 1.0.1.', usage: { promptTokens: 1900, completionTokens: 6 }, ttfbMs: 3 },
  ],
  expect: {
    outcome: { status: 'completed', finalText: 'Bumped to 1.0.1.' },
    files: { 'version.txt': { equals: '1.0.1\n' } },
    budget: { modelCalls: 3 },
    trace: { retries: 1 },
    requests: {
      system: {
        contains: [
          '# Environment\n<environment>\nWorkspace root: {{workspace}}\n',
          'Git: a git repository (root {{workspace}}), on branch main\n',
        ],
        order: ['You are claw, a coding agent.', '<environment>', '</environment>'],
        stable: true,
      },
    },
  },
});
