import { defineCase } from '../src/case.js';

// A model that sends nothing is stopped by the first-token timeout (PRV-5) and the call is
// retried; the retry answers and the run completes. (The harness skips the timeout's wait.)
export default defineCase({
  id: 'first-token-timeout',
  title: 'A model that hangs hits the first-token timeout; the retried call answers.',
  tags: ['provider', 'http', 'timing'],
  real: false,
  model: { transport: 'openai-http', retries: 1, firstTokenTimeoutMs: 15_000 },
  prompt: 'Say hello.',
  script: [
    { fault: { type: 'hang' } },
    { text: 'Hello!', usage: { promptTokens: 90, completionTokens: 3 }, ttfbMs: 3 },
  ],
  expect: {
    outcome: { status: 'completed', finalText: 'Hello!' },
    budget: { modelCalls: 1 },
    trace: { retries: 1 },
  },
});
