import { defineCase } from '../src/case.js';

// REAL-5: a model whose price has no cached input price is charged the input price for its cached
// prompt tokens too (never less than they may cost). The case prices acme-coder itself: $3 input,
// $15 output per million tokens.
//   prompt 2000 + 2500 = 4500 × 3 = 13 500; output 100 + 40 = 140 × 15 = 2 100
//   15 600 per million tokens = $0.0156 (the 3 500 cached tokens cost as much as the others)
export default defineCase({
  id: 'cached-tokens-input-price',
  title: 'Cached prompt tokens of a model without a cached input price are charged at its input price.',
  tags: ['cost', 'real-models'],
  real: false,
  model: { name: 'acme-coder', price: { inputPerMillion: 3, outputPerMillion: 15 } },
  files: { 'main.go': 'package main\n' },
  prompt: 'Which package is main.go in?',
  script: [
    {
      toolCalls: [{ name: 'read_file', arguments: { path: 'main.go' } }],
      usage: { promptTokens: 2000, completionTokens: 100, cachedTokens: 1500 },
      ttfbMs: 3,
    },
    { text: 'Package main.', usage: { promptTokens: 2500, completionTokens: 40, cachedTokens: 2000 }, ttfbMs: 3 },
  ],
  expect: {
    outcome: { status: 'completed', finalText: 'Package main.' },
    budget: { modelCalls: 2, sessionTokensFromScript: true, costUsd: 0.0156 },
  },
});
