import { defineCase } from '../src/case.js';

// CMP-4: a session that compacted and then crashed before its next model call. The store holds
// the whole history and, after it, the compaction (the first five messages replaced by notes, the
// user's task kept). The next run loads it and its first request is the compacted view: the task
// verbatim, the notes, the latest step (cli.ts as read) and the new prompt; none of the replaced
// messages (the rules as read, the edit of api.ts). The run finishes the task from the notes, and
// the stored compaction stays. 2 model calls, no summary call.
const task = 'Validate the name in src/api.ts and src/cli.ts as docs/rules.md says; tell me when both are done.';

const rules = '# Validation rules\n\n- A name must not be empty: refuse it with the message "name is required".\n';
const cliBefore = 'export function run(name) {\n  return greet(name);\n}\n';
const cliAfter = 'export function run(name) {\n  if (name === \'\') throw new Error(\'name is required\');\n  return greet(name);\n}\n';
const api = 'export function handle(name) {\n  if (name === \'\') throw new Error(\'name is required\');\n  return { name };\n}\n';

const notes = [
  `Goal: ${task}`,
  'Done so far: read docs/rules.md (an empty name is refused with "name is required"); added the check to src/api.ts (handle).',
  'Remaining: the same check in src/cli.ts (run), then tell the user.',
].join('\n');

export default defineCase({
  id: 'resume-after-compaction',
  title: 'A session stored right after a compaction resumes from the compacted view: the next request holds the notes, not the replaced messages.',
  tags: ['compaction', 'session', 'recovery'],
  real: false,
  contextWindowTokens: 16_000,
  files: { 'docs/rules.md': rules, 'src/api.ts': api, 'src/cli.ts': cliBefore },
  session: {
    history: [
      { role: 'user', content: task },
      {
        role: 'assistant',
        content: 'I will read the rules first.',
        toolCalls: [{ id: 'call_seed_1', name: 'read_file', arguments: '{"path":"docs/rules.md"}' }],
      },
      { role: 'tool', toolCallId: 'call_seed_1', content: rules },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{
          id: 'call_seed_2',
          name: 'edit_file',
          arguments: JSON.stringify({ path: 'src/api.ts', old_string: '  return { name };', new_string: '  if (name === \'\') throw new Error(\'name is required\');\n  return { name };' }),
        }],
      },
      { role: 'tool', toolCallId: 'call_seed_2', content: 'edited src/api.ts (1 replacement)' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'call_seed_3', name: 'read_file', arguments: '{"path":"src/cli.ts"}' }],
      },
      { role: 'tool', toolCallId: 'call_seed_3', content: cliBefore },
    ],
    compaction: { upTo: 5, kept: [0], summary: notes, tokensBefore: 13_100, tokensAfter: 1_700 },
  },
  prompt: 'Go on where you left off.',
  script: [
    {
      toolCalls: [{
        name: 'edit_file',
        arguments: { path: 'src/cli.ts', old_string: '  return greet(name);', new_string: '  if (name === \'\') throw new Error(\'name is required\');\n  return greet(name);' },
      }],
      usage: { promptTokens: 1360, completionTokens: 40 },
      expectRequest: {
        isSummary: false,
        firstUser: task,
        contains: [`<summary>\n${notes}\n</summary>`, cliBefore, 'Go on where you left off.'],
        absent: ['# Validation rules', 'I will read the rules first.', 'return { name };'],
      },
    },
    { text: 'Both are done: src/api.ts and src/cli.ts refuse an empty name with "name is required".', usage: { promptTokens: 1420, completionTokens: 22 } },
  ],
  expect: {
    outcome: { status: 'completed', finalTextContains: 'Both are done' },
    files: { 'src/cli.ts': { equals: cliAfter }, 'src/api.ts': { unchanged: true } },
    trajectory: { strict: ['edit_file'] },
    budget: { modelCalls: 2, sessionTokensFromScript: true },
    compaction: { count: 0, summaryCalls: 0, storedUpTo: 'positive' },
  },
});
