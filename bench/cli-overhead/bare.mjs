// The baseline of the cli-overhead benchmark: a bare agent loop on the openai package, run as its
// own process the way `claw -p` is (environment: OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_MODEL;
// argument: the workspace). It streams chat completions with the read_file tool, reads the files
// a turn asks for in parallel and appends the messages, until the model answers without tools,
// then prints the answer. Nothing else: no session file, no journal, no traces.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import OpenAI from 'openai';

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

const messages = [{ role: 'user', content: prompt }];
for (;;) {
  const stream = await client.chat.completions.create({
    model: process.env.OPENAI_MODEL ?? 'gpt-4.1-mini',
    messages,
    tools,
    stream: true,
    stream_options: { include_usage: true },
  });
  let content = '';
  const calls = [];
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta;
    if (delta?.content) content += delta.content;
    for (const piece of delta?.tool_calls ?? []) {
      const call = (calls[piece.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
      if (piece.id) call.id = piece.id;
      if (piece.function?.name) call.function.name = piece.function.name;
      call.function.arguments += piece.function?.arguments ?? '';
    }
  }
  messages.push(calls.length > 0 ? { role: 'assistant', content: content || null, tool_calls: calls } : { role: 'assistant', content });
  if (calls.length === 0) {
    process.stdout.write(`${content}\n`);
    break;
  }
  const results = await Promise.all(
    calls.map((call) => readFile(path.join(workDir, JSON.parse(call.function.arguments).path), 'utf8')),
  );
  results.forEach((result, index) => messages.push({ role: 'tool', tool_call_id: calls[index].id, content: result }));
}
