import { defineCase } from '../src/case.js';

// REAL-5 on the real model path: the server reports cached prompt tokens
// (prompt_tokens_details.cached_tokens); claw keeps them and prices them at the model's cached
// input price. gpt-4.1-mini in the default table: $0.40 input, $0.10 cached input, $1.60 output
// per million tokens.
//   call 1: 200 uncached × 0.40 + 800 cached × 0.10 + 50 out × 1.60 =  80 +  80 + 80  = 240
//   call 2: 200 uncached × 0.40 + 1000 cached × 0.10 + 20 out × 1.60 =  80 + 100 + 32  = 212
//   452 per million tokens = $0.000452 (all at the input price it would be $0.000888)
export default defineCase({
  id: 'cached-tokens-priced',
  title: 'Cached prompt tokens reported over HTTP are kept and priced at the model\'s cached input price: the run costs the hand-computed figure.',
  tags: ['cost', 'real-models', 'http'],
  real: false,
  model: { transport: 'openai-http', name: 'gpt-4.1-mini' },
  files: { 'data.csv': 'a,b\n1,2\n' },
  prompt: 'How many rows does data.csv have?',
  script: [
    {
      toolCalls: [{ name: 'read_file', arguments: { path: 'data.csv' } }],
      usage: { promptTokens: 1000, completionTokens: 50, cachedTokens: 800 },
      ttfbMs: 3,
    },
    { text: 'One row of data.', usage: { promptTokens: 1200, completionTokens: 20, cachedTokens: 1000 }, ttfbMs: 3 },
  ],
  expect: {
    outcome: { status: 'completed' },
    budget: { modelCalls: 2, sessionTokensFromScript: true, costUsd: 0.000452 },
  },
});
