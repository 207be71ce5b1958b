import { defineCase } from '../src/case.js';

// ENG-3: a model that calls a tool it was not offered (a hallucinated name) gets an error
// Observation naming the tools it has, and goes on; nothing runs for the unknown call, and the
// app is told of it under the name the model used.
export default defineCase({
  id: 'unknown-tool',
  title: 'A call to a tool that does not exist gets an error naming the tools there are; the run goes on.',
  tags: ['tools', 'recovery'],
  // The script makes the model call a tool it does not have; a real model would not.
  real: false,
  files: { 'notes.txt': 'deploy with make release\n' },
  prompt: 'Deploy the project to production.',
  script: [
    { toolCalls: [{ name: 'deploy', arguments: { env: 'prod' } }], usage: { promptTokens: 120, completionTokens: 12 } },
    { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }], usage: { promptTokens: 180, completionTokens: 10 } },
    { text: 'There is no deploy tool here; notes.txt says to run `make release`.', usage: { promptTokens: 220, completionTokens: 16 } },
  ],
  expect: {
    outcome: { status: 'completed', finalTextContains: 'make release' },
    observations: [
      { call: 1, error: true, contains: 'unknown tool "deploy"' },
      { call: 1, error: true, contains: 'call one of the available tools: read_file, write_file, edit_file' },
      { call: 2, error: false, contains: 'deploy with make release' },
    ],
    trajectory: { strict: ['deploy', 'read_file'] },
    reports: { results: 2, started: 1 },
  },
});
