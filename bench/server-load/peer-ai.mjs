// A peer contender of the server-load benchmark (PERF-4): the same sessions as claw-server's,
// written on the AI SDK (`ai`, pinned in bench/package.json with `@ai-sdk/openai-compatible` and
// `zod`) the way its docs show, in one process, its state in memory (its default: the SDK keeps
// nothing anywhere else).
//
// - The model: `createOpenAICompatible({ baseURL, name, apiKey }).chatModel(id)` (the provider's
//   README; https://ai-sdk.dev/providers/openai-compatible-providers), Chat Completions on the
//   fake model. `includeUsage: true`, because claw and the bare loop ask for usage too.
// - The tool loop: `streamText({ model, system, tools, stopWhen: stepCountIs(20), messages })`, a
//   `tool({ description, inputSchema: z.object(…), execute })` (Tool Calling, "Multi-Step Calls
//   (using stopWhen)": https://ai-sdk.dev/docs/ai-sdk-core/tools-and-tool-calling). The SDK runs
//   the 4 calls of a step at once and keeps the messages in memory from step to step.
// - Streamed, as the bare loop (bare-loop.mjs) and claw stream from the model: `streamText`, its
//   `fullStream` read to the end part by part (Generating Text, "fullStream property":
//   https://ai-sdk.dev/docs/ai-sdk-core/generating-text), as an app that forwards them would.
// - After the task, the session keeps its history in memory for the next prompt:
//   `messages.push(...(await result.response).messages)` (Tool Calling, "Response Messages").
//
// A session is one task, as with claw-server (one prompt, 10 turns of 4 read_file, the answer):
// the loop is the SDK's, within one `streamText`. The read_file tool reads the file from the
// workspace, as the bare loop does (whole, in parallel). Settings, timing and the handshake with
// main.mjs: in-process.mjs.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import { runSessions, settings } from './in-process.mjs';

const { baseURL, workDir, prompt } = settings;

const provider = createOpenAICompatible({
  baseURL,
  name: 'bench',
  apiKey: 'bench',
  includeUsage: true,
});
const model = provider.chatModel('bench-model');

// The definition claw's read_file sends (as bare-loop.mjs's `tools`).
const tools = {
  read_file: tool({
    description:
      'Read a text file in the workspace. `path` is relative to the workspace root. Returns the ' +
      'raw lines from `offset` (1-based, default 1), at most `limit` lines (default 2000). Long ' +
      'output is cut and ends with a note giving the offset to continue from. Directories and ' +
      'binary files are refused.',
    inputSchema: z.object({
      path: z.string().min(1).describe('File path relative to the workspace root.'),
      offset: z.number().int().min(1).optional()
        .describe('1-based number of the first line to return. Default 1.'),
      limit: z.number().int().min(1).optional()
        .describe('Maximum number of lines to return. Default 2000.'),
    }),
    execute: async ({ path: file }) => readFile(path.join(workDir, file), 'utf8'),
  }),
};

// A short system prompt, as the Agents SDK peer's instructions.
const system = 'You are a coding agent. Read the files the user asks for.';

/** Each session's conversation, kept in memory (as an app would, for the session's next prompt). */
const histories = [];

await runSessions(async (index) => {
  const messages = [{ role: 'user', content: prompt }];
  histories[index] = messages;
  const result = streamText({ model, system, tools, stopWhen: stepCountIs(20), messages });
  for await (const part of result.fullStream) {
    // streamText reports errors as parts of the stream rather than throwing them.
    if (part.type === 'error') throw part.error;
  }
  messages.push(...(await result.response).messages);
  return result.text;
});
