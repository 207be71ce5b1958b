import { defineCase } from '../src/case.js';

// edit_file refuses an old_string that occurs twice and says how often (TOOL-3); the model adds
// context to make it unique and the edit lands on the right line.
export default defineCase({
  id: 'edit-two-matches',
  title: 'An edit whose old_string matches twice is refused with the count; a unique one succeeds.',
  tags: ['tools', 'recovery'],
  files: { 'todo.py': 'def a():\n    pass  # TODO\n\ndef b():\n    pass  # TODO\n' },
  prompt: 'Implement b() so that it returns 2.',
  script: [
    {
      toolCalls: [{ name: 'edit_file', arguments: { path: 'todo.py', old_string: '    pass  # TODO', new_string: '    return 2' } }],
      usage: { promptTokens: 160, completionTokens: 30 },
      ttfbMs: 3,
    },
    {
      toolCalls: [{
        name: 'edit_file',
        arguments: { path: 'todo.py', old_string: 'def b():\n    pass  # TODO', new_string: 'def b():\n    return 2' },
      }],
      usage: { promptTokens: 230, completionTokens: 36 },
      ttfbMs: 3,
    },
    { text: 'b() now returns 2.', usage: { promptTokens: 270, completionTokens: 7 }, ttfbMs: 3 },
  ],
  expect: {
    outcome: { status: 'completed' },
    trajectory: { strict: ['edit_file', 'edit_file'] },
    observations: [
      { call: 1, error: true, contains: 'old_string occurs 2 times' },
      { call: 2, error: false, contains: 'replaced 1 occurrence' },
    ],
    files: { 'todo.py': { equals: 'def a():\n    pass  # TODO\n\ndef b():\n    return 2\n' } },
  },
});
