import { defineCase } from '../src/case.js';

// A subagent started by the run (ENG-9) uses the same model; its tokens land in the parent's
// session and its spans under the parent's run (RunSub). Its requests are a conversation of
// their own, with their own system message.
export default defineCase({
  id: 'subagent-tokens',
  title: 'A subagent\'s model calls are counted in the parent session\'s tokens and traced under its run.',
  tags: ['subagent', 'budget'],
  subagents: true,
  files: { 'README.md': '# tool\n\nConverts CSV to JSON.\n' },
  prompt: 'Have a helper summarize the README.',
  script: [
    {
      toolCalls: [{ name: 'spawn_subagent', arguments: { task: 'Summarize README.md in one line.' } }],
      usage: { promptTokens: 300, completionTokens: 25 },
      ttfbMs: 3,
    },
    {
      toolCalls: [{ name: 'read_file', arguments: { path: 'README.md' } }],
      usage: { promptTokens: 120, completionTokens: 14 },
      ttfbMs: 3,
    },
    { text: 'A CSV to JSON converter.', usage: { promptTokens: 160, completionTokens: 8 }, ttfbMs: 3 },
    { text: 'The helper says: a CSV to JSON converter.', usage: { promptTokens: 350, completionTokens: 12 }, ttfbMs: 3 },
  ],
  expect: {
    outcome: { status: 'completed', finalTextContains: 'CSV to JSON' },
    budget: { modelCalls: 4, sessionTokensFromScript: true },
    trace: { subagentRuns: 1 },
    trajectory: { strict: ['spawn_subagent'] },
    // The subagent's requests carry a system message of their own, stable in turn (REAL-1).
    requests: {
      system: {
        contains: ['You are claw, a coding agent.'],
        absent: ['You are a helper of claw'],
        stable: true,
      },
    },
  },
});
