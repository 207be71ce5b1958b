import { defineCase } from '../src/case.js';

// A session left by a crash has a tool call without its Observation (the journal says it
// started). The store repairs it (SES-7, SES-8) and the first request of the next run is sent
// paired, telling the model the outcome is unknown; the tool is not run again (ENG-10).
export default defineCase({
  id: 'crash-repaired',
  title: 'A stored session with an unpaired call (a crash) is repaired: the next request is sent paired.',
  tags: ['session', 'recovery'],
  real: false,
  files: { 'build.log': 'ok\n' },
  session: {
    history: [
      { role: 'user', content: 'Run the build and tell me how it went.' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'call_before_crash', name: 'read_file', arguments: '{"path":"build.log"}' }],
      },
    ],
    started: ['call_before_crash'],
  },
  prompt: 'Go on where you stopped.',
  script: [
    {
      toolCalls: [{ name: 'read_file', arguments: { path: 'build.log' } }],
      usage: { promptTokens: 190, completionTokens: 12 },
      ttfbMs: 3,
    },
    { text: 'The build log says ok.', usage: { promptTokens: 230, completionTokens: 7 }, ttfbMs: 3 },
  ],
  expect: {
    outcome: { status: 'completed' },
    pairing: { repaired: 1, firstRequestPaired: true },
    trajectory: { strict: ['read_file'] },
  },
});
