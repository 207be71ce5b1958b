import { defineCase } from '../src/case.js';

// With no retries left, a model that hangs fails the run with the first-token timeout's own
// error (PRV-5), and no tool ever runs.
export default defineCase({
  id: 'first-token-timeout-fails',
  title: 'Without retries, a hanging model fails the run with "model first token timed out".',
  tags: ['provider', 'http', 'timing'],
  real: false,
  model: { transport: 'openai-http', retries: 0, firstTokenTimeoutMs: 15_000 },
  prompt: 'Say hello.',
  script: [{ fault: { type: 'hang' } }],
  expect: {
    outcome: { status: 'failed', errorCode: 'model_first_token_timeout' },
    budget: { modelCalls: 1 },
    trajectory: { forbidden: ['write_file', 'edit_file'] },
  },
});
