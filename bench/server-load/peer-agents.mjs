// A peer contender of the server-load benchmark (PERF-4): the same sessions as claw-server's,
// written on the OpenAI Agents SDK (`@openai/agents`, pinned in bench/package.json with `zod`)
// the way its docs show, in one process, its state in memory (its default: no `session` given, so
// nothing is stored anywhere).
//
// - SDK-wide settings once at start-up (Configuration:
//   https://openai.github.io/openai-agents-js/guides/config/): `setDefaultOpenAIClient(new
//   OpenAI({ baseURL, apiKey }))` on the fake model, `setOpenAIAPI('chat_completions')` (the fake
//   model, like most servers that are not OpenAI's, speaks Chat Completions only), and
//   `setTracingDisabled(true)`: its tracing is on by default and exports to OpenAI's servers.
// - `new Agent({ name, instructions, model, tools: [tool({ name, description, parameters:
//   z.object(…), execute })] })` (Agents and Tools, "Function tools":
//   https://openai.github.io/openai-agents-js/guides/agents/,
//   https://openai.github.io/openai-agents-js/guides/tools/). The SDK runs the 4 calls of a turn at
//   once. Its zod parameters are strict: the optional fields are `.nullable().optional()`.
// - `run(agent, input, { stream: true, maxTurns })`, its events read to the end, then
//   `await result.completed` (Streaming: https://openai.github.io/openai-agents-js/guides/streaming/),
//   streamed as the bare loop (bare-loop.mjs) and claw stream from the model. `maxTurns: 20`: a
//   task is 11 model calls and the default (10) would stop it (Running agents:
//   https://openai.github.io/openai-agents-js/guides/running-agents/).
// - After the task, the session keeps `result.history` in memory as the next prompt's input
//   (Running agents, "Conversations / chat threads").
//
// A session is one task, as with claw-server (one prompt, 10 turns of 4 read_file, the answer):
// the loop is the SDK's, within one `run`. The read_file tool reads the file from the workspace,
// as the bare loop does (whole). Settings, timing and the handshake with main.mjs:
// in-process.mjs.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  Agent,
  run,
  setDefaultOpenAIClient,
  setOpenAIAPI,
  setTracingDisabled,
  tool,
} from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';
import { runSessions, settings } from './in-process.mjs';

const { baseURL, workDir, prompt } = settings;

setDefaultOpenAIClient(new OpenAI({ baseURL, apiKey: 'bench' }));
setOpenAIAPI('chat_completions');
setTracingDisabled(true);

// The definition claw's read_file sends (as bare-loop.mjs's `tools`).
const readFileTool = tool({
  name: 'read_file',
  description:
    'Read a text file in the workspace. `path` is relative to the workspace root. Returns the ' +
    'raw lines from `offset` (1-based, default 1), at most `limit` lines (default 2000). Long ' +
    'output is cut and ends with a note giving the offset to continue from. Directories and ' +
    'binary files are refused.',
  parameters: z.object({
    path: z.string().min(1).describe('File path relative to the workspace root.'),
    offset: z.number().int().min(1).nullable().optional()
      .describe('1-based number of the first line to return. Default 1.'),
    limit: z.number().int().min(1).nullable().optional()
      .describe('Maximum number of lines to return. Default 2000.'),
  }),
  execute: async ({ path: file }) => readFile(path.join(workDir, file), 'utf8'),
});

const agent = new Agent({
  name: 'Assistant',
  instructions: 'You are a coding agent. Read the files the user asks for.',
  model: 'bench-model',
  tools: [readFileTool],
});

/** Each session's conversation, kept in memory (as an app would, for the session's next prompt). */
const histories = [];

await runSessions(async (index) => {
  const result = await run(agent, prompt, { stream: true, maxTurns: 20 });
  for await (const event of result) {
    // Each event as an app that forwards them sees it; nothing to do with them here.
    void event;
  }
  await result.completed;
  if (result.error !== null && result.error !== undefined) throw result.error;
  histories[index] = result.history;
  return result.finalOutput;
});
