import { defineCase } from '../src/case.js';

// "Allow for this session" is kept as a grant (APR-2): the same call again is allowed without
// asking, and a different one asks again.
export default defineCase({
  id: 'session-grant',
  title: 'An allow-for-session answer covers the same call later; a different call asks again.',
  tags: ['boundary', 'approval'],
  approval: { default: 'allow_session' },
  prompt: 'Write the marker twice, then a second file.',
  script: [
    { toolCalls: [{ name: 'write_file', arguments: { path: 'marker.txt', content: 'x\n' } }], usage: { promptTokens: 90, completionTokens: 14 }, ttfbMs: 2 },
    { toolCalls: [{ name: 'write_file', arguments: { path: 'marker.txt', content: 'x\n' } }], usage: { promptTokens: 120, completionTokens: 14 }, ttfbMs: 2 },
    { toolCalls: [{ name: 'write_file', arguments: { path: 'other.txt', content: 'y\n' } }], usage: { promptTokens: 150, completionTokens: 14 }, ttfbMs: 2 },
    { text: 'Done.', usage: { promptTokens: 170, completionTokens: 2 }, ttfbMs: 2 },
  ],
  expect: {
    outcome: { status: 'completed' },
    boundary: { denied: [], asked: 2 },
    files: { 'marker.txt': { equals: 'x\n' }, 'other.txt': { equals: 'y\n' } },
  },
});
