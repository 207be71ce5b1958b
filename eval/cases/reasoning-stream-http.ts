import { defineCase } from '../src/case.js';

// REAL-4 through the real OpenAI client and provider: reasoning streamed as reasoning_content
// deltas before the answer is reported as thinking and kept on the reply's message, never mixed
// into the answer, and never sent back in the next request.
export default defineCase({
  id: 'reasoning-stream-http',
  title: 'A reasoning stream over HTTP yields the thinking and the answer apart; the final text holds no reasoning and the next request does not send it back.',
  tags: ['requests', 'real-models', 'http', 'reasoning'],
  real: false,
  model: { transport: 'openai-http' },
  files: { 'package.json': '{ "name": "app", "version": "2.4.1" }\n' },
  prompt: 'Which version is the app?',
  script: [
    {
      reasoning: ['The user wants the version.', ' It is in package.json: read it first.'],
      toolCalls: [{ name: 'read_file', arguments: { path: 'package.json' } }],
      usage: { promptTokens: 1700, completionTokens: 40 },
      ttfbMs: 3,
    },
    {
      reasoning: ['The file says 2.4.1;', ' answer with just that.'],
      chunks: ['The app is ', 'version 2.4.1.'],
      usage: { promptTokens: 1760, completionTokens: 30 },
      ttfbMs: 3,
    },
  ],
  expect: {
    outcome: { status: 'completed', finalText: 'The app is version 2.4.1.' },
    budget: { modelCalls: 2 },
    thinking: { fromScript: true, stored: true, notInAnswer: true },
    requests: { reasoningNotSent: true },
  },
});
