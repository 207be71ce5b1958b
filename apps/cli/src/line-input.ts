import { createInterface, type Interface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';

export type InputStream = Readable & { isTTY?: boolean };

export interface LineInputOptions {
  input: InputStream;
  /** Where a terminal echoes typed text and the prompt (only used on a terminal). */
  echo: Writable;
  /** The prompt a terminal redraws with the line being typed. */
  prompt: string;
}

/**
 * The one reader of stdin (CLI-1): lines, the end of input, and Ctrl-C typed on a terminal
 * (which a terminal in raw mode delivers as a key, not as a signal). Nothing else in the app
 * reads stdin, so nothing can steal a line.
 */
export class LineInput {
  /** True when stdin is a terminal (line editing, Ctrl-C as a key). */
  readonly terminal: boolean;
  private readonly readline: Interface;
  private closed = false;

  constructor(options: LineInputOptions) {
    this.terminal = options.input.isTTY === true;
    this.readline = createInterface({
      input: options.input,
      ...(this.terminal ? { output: options.echo } : {}),
      terminal: this.terminal,
      prompt: options.prompt,
    });
    this.readline.on('close', () => {
      this.closed = true;
    });
  }

  onLine(listener: (line: string) => void): void {
    this.readline.on('line', listener);
  }

  /** End of input (Ctrl-D, a closed pipe) or `close()`. */
  onEnd(listener: () => void): void {
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
  }
}
