// The baseline of the server-load benchmark: one process running `sessions` bare agent loops on
// the openai package at once (bare-loop.mjs, one shared client), each doing the same task as a
// claw-server session: turns of parallel read_file calls against the fake model, until it
// answers. Nothing else: no session file, no journal, no events, no clients.
//
// Given a folder (`sessionsDir`), the loops are durable, the least a session can do to be: each
// one appends its messages to a file of its own there, a JSON line each, and has the model's
// answer on disk (fsync, as claw's session store does) before its tool calls run or the answer is
// returned; the tool results go down with the next answer's fsync. One fsync a turn.
//
// Settings, timing and the handshake with main.mjs: in-process.mjs.
import { open } from 'node:fs/promises';
import path from 'node:path';
import OpenAI from 'openai';
import { bareLoop, tools } from '../bare-loop.mjs';
import { runSessions, settings } from './in-process.mjs';

const { baseURL, workDir, sessions, prompt, sessionsDir } = settings;
const client = new OpenAI({ apiKey: 'bench', baseURL, maxRetries: 0 });

/** Session `index`'s writer (durable loops only): appends the messages, fsyncs when asked. */
async function sessionFile(index) {
  const file = await open(path.join(sessionsDir, `session-${index}.jsonl`), 'a');
  return async (added, sync) => {
    await file.write(added.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
    if (sync) await file.sync();
  };
}

// Opened before the clock starts, as claw-server's clients open their sessions before they prompt.
const writers = sessionsDir === undefined
  ? []
  : await Promise.all(Array.from({ length: sessions }, (_, index) => sessionFile(index)));

await runSessions((index) =>
  bareLoop({
    persist: writers[index],
    client,
    model: 'bench-model',
    tools,
    prompt,
    workDir,
  }),
);
