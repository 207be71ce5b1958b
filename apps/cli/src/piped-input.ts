import type { Readable } from 'node:stream';
import { UsageError } from './errors.js';

/** The most a prompt takes from stdin: more would not fit a model's context anyway. */
export const maxPipedBytes = 1024 * 1024;

/** How long reading stdin goes on unseen before claw says what it waits for. */
export const pipedWaitNoteMs = 3000;

/**
 * How long a pipe on stdin may stay silent before claw goes on without it: a pipe that a parent
 * process holds open and never writes to (a CI runner, another agent's shell) would otherwise
 * keep `claw -p` waiting for ever.
 */
export const pipeFirstDataMs = 5000;

/** What `claw -p` reads from stdin, and when. */
export type StdinSource =
  /** A pipe (`git diff | claw -p …`): read to its end, if it starts within 5 s. */
  | 'pipe'
  /** A file (`claw -p … < notes.md`): read to its end. */
  | 'file'
  /** A terminal, /dev/null, a socket a parent process holds: left alone (unless `-p -`). */
  | 'other';

/** What `promptWithInput` tells while it reads. */
export interface PipedInputNotes {
  /** The input is still coming after {@link pipedWaitNoteMs}: say what claw waits for. */
  onWait: () => void;
  /** Nothing came on the pipe within {@link pipeFirstDataMs}: claw goes on without it. */
  onNothing: () => void;
}

/**
 * The prompt of `claw -p`, with what was piped to it. `-p -` takes the whole prompt from stdin
 * (waiting as long as it takes). Otherwise piped text follows the prompt in a `<stdin>` block, so
 * the model can tell the two apart; nothing piped (an empty pipe, or one silent for 5 s) leaves
 * the prompt as it is.
 *
 * @throws UsageError when the input is over {@link maxPipedBytes}, is not UTF-8 text, or is
 *   empty where it is the whole prompt.
 */
export async function promptWithInput(
  prompt: string,
  stdin: Readable,
  options: PipedInputNotes & { source: StdinSource },
): Promise<string> {
  const whole = prompt === '-';
  if (!whole && options.source === 'other') return prompt;
  const waitForFirst = !whole && options.source === 'pipe';
  const text = await readText(stdin, options, waitForFirst ? pipeFirstDataMs : undefined);
  if (whole) {
    if (text === undefined || text.trim() === '') {
      throw new UsageError(
        '-p - takes the task from stdin, which was empty: pipe the task in, e.g. ' +
        'echo "explain main.ts" | claw -p -',
      );
    }
    return text;
  }
  if (text === undefined || text.trim() === '') return prompt;
  return `${prompt}\n\n<stdin>\n${text.endsWith('\n') ? text.slice(0, -1) : text}\n</stdin>`;
}

/**
 * Reads `stdin` to its end as UTF-8 text; says once when that takes long (`onWait`). With
 * `firstDataMs`, gives up when nothing came by then (`onNothing`, and undefined).
 */
async function readText(
  stdin: Readable,
  notes: PipedInputNotes,
  firstDataMs: number | undefined,
): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  let received = false;
  let gaveUp = false;
  const iterator = stdin[Symbol.asyncIterator]() as AsyncIterator<string | Buffer>;
  const waitNote = setTimeout(() => {
    // A pipe that has sent nothing yet is told of by its own limit.
    if (received || firstDataMs === undefined) notes.onWait();
  }, pipedWaitNoteMs);
  let giveUp: ReturnType<typeof setTimeout> | undefined;
  const silent = firstDataMs === undefined
    ? undefined
    : new Promise<'silent'>((resolve) => {
        giveUp = setTimeout(() => resolve('silent'), firstDataMs);
      });
  try {
    for (;;) {
      const next = iterator.next();
      // Left waiting when the pipe stays silent: its end (the stream destroyed) is no error.
      next.catch(() => undefined);
      const step = silent === undefined || received
        ? await next
        : await Promise.race([next, silent]);
      if (step === 'silent') {
        gaveUp = true;
        break;
      }
      if (step.done === true) break;
      received = true;
      const bytes = typeof step.value === 'string' ? Buffer.from(step.value) : step.value;
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
    clearTimeout(waitNote);
    clearTimeout(giveUp);
    // Stopped before its end (silent, too big): nothing more is read from it.
    if (gaveUp || size > maxPipedBytes) stdin.destroy();
  }
  if (gaveUp) {
    notes.onNothing();
    return undefined;
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
