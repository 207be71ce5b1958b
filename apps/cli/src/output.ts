import type { Writable } from 'node:stream';
import { ClawError } from '@claw/core';

/** A stream `Output` writes to: stdout, stderr, or a test's stream. */
export type OutputStream = Writable & { isTTY?: boolean };

/**
 * One writer over one output stream. Writes resolve once the stream took the text and reject when
 * it cannot (a closed pipe): a reporter that writes through it fails, which stops the run
 * (CORE-4) instead of letting tools run unseen. It remembers whether the last text ended a line,
 * so that status lines never start in the middle of streamed text.
 */
export class Output {
  readonly isTTY: boolean;
  private readonly stream: OutputStream;
  private failure: Error | undefined;
  private lineStart = true;

  constructor(stream: OutputStream) {
    this.stream = stream;
    this.isTTY = stream.isTTY === true;
    // Without a listener a closed pipe (EPIPE) would crash the process.
    stream.on('error', (error: Error) => {
      this.failure ??= error;
    });
  }

  /** True when nothing was written yet or the last text ended with a newline. */
  get atLineStart(): boolean {
    return this.lineStart;
  }

  /** The terminal moved to a new line by itself (the user pressed Enter and it echoed that). */
  noteLineEnded(): void {
    this.lineStart = true;
  }

  /** Writes `text` as it is. */
  write(text: string): Promise<void> {
    if (text === '') return Promise.resolve();
    if (this.failure !== undefined) return Promise.reject(writeFailed(this.failure));
    this.lineStart = text.endsWith('\n');
    return new Promise<void>((resolve, reject) => {
      this.stream.write(text, (error) => {
        if (error === null || error === undefined) resolve();
        else reject(writeFailed(error));
      });
    });
  }

  /** Writes `text` as a line of its own (a newline first if the current line is not empty). */
  line(text = ''): Promise<void> {
    return this.write(`${this.lineStart ? '' : '\n'}${text}\n`);
  }

  /** Ends the current line if it has text. */
  endLine(): Promise<void> {
    return this.lineStart ? Promise.resolve() : this.write('\n');
  }

  /** Resolves once everything written so far has been handed to the system. Never rejects. */
  flush(): Promise<void> {
    if (this.failure !== undefined || this.stream.destroyed) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.stream.write('', () => resolve());
    });
  }
}

function writeFailed(cause: Error): ClawError {
  return new ClawError(`could not write the output: ${cause.message}`, {
    code: 'output_failed',
    cause,
  });
}
