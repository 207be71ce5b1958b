// The baseline of the cli-overhead benchmark: a bare agent loop on the openai package, run as its
// own process the way `claw -p` is (environment: OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_MODEL;
// argument: the workspace). It streams chat completions with the read_file tool, reads the files
// a turn asks for in parallel and appends the messages, until the model answers without tools,
// then prints the answer. Nothing else: no session file, no journal, no traces.
import OpenAI from 'openai';
import { bareLoop } from '../bare-loop.mjs';

const [prompt, workDir] = process.argv.slice(2);
const client = new OpenAI({
  apiKey: process.env.OPENAI_API_KEY,
  baseURL: process.env.OPENAI_BASE_URL,
  maxRetries: 0,
});
// The definition claw's read_file sends, written out so that the baseline loads only openai.
const tools = [
  {
    type: 'function',
    function: {
      name: 'read_file',
      description:
        'Read a text file in the workspace. `path` is relative to the workspace root. Returns the ' +
        'raw lines from `offset` (1-based, default 1), at most `limit` lines (default 2000). Long ' +
        'output is cut and ends with a note giving the offset to continue from. Directories and ' +
        'binary files are refused.',
      parameters: {
        type: 'object',
        properties: {
          path: { type: 'string', minLength: 1, description: 'File path relative to the workspace root.' },
          offset: { type: 'integer', minimum: 1, description: '1-based number of the first line to return. Default 1.' },
          limit: { type: 'integer', minimum: 1, description: 'Maximum number of lines to return. Default 2000.' },
        },
        required: ['path'],
      },
    },
  },
];

const answer = await bareLoop({
  client,
  model: process.env.OPENAI_MODEL ?? 'gpt-4.1-mini',
  tools,
  prompt,
  workDir,
});
process.stdout.write(`${answer}\n`);
