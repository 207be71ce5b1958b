import { defineCase } from '../src/case.js';

// REAL-2: run in sub/ of a git repository, the model is given the user's own AGENTS.md, then the
// repository root's, then sub/'s — outer first, each in its own delimited block, after the
// environment block. A sibling folder's AGENTS.md is not on the way down and stays out.
export default defineCase({
  id: 'agents-md-nested',
  title: 'Nested AGENTS.md: run in sub/, the user\'s, the root\'s and sub/\'s instructions follow the environment block in that order, each delimited; a sibling\'s stay out.',
  tags: ['requests', 'real-models', 'instructions'],
  real: false,
  files: {
    '.git/HEAD': 'ref: refs/heads/main\n',
    'AGENTS.md': 'Root rule: run the tests with `make test`.\n',
    'sub/AGENTS.md': 'Sub rule: this folder is Python 3.12.\n',
    'sub/app.py': 'print("hi")\n',
    'other/AGENTS.md': 'Other rule: never applies here.\n',
  },
  userConfig: { 'AGENTS.md': 'User rule: answer briefly.\n' },
  workdir: 'sub',
  prompt: 'What does app.py print?',
  script: [
    {
      toolCalls: [{ name: 'read_file', arguments: { path: 'app.py' } }],
      usage: { promptTokens: 2100, completionTokens: 12 },
      ttfbMs: 3,
    },
    { text: 'It prints "hi".', usage: { promptTokens: 2150, completionTokens: 6 }, ttfbMs: 3 },
  ],
  expect: {
    outcome: { status: 'completed', finalText: 'It prints "hi".' },
    // The path is relative to sub/, where the run works.
    observations: [{ call: 1, error: false, contains: 'print("hi")' }],
    files: { 'sub/app.py': { unchanged: true } },
    requests: {
      system: {
        contains: [
          'Workspace root: {{workspace}}/sub\n',
          'Git: a git repository (root {{workspace}}), on branch main\n',
          '<instructions path="../AGENTS.md">\nRoot rule: run the tests with `make test`.\n</instructions>',
          '<instructions path="AGENTS.md">\nSub rule: this folder is Python 3.12.\n</instructions>',
          '/config/claw/AGENTS.md">\nUser rule: answer briefly.\n</instructions>',
        ],
        order: [
          '</environment>',
          '# Project instructions',
          '/config/claw/AGENTS.md">\n',
          'User rule',
          '</instructions>',
          '<instructions path="../AGENTS.md">\n',
          'Root rule',
          '</instructions>',
          '<instructions path="AGENTS.md">\n',
          'Sub rule',
          '</instructions>',
        ],
        absent: ['Other rule', 'other/AGENTS.md'],
        stable: true,
      },
    },
  },
});
