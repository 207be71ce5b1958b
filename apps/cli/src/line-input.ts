import { createInterface, type Interface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';

export type InputStream = Readable & { isTTY?: boolean };

export interface LineInputOptions {
  input: InputStream;
  /** Where a terminal echoes typed text and the prompt (only used on a terminal). */
  echo: Writable & { isTTY?: boolean };
  /** The prompt a terminal redraws with the line being typed. */
  prompt: string;
  /**
   * The prompt of a line that continues the one before (which ended with `\`). Without it, a
   * backslash at the end of a line is just a character.
   */
  continuation?: string;
  /** Earlier entries, oldest first, that up-arrow brings back on a terminal. */
  history?: readonly string[];
}

/** What was entered: one line, or several (pasted, or continued with `\`). */
export interface InputEntry {
  /** Its lines joined with "\n"; a continued line without its backslash. */
  text: string;
  /** True when any of it was pasted (the terminal marked it: bracketed paste), not typed. */
  pasted: boolean;
}

/** Asks the terminal to mark pasted text (bracketed paste), and to stop. */
export const bracketedPaste = { on: '\x1b[?2004h', off: '\x1b[?2004l' } as const;

/**
 * The one reader of stdin (CLI-1): entries, the end of input, and Ctrl-C typed on a terminal
 * (which a terminal in raw mode delivers as a key, not as a signal). Nothing else in the app
 * reads stdin, so nothing can steal a line.
 *
 * On a terminal, pasted text is one entry, whatever lines it has: the terminal is asked to mark
 * pastes (bracketed paste; when the echo goes to it too), the lines of one are gathered, and the
 * entry is complete when Enter is pressed after it (the user can look at it, and add to it,
 * first). So a paste never sends its lines one by one, and the entry says it was pasted (a
 * question must be answered by typing).
 * With `continuation`, a line ending with `\` goes on on the next line.
 */
export class LineInput {
  /** True when stdin is a terminal (line editing, Ctrl-C as a key). */
  readonly terminal: boolean;
  /** True when the terminal was asked to mark pastes (its echo is a terminal too). */
  private readonly marksPastes: boolean;
  private readonly readline: Interface;
  private readonly options: LineInputOptions;
  private closed = false;
  private readonly listeners: Array<(entry: InputEntry) => void> = [];
  /** Entries that came before anyone listened (typed ahead of a question's answer). */
  private readonly early: InputEntry[] = [];
  /** A question's taker of the next entry, served before the listeners. */
  private taker: ((entry: InputEntry) => void) | undefined;
  /** The lines of the entry under way, before the current one. */
  private pending: string[] = [];
  private pendingPasted = false;
  /** Between the terminal's marks of the start and the end of a paste. */
  private pasting = false;
  private readonly onKeypress = (_text: unknown, key: { name?: string } | undefined): void => {
    if (key?.name === 'paste-start') {
      this.pasting = true;
      this.pendingPasted = true;
    } else if (key?.name === 'paste-end') {
      this.pasting = false;
    }
  };

  /** Leaves the terminal as it was, even when the process ends without `close()`. */
  private readonly onExit = (): void => {
    this.options.echo.write(bracketedPaste.off);
  };

  constructor(options: LineInputOptions) {
    this.options = options;
    this.terminal = options.input.isTTY === true;
    this.marksPastes = this.terminal && options.echo.isTTY === true;
    this.readline = createInterface({
      input: options.input,
      ...(this.terminal ? { output: options.echo } : {}),
      terminal: this.terminal,
      prompt: options.prompt,
      // readline keeps the newest first.
      history: [...(options.history ?? [])].reverse(),
      historySize: 500,
      removeHistoryDuplicates: true,
    });
    this.readline.on('close', () => {
      this.closed = true;
    });
    this.readline.on('line', (line) => this.line(line));
    if (this.terminal) {
      // readline made the input emit keypresses; its own listener comes first.
      options.input.on('keypress', this.onKeypress);
    }
    if (this.marksPastes) {
      options.echo.write(bracketedPaste.on);
      process.once('exit', this.onExit);
    }
  }

  /** Every entry from now on; one typed before the first listener comes is given to it first. */
  onEntry(listener: (entry: InputEntry) => void): void {
    this.listeners.push(listener);
    for (const entry of this.early.splice(0)) listener(entry);
  }

  /**
   * The next entry only, shown `prompt` on a terminal (a question asked before the REPL runs,
   * e.g. whether to trust the workspace): `end` at the end of input, `interrupt` on Ctrl-C typed
   * on a terminal. What is entered after it waits for the first `onEntry` listener.
   */
  nextEntry(prompt: string): Promise<InputEntry | 'end' | 'interrupt'> {
    // Piped input may have come before the question: its first line is the answer. (On a
    // terminal, a line typed before the question was shown is no answer; it waits for the REPL.)
    const ahead = this.terminal ? undefined : this.early.shift();
    if (ahead !== undefined) return Promise.resolve(ahead);
    if (this.closed) return Promise.resolve('end');
    return new Promise((resolve) => {
      const done = (answer: InputEntry | 'end' | 'interrupt'): void => {
        this.taker = undefined;
        this.readline.off('close', onClose);
        this.readline.off('SIGINT', onInterrupt);
        if (this.terminal && !this.closed) this.readline.setPrompt(this.options.prompt);
        resolve(answer);
      };
      const onClose = (): void => done('end');
      const onInterrupt = (): void => done('interrupt');
      this.taker = (entry) => done(entry);
      this.readline.once('close', onClose);
      this.readline.once('SIGINT', onInterrupt);
      if (this.terminal) {
        this.readline.setPrompt(prompt);
        this.readline.prompt();
      }
    });
  }

  /** End of input (Ctrl-D, a closed pipe) or `close()`; called at once when that was before. */
  onEnd(listener: () => void): void {
    if (this.closed) {
      listener();
      return;
    }
    this.readline.on('close', listener);
  }

  /** Ctrl-C typed on a terminal. */
  onInterrupt(listener: () => void): void {
    this.readline.on('SIGINT', listener);
  }

  /** Shows the prompt on a terminal (readline redraws it with the typed text). */
  showPrompt(): void {
    if (!this.closed && this.terminal) this.readline.prompt();
  }

  /** Stops reading; idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.readline.close();
    this.options.input.off('keypress', this.onKeypress);
    if (this.marksPastes) {
      process.off('exit', this.onExit);
      this.onExit();
    }
  }

  private line(line: string): void {
    if (this.pasting) {
      this.pending.push(line);
      return;
    }
    const { continuation } = this.options;
    if (continuation !== undefined && line.endsWith('\\')) {
      this.pending.push(line.slice(0, -1));
      if (this.terminal && !this.closed) {
        this.readline.setPrompt(continuation);
        this.readline.prompt();
      }
      return;
    }
    const entry = { text: [...this.pending, line].join('\n'), pasted: this.pendingPasted };
    this.resetPending();
    if (this.taker !== undefined) this.taker(entry);
    else if (this.listeners.length === 0) this.early.push(entry);
    else for (const listener of this.listeners) listener(entry);
  }

  /**
   * Drops what is being entered, if anything: the lines of an entry under way and the text typed
   * on the current line (as a shell does on Ctrl-C). On a terminal it stays on screen, marked
   * `^C`, and the cursor goes to the start of the next line (the caller shows a prompt). True
   * when there was something to drop.
   */
  discardEntry(): boolean {
    if (this.closed) return false;
    const typed = this.terminal ? this.readline.line : '';
    if (this.pending.length === 0 && !this.pasting && typed === '') return false;
    this.resetPending();
    this.pasting = false;
    if (this.terminal) {
      this.options.echo.write('^C\r\n');
      // Out of readline's buffer (Ctrl-E, Ctrl-U), which redraws the line it is on: the new one.
      this.readline.write('', { ctrl: true, name: 'e' });
      this.readline.write('', { ctrl: true, name: 'u' });
      this.options.echo.write('\r\x1b[K');
    }
    return true;
  }

  private resetPending(): void {
    this.pending = [];
    this.pendingPasted = false;
    if (this.terminal && !this.closed) this.readline.setPrompt(this.options.prompt);
  }
}
