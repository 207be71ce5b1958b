import type { Readable } from 'node:stream';

/**
 * The last bytes a server wrote to stderr, kept to say why it failed. It always reads the stream
 * (a full pipe would block the child) and keeps at most `maxChars`.
 */
export class StderrTail {
  private text = '';

  constructor(stream: Readable | null, private readonly maxChars = 2000) {
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      this.text = (this.text + chunk).slice(-this.maxChars);
    });
    // A broken pipe at exit is not worth reporting on its own.
    stream?.on('error', () => undefined);
  }

  /** The last few lines, trimmed, on one line each; '' when it wrote nothing. */
  lines(count = 5): string {
    return this.text.trim().split('\n').slice(-count).map((line) => line.trim()).join(' | ');
  }
}
