/** Bytes of a tool's output kept by default (bash keeps this much of stdout and of stderr). */
export const defaultMaxOutputBytes = 64 * 1024;

/** What the cut note tells the model to do by default (bash's advice). */
const defaultCutAdvice = 'redirect the output to a file and use read_file to see all of it';

/**
 * Collects a byte stream in bounded memory: the first half of `maxBytes` is kept as it arrives,
 * the last half as a sliding window, and everything in between is counted and dropped on the fly.
 * A command printing gigabytes therefore costs at most about `maxBytes` (plus one chunk).
 */
export class CappedOutput {
  private readonly headLimit: number;
  private readonly tailLimit: number;
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private totalBytes = 0;

  constructor(maxBytes: number) {
    const limit = Math.max(0, Math.floor(maxBytes));
    this.headLimit = Math.floor(limit / 2);
    this.tailLimit = limit - this.headLimit;
  }

  /** Bytes received so far, kept or not. */
  get receivedBytes(): number {
    return this.totalBytes;
  }

  push(chunk: Buffer): void {
    this.totalBytes += chunk.length;
    let rest = chunk;
    if (this.headBytes < this.headLimit) {
      const taken = Math.min(rest.length, this.headLimit - this.headBytes);
      this.head.push(Buffer.from(rest.subarray(0, taken)));
      this.headBytes += taken;
      rest = rest.subarray(taken);
    }
    if (rest.length === 0 || this.tailLimit === 0) return;
    if (rest.length >= this.tailLimit) {
      this.tail = [Buffer.from(rest.subarray(rest.length - this.tailLimit))];
      this.tailBytes = this.tailLimit;
      return;
    }
    this.tail.push(Buffer.from(rest));
    this.tailBytes += rest.length;
    while (this.tailBytes > this.tailLimit) {
      const first = this.tail[0] as Buffer;
      const excess = this.tailBytes - this.tailLimit;
      if (first.length <= excess) {
        this.tail.shift();
        this.tailBytes -= first.length;
      } else {
        this.tail[0] = first.subarray(excess);
        this.tailBytes -= excess;
      }
    }
    // Many tiny writes would otherwise leave many tiny buffers behind.
    if (this.tail.length > 256) this.tail = [Buffer.concat(this.tail)];
  }

  /**
   * The text received, decoded as UTF-8. When bytes were dropped, head and tail are joined by the
   * note `[... <n> bytes of <label> cut; <advice> ...]`; characters split by the cut count as cut.
   * `advice` says how to see the rest (default: bash's, redirect to a file and read it).
   */
  text(label: string, advice: string = defaultCutAdvice): string {
    let head = Buffer.concat(this.head);
    let tail = Buffer.concat(this.tail);
    let cut = this.totalBytes - head.length - tail.length;
    if (cut === 0) return Buffer.concat([head, tail]).toString('utf8');
    const headEnd = completeUtf8Prefix(head);
    const tailStart = firstUtf8Boundary(tail);
    cut += head.length - headEnd + tailStart;
    head = head.subarray(0, headEnd);
    tail = tail.subarray(tailStart);
    return (
      `${head.toString('utf8')}\n[... ${cut} bytes of ${label} cut; ${advice} ...]\n` +
      tail.toString('utf8')
    );
  }
}

/** Length of the longest prefix of `bytes` that does not end inside a UTF-8 sequence. */
function completeUtf8Prefix(bytes: Buffer): number {
  // A sequence is at most 4 bytes, so only the last 3 can start an incomplete one.
  for (let index = bytes.length - 1; index >= Math.max(0, bytes.length - 3); index -= 1) {
    const byte = bytes[index] as number;
    if ((byte & 0xc0) === 0x80) continue;
    const size = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return index + size <= bytes.length ? bytes.length : index;
  }
  return bytes.length;
}

/** Index of the first byte of `bytes` that is not a UTF-8 continuation byte (at most 3 skipped). */
function firstUtf8Boundary(bytes: Buffer): number {
  let index = 0;
  const limit = Math.min(3, bytes.length);
  while (index < limit && ((bytes[index] as number) & 0xc0) === 0x80) index += 1;
  return index;
}
