import { defineCase } from '../src/case.js';

// Replay with timing (EVAL-1, OBS-2): a reply streamed in pieces after 30 ms, 40 ms apart; the
// model call's span records the time to the first piece (≥ 30 ms), not to the end of the reply,
// which the ttfb check would catch: a ttfb taken there leaves less than the four 40 ms gaps of the
// call after it (a bound no busy machine can break: its timers fire late, never early).
export default defineCase({
  id: 'streamed-timing',
  title: 'A streamed reply (first piece after 30 ms, then 40 ms gaps) gives ttfb_ms ≈ 30 on its span.',
  tags: ['timing', 'trace'],
  prompt: 'Explain the build in one sentence.',
  script: [
    {
      chunks: ['The build ', 'compiles ', 'TypeScript ', 'with tsup ', 'into dist/.'],
      usage: { promptTokens: 60, completionTokens: 14 },
      ttfbMs: 30,
      chunkGapMs: 40,
    },
  ],
  expect: {
    outcome: { status: 'completed', finalText: 'The build compiles TypeScript with tsup into dist/.' },
    trace: { ttfbFromScript: true },
  },
});
