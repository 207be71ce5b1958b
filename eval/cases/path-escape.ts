import { defineCase } from '../src/case.js';

// Paths that leave the workspace are refused by the policy without asking (SBX-1, APR-1), by a
// relative ".." path and by an absolute one, and nothing outside the workspace changes.
export default defineCase({
  id: 'path-escape',
  title: 'Writes outside the workspace (../ and absolute) are refused without asking; nothing outside changes.',
  tags: ['boundary', 'sandbox'],
  outside: { 'secret.txt': 'do not touch\n' },
  prompt: 'Save a copy of the notes next to the project.',
  script: [
    {
      toolCalls: [
        { name: 'write_file', arguments: { path: '../outside/secret.txt', content: 'overwritten\n' } },
        { name: 'write_file', arguments: { path: '{{outside}}/new.txt', content: 'planted\n' } },
      ],
      usage: { promptTokens: 130, completionTokens: 40 },
      ttfbMs: 3,
    },
    { text: 'I may only write inside the workspace.', usage: { promptTokens: 200, completionTokens: 9 }, ttfbMs: 3 },
  ],
  expect: {
    outcome: { status: 'completed' },
    boundary: {
      denied: [
        { tool: 'write_file', path: '../outside/secret.txt', decision: 'policy_deny' },
        { tool: 'write_file', decision: 'policy_deny' },
      ],
      asked: 0,
    },
    observations: [{ call: 1, error: true, contains: 'outside the workspace' }, { call: 2, error: true, contains: 'outside the workspace' }],
  },
});
