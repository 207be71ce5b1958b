import { defineCase } from '../src/case.js';

// REAL-1: every request starts with claw's system prompt and its environment block (where the
// workspace is, the git branch, the approval mode; no bash line when bash is not offered), and
// the text is byte-identical in every request of a run with tool calls (prefix caching).
export default defineCase({
  id: 'system-prompt-stable',
  title: 'The system prompt and its environment block lead the first request and are byte-identical in every request of a run with tool calls.',
  tags: ['requests', 'real-models'],
  real: false,
  files: {
    '.git/HEAD': 'ref: refs/heads/eval-branch\n',
    'notes.txt': 'todo: ship\n',
  },
  prompt: 'Mark the todo in notes.txt as done.',
  script: [
    {
      toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }],
      usage: { promptTokens: 1900, completionTokens: 14 },
      ttfbMs: 3,
    },
    {
      toolCalls: [{ name: 'edit_file', arguments: { path: 'notes.txt', old_string: 'todo: ship', new_string: 'done: ship' } }],
      usage: { promptTokens: 1960, completionTokens: 30 },
      ttfbMs: 3,
    },
    { text: 'Marked it done.', usage: { promptTokens: 2010, completionTokens: 5 }, ttfbMs: 3 },
  ],
  expect: {
    outcome: { status: 'completed', finalText: 'Marked it done.' },
    files: { 'notes.txt': { equals: 'done: ship\n' } },
    trajectory: { strict: ['read_file', 'edit_file'] },
    budget: { modelCalls: 3 },
    requests: {
      system: {
        contains: [
          'You are claw, a coding agent.',
          'Workspace root: {{workspace}}\n',
          'Git: a git repository (root {{workspace}}), on branch eval-branch\n',
          'Approval: ask: ',
        ],
        order: [
          'You are claw, a coding agent.',
          '\n\n# Environment\n<environment>\nWorkspace root: ',
          '\nPlatform: ',
          '\nShell: ',
          '\nDate: ',
          '\nGit: ',
          '\nApproval: ',
          '\n</environment>',
        ],
        // The eval offers no bash, and the workspace has no AGENTS.md.
        absent: ['\nBash: ', '# Project instructions'],
        stable: true,
      },
    },
  },
});
