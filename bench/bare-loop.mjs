// The bare baseline the benchmarks compare claw against: an agent loop written with only the
// openai package. It streams chat completions with tools, reads the files a turn asks for in
// parallel, appends the messages, and stops at a reply without tool calls, returning its text.
// Nothing else: no session, no journal, no approval, no traces. `persist`, when given, is handed
// each message as the loop adds it (the server benchmark's durable bare loop writes them down).
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * @param {{ client: import('openai').default, model: string, tools: unknown[], prompt: string,
 *   workDir: string, onTurn?: () => void,
 *   persist?: (added: object[], sync: boolean) => Promise<void> }} options
 *   `persist(added, sync)`: the messages just added; `sync` when they must be on disk before the
 *   loop goes on (the model's answer, before its tool calls run or the loop returns it).
 */
export async function bareLoop({ client, model, tools, prompt, workDir, onTurn, persist }) {
  const messages = [{ role: 'user', content: prompt }];
  if (persist) await persist(messages, false);
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
    const answer = calls.length > 0 ? { role: 'assistant', content: content || null, tool_calls: calls } : { role: 'assistant', content };
    messages.push(answer);
    if (persist) await persist([answer], true);
    if (calls.length === 0) return content;
    const results = await Promise.all(
      calls.map((call) => readFile(path.join(workDir, JSON.parse(call.function.arguments).path), 'utf8')),
    );
    const added = results.map((result, index) => ({ role: 'tool', tool_call_id: calls[index].id, content: result }));
    messages.push(...added);
    if (persist) await persist(added, false);
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
    .map((entry, index) => {
      const name = `claw ${String.fromCharCode(66 + index)}`;
      return { name, main: buildMain(entry, `BENCH_COMPARE (${name})`) };
    });
}

/**
 * The `main.js` of a build to run (`setting` names where it came from, for the error), checked:
 * it exists, and the nearest package.json above it says `"type": "module"`, as each app's own
 * does. Without one, Node 20 loads the bundle by syntax detection instead (a failed CommonJS
 * parse first), which leaves the heap in another state when the turns start: the same build then
 * measured 3–4% lower on claw's per-turn median and higher on p95, so a copy made without its
 * package.json would pass for a faster build.
 *
 * @throws Error saying what is wrong and how to copy a build so that it can be compared.
 */
export function buildMain(file, setting) {
  const main = path.resolve(file);
  const howToCopy =
    'Copy the app folder with its package.json (e.g. `mkdir ../before && cp -r apps/cli/dist ' +
    'apps/cli/package.json ../before/`, apps/server for claw-server) and pass the main.js in it.';
  if (!existsSync(main)) throw new Error(`${setting}: ${main} does not exist. ${howToCopy}`);
  for (let folder = path.dirname(main); ; folder = path.dirname(folder)) {
    const manifest = path.join(folder, 'package.json');
    if (existsSync(manifest)) {
      let type;
      try {
        type = JSON.parse(readFileSync(manifest, 'utf8')).type;
      } catch {
        type = undefined;
      }
      if (type === 'module') return main;
      throw new Error(
        `${setting}: ${manifest}, the package.json nearest to ${main}, does not say ` +
        `"type": "module", so Node would not load the build as the app is run. ${howToCopy}`,
      );
    }
    if (path.dirname(folder) === folder) {
      throw new Error(
        `${setting}: no package.json above ${main}, so Node would load the build by syntax ` +
        `detection, not as the app is run (it measures a few percent apart). ${howToCopy}`,
      );
    }
  }
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
