import { defineCase } from '../src/case.js';

// Canary: a session stored right after a compaction, and a harness fault that drops the message
// standing for the replaced part (the notes) from every request, as a view that forgot it would.
// The compaction scorer must see that the run's first request is not the compacted view.
const task = 'Rename the setting in config.ts from timeout to timeoutMs.';

export default defineCase({
  id: 'canary-compaction',
  title: 'Canary: a request that leaves out the notes of a stored compaction must fail the compaction scorer.',
  tags: ['canary'],
  canary: 'compaction',
  real: false,
  faults: { dropSummary: true },
  files: { 'config.ts': 'export const timeoutMs = 30;\n' },
  session: {
    history: [
      { role: 'user', content: task },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_seed_1', name: 'read_file', arguments: '{"path":"config.ts"}' }] },
      { role: 'tool', toolCallId: 'call_seed_1', content: 'export const timeout = 30;\n' },
      { role: 'assistant', content: 'Renamed it.' },
    ],
    compaction: { upTo: 3, summary: 'Goal: rename timeout to timeoutMs in config.ts. Done so far: read config.ts.' },
  },
  prompt: 'Is it done?',
  script: [{ text: 'Yes: config.ts exports timeoutMs.', usage: { promptTokens: 60, completionTokens: 9 } }],
  expect: { compaction: { storedUpTo: 'positive' } },
});
