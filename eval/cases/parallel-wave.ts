import { defineCase } from '../src/case.js';

// The tool calls of one reply run in parallel (ENG-2): the wave takes about as long as its
// slowest tool, not the sum (BUD-4 counts its wall time once).
export default defineCase({
  id: 'parallel-wave',
  title: 'A wave of three tools (60, 120, 180 ms) takes about the slowest tool\'s time, not the sum.',
  tags: ['timing', 'tools'],
  prompt: 'Look up the three services.',
  tools: [{
    name: 'lookup',
    delayMs: (args) => Number(args.ms),
    result: (args) => `service ${String(args.name)} is up`,
  }],
  script: [
    {
      toolCalls: [
        { name: 'lookup', arguments: { name: 'auth', ms: 60 } },
        { name: 'lookup', arguments: { name: 'billing', ms: 120 } },
        { name: 'lookup', arguments: { name: 'search', ms: 180 } },
      ],
      usage: { promptTokens: 140, completionTokens: 40 },
      ttfbMs: 3,
    },
    { text: 'All three services are up.', usage: { promptTokens: 220, completionTokens: 8 }, ttfbMs: 3 },
  ],
  expect: {
    outcome: { status: 'completed' },
    trajectory: { counts: { lookup: 3 } },
    trace: { waveWall: 'slowest' },
  },
});
