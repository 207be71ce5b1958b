// The bare baseline the benchmarks compare claw against: an agent loop written with only the
// openai package. It streams chat completions with tools, reads the files a turn asks for in
// parallel, appends the messages, and stops at a reply without tool calls, returning its text.
// Nothing else: no session, no journal, no approval, no traces.
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * @param {{ client: import('openai').default, model: string, tools: unknown[], prompt: string,
 *   workDir: string, onTurn?: () => void }} options
 */
export async function bareLoop({ client, model, tools, prompt, workDir, onTurn }) {
  const messages = [{ role: 'user', content: prompt }];
  for (;;) {
    onTurn?.();
    const stream = await client.chat.completions.create({
      model,
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
    if (calls.length === 0) return content;
    const results = await Promise.all(
      calls.map((call) => readFile(path.join(workDir, JSON.parse(call.function.arguments).path), 'utf8')),
    );
    results.forEach((result, index) => messages.push({ role: 'tool', tool_call_id: calls[index].id, content: result }));
  }
}

/** The definition claw's read_file sends, written out so that the baselines load only openai. */
export const tools = [
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

/** The value below which `p` percent of `values` lie. */
export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export const median = (values) => percentile(values, 50);

/**
 * The other builds a benchmark runs as more contenders, interleaved with the others
 * (`BENCH_COMPARE`: their `main.js` paths, comma-separated), named "claw B", "claw C", …
 */
export function comparedBuilds(env = process.env) {
  return (env.BENCH_COMPARE ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry, index) => ({
      name: `claw ${String.fromCharCode(66 + index)}`,
      main: path.resolve(entry),
    }));
}

/**
 * Ratios of two contenders, one per run (they ran back to back in each), as text: their median
 * and middle half, which show how much the machine moved between runs.
 */
export function ratioSpread(ratios) {
  const times = (value) => (Number.isFinite(value) ? `${value.toFixed(3)}x` : 'n/a');
  return (
    `median ${times(median(ratios))}, middle half ${times(percentile(ratios, 25))} … ` +
    `${times(percentile(ratios, 75))}`
  );
}
