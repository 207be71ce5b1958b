import { MemorySessionLog } from '../memory-session-log.js';
import type { AppendResult, LogRecord, SessionSnapshot } from '../session-log.js';

/**
 * A memory log whose flushes a test controls. Every append says when its records are written
 * (`onWritten`), then a flushed one waits until the test lets it go: one at a time
 * (`heldFlushes.shift()?.()`) or all, now and later (`releaseFlushes`). `failNextFlush` makes
 * the next flush fail after the records were written, as an `fsync` that reports `EIO` does.
 * `compactions` counts the snapshots written.
 */
export class FlushControlledLog extends MemorySessionLog {
  readonly heldFlushes: Array<() => void> = [];
  /** Hold flushes until the test lets them go (default); false: flushes end at once. */
  holdFlushes = true;
  failNextFlush = false;
  compactions = 0;

  override async append(
    id: string,
    records: readonly LogRecord[],
    options: { sync: boolean; onWritten?: () => void },
  ): Promise<AppendResult> {
    const result = await super.append(id, records, options);
    options.onWritten?.();
    if (!options.sync) return result;
    if (this.failNextFlush) {
      this.failNextFlush = false;
      throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
    }
    if (this.holdFlushes) await new Promise<void>((resolve) => this.heldFlushes.push(resolve));
    return result;
  }

  /** Lets every held flush go; later ones end at once. */
  releaseFlushes(): void {
    this.holdFlushes = false;
    for (const release of this.heldFlushes.splice(0)) release();
  }

  override async compact(id: string, snapshot: SessionSnapshot): Promise<void> {
    this.compactions += 1;
    await super.compact(id, snapshot);
  }
}
