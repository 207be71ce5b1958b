import { defineCase } from '../src/case.js';

// Canary: the harness loses the synthetic "tool call canceled" Observation of one call, as a
// cancel that drops a result would. The pairing scorer must see the unpaired call.
export default defineCase({
  id: 'canary-pairing',
  title: 'Canary: a cancel that loses one synthetic result must fail the pairing scorer.',
  tags: ['canary'],
  canary: 'pairing',
  real: false,
  faults: { dropCanceledObservation: true },
  tools: [{ name: 'slow', delayMs: 30_000 }],
  cancel: { when: 'tool_started' },
  prompt: 'Run the two slow jobs.',
  script: [
    {
      toolCalls: [{ name: 'slow', arguments: { job: 1 } }, { name: 'slow', arguments: { job: 2 } }],
      usage: { promptTokens: 50, completionTokens: 10 },
    },
  ],
  expect: { outcome: { status: 'canceled' }, pairing: { canceled: 2 } },
});
