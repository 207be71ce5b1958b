import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { LineInput, bracketedPaste, type InputEntry } from '../src/line-input.js';

const paste = (text: string): string => `\x1b[200~${text}\x1b[201~`;
const ctrlC = '\x03';

const opened: LineInput[] = [];

afterEach(() => {
  for (const input of opened.splice(0)) input.close();
});

/** A LineInput over a stand-in for a terminal (or a pipe), with what it echoed and entered. */
function lineInput(options: { terminal: boolean; continuation?: string; echoTerminal?: boolean }) {
  const stdin = Object.assign(new PassThrough(), {
    isTTY: options.terminal,
    setRawMode: () => undefined,
  });
  const echo = Object.assign(new PassThrough(), { isTTY: options.echoTerminal ?? options.terminal });
  let echoed = '';
  echo.setEncoding('utf8').on('data', (chunk: string) => {
    echoed += chunk;
  });
  const input = new LineInput({
    input: stdin,
    echo,
    prompt: 'claw> ',
    ...(options.continuation === undefined ? {} : { continuation: options.continuation }),
  });
  opened.push(input);
  const entries: InputEntry[] = [];
  input.onEntry((entry) => entries.push(entry));
  let interrupts = 0;
  input.onInterrupt(() => {
    interrupts += 1;
  });
  /** Types `text`, and lets readline take it. */
  const type = async (text: string): Promise<void> => {
    stdin.write(text);
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { input, type, entries, echoed: () => echoed, interrupts: () => interrupts };
}

describe('LineInput', () => {
  it('takes a paste as one entry once Enter is pressed after it, marked as pasted; typed lines are entries of their own', async () => {
    const { type, entries, echoed } = lineInput({ terminal: true });
    expect(echoed()).toContain(bracketedPaste.on);
    await type(paste('fix this:\rTypeError: x is undefined\r    at main.ts:3'));
    // Nothing is sent while the user has not pressed Enter.
    expect(entries).toEqual([]);
    await type(' please\r');
    expect(entries).toEqual([{ text: 'fix this:\nTypeError: x is undefined\n    at main.ts:3 please', pasted: true }]);
    await type('y\r');
    expect(entries.at(-1)).toEqual({ text: 'y', pasted: false });
    // A paste that ends with its own newline waits for Enter too.
    await type(paste('one\rtwo\r'));
    expect(entries).toHaveLength(2);
    await type('\r');
    expect(entries.at(-1)).toEqual({ text: 'one\ntwo\n', pasted: true });
  });

  it('goes on on the next line after a line ending with a backslash, with the continuation prompt', async () => {
    const { type, entries, echoed } = lineInput({ terminal: true, continuation: '  ... ' });
    await type('first line \\\r');
    expect(entries).toEqual([]);
    expect(echoed()).toContain('  ... ');
    await type('second\\\rthird\r');
    expect(entries).toEqual([{ text: 'first line \nsecond\nthird', pasted: false }]);
    // Pasted lines are taken as they are: a backslash there continues nothing.
    await type(paste('echo a \\\r  b'));
    await type('\r');
    expect(entries.at(-1)).toEqual({ text: 'echo a \\\n  b', pasted: true });
  });

  it('leaves a trailing backslash alone without a continuation prompt', async () => {
    const { type, entries } = lineInput({ terminal: true });
    await type('C:\\\r');
    expect(entries).toEqual([{ text: 'C:\\', pasted: false }]);
  });

  it('tells of each Ctrl-C; discardEntry drops what is being entered (lines under way, typed text) and says whether there was any', async () => {
    const { input, type, entries, interrupts, echoed } = lineInput({ terminal: true, continuation: '  ... ' });
    await type('one\\\rtwo');
    await type(ctrlC);
    expect(interrupts()).toBe(1);
    expect(input.discardEntry()).toBe(true);
    expect(echoed()).toContain('two^C\r\n');
    expect(input.discardEntry()).toBe(false);
    await type('fresh\r');
    expect(entries).toEqual([{ text: 'fresh', pasted: false }]);
    // Typed text alone, and a paste not sent yet.
    await type('half a line');
    expect(input.discardEntry()).toBe(true);
    await type(paste('a\rb'));
    expect(input.discardEntry()).toBe(true);
    await type('typed\r');
    expect(entries.at(-1)).toEqual({ text: 'typed', pasted: false });
    expect(input.discardEntry()).toBe(false);
  });

  it('asks the terminal to stop marking pastes when it closes, once', async () => {
    const { input, echoed } = lineInput({ terminal: true });
    input.close();
    input.close();
    expect(echoed().split(bracketedPaste.off)).toHaveLength(2);
  });

  it('does not ask for marks when what it echoes goes elsewhere (a pipe), but still takes a marked paste as one entry', async () => {
    const { input, type, entries, echoed } = lineInput({ terminal: true, echoTerminal: false });
    await type(paste('a\rb'));
    await type('\r');
    expect(entries).toEqual([{ text: 'a\nb', pasted: true }]);
    input.close();
    expect(echoed()).not.toContain(bracketedPaste.on);
    expect(echoed()).not.toContain(bracketedPaste.off);
  });

  it('over a pipe: each line an entry, a continued line goes on, and nothing is sent to a terminal', async () => {
    const { type, entries, echoed } = lineInput({ terminal: false, continuation: '  ... ' });
    await type('one\ntwo \\\nthree\n');
    expect(entries).toEqual([
      { text: 'one', pasted: false },
      { text: 'two \nthree', pasted: false },
    ]);
    expect(echoed()).toBe('');
  });
});

describe('LineInput.nextEntry (a question asked before the REPL reads)', () => {
  /** A LineInput nobody listens to yet, as the REPL's is while it asks whether to trust. */
  function questionInput(terminal: boolean) {
    const stdin = Object.assign(new PassThrough(), { isTTY: terminal, setRawMode: () => undefined });
    const echo = Object.assign(new PassThrough(), { isTTY: terminal });
    let echoed = '';
    echo.setEncoding('utf8').on('data', (chunk: string) => {
      echoed += chunk;
    });
    const input = new LineInput({ input: stdin, echo, prompt: 'claw> ' });
    opened.push(input);
    const type = async (text: string): Promise<void> => {
      stdin.write(text);
      await new Promise((resolve) => setImmediate(resolve));
    };
    return { input, stdin, type, echoed: () => echoed };
  }

  it('over a pipe: the first line answers it even when it came first, the rest goes to the REPL; an ended input still ends it', async () => {
    const { input, stdin, type } = questionInput(false);
    await type('n\nhello\n');
    stdin.end();
    await new Promise((resolve) => setImmediate(resolve));
    expect(await input.nextEntry('Trust? ')).toEqual({ text: 'n', pasted: false });
    const entries: InputEntry[] = [];
    input.onEntry((entry) => entries.push(entry));
    expect(entries).toEqual([{ text: 'hello', pasted: false }]);
    let ended = 0;
    input.onEnd(() => {
      ended += 1;
    });
    expect(ended).toBe(1);
    expect(await input.nextEntry('Trust? ')).toBe('end');
  });

  it('over a pipe: a line that comes while it waits answers it, and only it', async () => {
    const { input, type } = questionInput(false);
    const answer = input.nextEntry('Trust? ');
    await type('y\nnext\n');
    expect(await answer).toEqual({ text: 'y', pasted: false });
    const entries: InputEntry[] = [];
    input.onEntry((entry) => entries.push(entry));
    expect(entries).toEqual([{ text: 'next', pasted: false }]);
  });

  it('on a terminal: shows its prompt; a line typed before it is no answer; Ctrl-C interrupts', async () => {
    const { input, type, echoed } = questionInput(true);
    await type('typed ahead\r');
    const answer = input.nextEntry('Trust? ');
    expect(echoed()).toContain('Trust? ');
    await type('y\r');
    expect(await answer).toEqual({ text: 'y', pasted: false });
    const entries: InputEntry[] = [];
    input.onEntry((entry) => entries.push(entry));
    expect(entries).toEqual([{ text: 'typed ahead', pasted: false }]);

    const again = input.nextEntry('Trust? ');
    await type(ctrlC);
    expect(await again).toBe('interrupt');
  });
});
