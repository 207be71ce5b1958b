import type { Readable } from 'node:stream';
import { UsageError } from './errors.js';

/** The most a prompt takes from stdin: more would not fit a model's context anyway. */
export const maxPipedBytes = 1024 * 1024;

/** How long reading stdin goes on unseen before claw says what it waits for. */
export const pipedWaitNoteMs = 3000;

/** What `claw -p` reads from stdin, and when. */
export type StdinSource =
  /** A pipe or a file (`git diff | claw -p …`, `claw -p … < notes.md`): read to its end. */
  | 'piped'
  /** A terminal, /dev/null, a socket a parent process holds: left alone (unless `-p -`). */
  | 'other';

/**
 * The prompt of `claw -p`, with what was piped to it. `-p -` takes the whole prompt from stdin.
 * Otherwise piped text follows the prompt in a `<stdin>` block, so the model can tell the two
 * apart; nothing piped (or an empty pipe) leaves the prompt as it is.
 *
 * @throws UsageError when the input is over {@link maxPipedBytes}, is not UTF-8 text, or is
 *   empty where it is the whole prompt.
 */
export async function promptWithInput(
  prompt: string,
  stdin: Readable,
  options: { source: StdinSource; onWait: () => void },
): Promise<string> {
  const whole = prompt === '-';
  if (!whole && options.source !== 'piped') return prompt;
  const text = await readText(stdin, options.onWait);
  if (whole) {
    if (text.trim() === '') {
      throw new UsageError(
        '-p - takes the task from stdin, which was empty: pipe the task in, e.g. ' +
        'echo "explain main.ts" | claw -p -',
      );
    }
    return text;
  }
  if (text.trim() === '') return prompt;
  return `${prompt}\n\n<stdin>\n${text.endsWith('\n') ? text.slice(0, -1) : text}\n</stdin>`;
}

/** Reads `stdin` to its end as UTF-8 text; says once when that takes long (`onWait`). */
async function readText(stdin: Readable, onWait: () => void): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  const timer = setTimeout(onWait, pipedWaitNoteMs);
  try {
    for await (const chunk of stdin) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      size += bytes.length;
      if (size > maxPipedBytes) {
        throw new UsageError(
          `the input piped to claw is over ${maxPipedBytes / 1024 / 1024} MiB: give the model ` +
          'a smaller part of it, or name the file in the prompt and let it read what it needs',
        );
      }
      chunks.push(bytes);
    }
  } finally {
    clearTimeout(timer);
  }
  const all = Buffer.concat(chunks);
  try {
    if (all.includes(0)) throw new Error('NUL byte');
    return new TextDecoder('utf-8', { fatal: true }).decode(all);
  } catch {
    throw new UsageError(
      'the input piped to claw is not UTF-8 text: pipe text in, or name the file in the prompt ' +
      '(give claw < /dev/null to pipe nothing)',
    );
  }
}
