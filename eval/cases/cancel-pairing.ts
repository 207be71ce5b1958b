import { defineCase } from '../src/case.js';

// Seed case 4: a cancel in the middle of a tool wave leaves every tool call paired.
export default defineCase({
  id: 'cancel-pairing',
  title: 'Canceling during a tool wave gives every call of the wave a "tool call canceled" Observation.',
  tags: ['seed', 'cancel'],
  prompt: 'Write notes.md, then fetch both reports.',
  tools: [{ name: 'fetch_report', delayMs: 30_000, result: 'report' }],
  cancel: { when: 'tool_started', tool: 'fetch_report' },
  script: [
    {
      toolCalls: [{ name: 'write_file', arguments: { path: 'notes.md', content: '# notes\n' } }],
      usage: { promptTokens: 120, completionTokens: 15 },
      ttfbMs: 3,
    },
    {
      toolCalls: [
        { name: 'fetch_report', arguments: { id: 'q1' } },
        { name: 'fetch_report', arguments: { id: 'q2' } },
      ],
      usage: { promptTokens: 160, completionTokens: 20 },
      ttfbMs: 3,
    },
  ],
  expect: {
    outcome: { status: 'canceled' },
    pairing: { canceled: 2 },
    files: { 'notes.md': { equals: '# notes\n' } },
  },
});
