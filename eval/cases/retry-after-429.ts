import { defineCase } from '../src/case.js';

// The real model path (OpenAI client, retrying provider) over HTTP: a 429 is retried (PRV-3) and
// the retry's reply is the only one counted — one model call, its tokens, its tool call.
export default defineCase({
  id: 'retry-after-429',
  title: 'A 429 from the model server is retried; the reply after it counts as one model call.',
  tags: ['provider', 'http'],
  real: false,
  model: { transport: 'openai-http', retries: 2 },
  prompt: 'Write done.txt.',
  script: [
    { fault: { type: 'status', status: 429, message: 'rate limited' } },
    {
      toolCalls: [{ name: 'write_file', arguments: { path: 'done.txt', content: 'done\n' } }],
      usage: { promptTokens: 110, completionTokens: 18 },
      ttfbMs: 3,
    },
    { text: 'Wrote done.txt.', usage: { promptTokens: 150, completionTokens: 5 }, ttfbMs: 3 },
  ],
  expect: {
    outcome: { status: 'completed' },
    files: { 'done.txt': { equals: 'done\n' } },
    budget: { modelCalls: 2 },
    trace: { retries: 1 },
  },
});
