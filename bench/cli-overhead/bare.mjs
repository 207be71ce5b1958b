// The baseline of the cli-overhead benchmark: a bare agent loop on the openai package, run as its
// own process the way `claw -p` is (environment: OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_MODEL;
// argument: the workspace). It streams chat completions with the read_file tool, reads the files
// a turn asks for in parallel and appends the messages, until the model answers without tools,
// then prints the answer. Nothing else: no session file, no journal, no traces.
import OpenAI from 'openai';
import { bareLoop, tools } from '../bare-loop.mjs';

const [prompt, workDir] = process.argv.slice(2);
const client = new OpenAI({
  apiKey: process.env.OPENAI_API_KEY,
  baseURL: process.env.OPENAI_BASE_URL,
  maxRetries: 0,
});

const answer = await bareLoop({
  client,
  model: process.env.OPENAI_MODEL ?? 'gpt-4.1-mini',
  tools,
  prompt,
  workDir,
});
process.stdout.write(`${answer}\n`);
