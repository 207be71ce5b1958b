import { constants } from 'node:fs';
import nodePath from 'node:path';
import { SerialQueue, errorMessage, writeFileAtomically } from '@claw/core';
import { SessionFileError } from './errors.js';
import { errnoCode, type SessionFileSystem } from './file-system.js';
import { encodeChange, encodeSnapshot } from './records.js';
import type { SessionChange, SessionState } from './session-state.js';
import type { SessionWriter } from './session-writer.js';

/** Default of `compactMinBytes`: the log is not compacted before it holds this many bytes. */
export const defaultCompactMinBytes = 256 * 1024;

interface PendingLine {
  seq: number;
  line: string;
  bytes: number;
  sync: boolean;
}

/** How the file looked when it was read. */
export interface WriterStart {
  /** The last change already on disk. */
  persistedSeq: number;
  snapshotBytes: number;
  logBytes: number;
  /**
   * True when the next write must rewrite the whole file: there is none yet, or a torn tail has
   * to go.
   */
  needsSnapshot: boolean;
}

export interface FileSessionWriterOptions {
  file: string;
  fileSystem: SessionFileSystem;
  /** The session's current state in memory, for snapshots. */
  state: () => SessionState;
  start: WriterStart;
  compactMinBytes: number;
  syncEveryWrite: boolean;
}

const appendFlags = constants.O_WRONLY | constants.O_APPEND;

/**
 * Writes one session file: changes are appended as lines, one write per batch, in order (one
 * queue per session). When the lines after the snapshot outweigh it (and `compactMinBytes`),
 * after a clear, or when a write failed, the next write is a new snapshot of the whole state:
 * written to a temporary
 * file, flushed, renamed over the file (the rename is the commit point). Appends cost the size of
 * the change, not of the history; snapshots are amortised over at least as many appended bytes.
 */
export class FileSessionWriter implements SessionWriter {
  private readonly file: string;
  private readonly fileSystem: SessionFileSystem;
  private readonly state: () => SessionState;
  private readonly compactMinBytes: number;
  private readonly syncEveryWrite: boolean;
  private readonly queue = new SerialQueue();
  private pending: PendingLine[] = [];
  private persistedSeq: number;
  private snapshotBytes: number;
  private logBytes: number;
  private needsSnapshot: boolean;
  private staleTemporariesChecked = false;

  constructor(options: FileSessionWriterOptions) {
    this.file = options.file;
    this.fileSystem = options.fileSystem;
    this.state = options.state;
    this.compactMinBytes = options.compactMinBytes;
    this.syncEveryWrite = options.syncEveryWrite;
    this.persistedSeq = options.start.persistedSeq;
    this.snapshotBytes = options.start.snapshotBytes;
    this.logBytes = options.start.logBytes;
    this.needsSnapshot = options.start.needsSnapshot;
  }

  write(seq: number, at: string, change: SessionChange, options: { sync: boolean }): Promise<void> {
    // Encoded now: the record says what the change was when it was made.
    const line = encodeChange(seq, at, change);
    this.pending.push({ seq, line, bytes: Buffer.byteLength(line, 'utf8'), sync: options.sync });
    // After a clear the old history is dead weight, and the new snapshot is small: write it now.
    if (change.type === 'clear') this.needsSnapshot = true;
    return this.queue.run(() => this.persistThrough(seq));
  }

  flush(): Promise<void> {
    return this.queue.run(() => this.persistThrough(this.state().seq));
  }

  remove(): Promise<void> {
    return this.queue.run(async () => {
      try {
        await this.fileSystem.unlink(this.file);
      } catch (error) {
        if (errnoCode(error) !== 'ENOENT') throw this.writeFailed('remove it', error);
      }
    });
  }

  private async persistThrough(seq: number): Promise<void> {
    // A batch or a snapshot written by an earlier task may already hold this change.
    if (this.persistedSeq >= seq) return;
    if (this.needsSnapshot || this.compactionDue()) {
      await this.writeSnapshot();
      return;
    }
    const batch = this.pending;
    this.pending = [];
    const last = batch.at(-1);
    if (last === undefined) return;
    try {
      await this.append(
        batch.map((pending) => pending.line).join(''),
        this.syncEveryWrite || batch.some((pending) => pending.sync),
      );
    } catch (error) {
      // The batch may be half on disk: only a whole new file puts it right.
      this.needsSnapshot = true;
      if (errnoCode(error) === 'ENOENT') {
        // The file went away behind our back: write it afresh from memory.
        await this.writeSnapshot();
        return;
      }
      throw this.writeFailed('save a change', error);
    }
    this.persistedSeq = last.seq;
    for (const pending of batch) this.logBytes += pending.bytes;
  }

  private compactionDue(): boolean {
    let bytes = this.logBytes;
    for (const pending of this.pending) bytes += pending.bytes;
    return bytes >= Math.max(this.compactMinBytes, this.snapshotBytes);
  }

  private async append(text: string, sync: boolean): Promise<void> {
    const handle = await this.fileSystem.open(this.file, appendFlags);
    try {
      await handle.writeFile(text, 'utf8');
      if (sync) await handle.sync();
    } finally {
      await handle.close();
    }
  }

  private async writeSnapshot(): Promise<void> {
    const state = this.state();
    const seq = state.seq;
    const line = encodeSnapshot(state);
    const folder = nodePath.dirname(this.file);
    try {
      await writeFileAtomically(this.fileSystem, this.file, line);
    } catch (error) {
      this.needsSnapshot = true;
      throw this.writeFailed('save the session', error);
    }
    await this.syncFolder(folder);
    this.persistedSeq = seq;
    this.pending = this.pending.filter((pending) => pending.seq > seq);
    this.snapshotBytes = Buffer.byteLength(line, 'utf8');
    this.logBytes = 0;
    this.needsSnapshot = false;
    if (!this.staleTemporariesChecked) {
      this.staleTemporariesChecked = true;
      await this.removeStaleTemporaries(folder);
    }
  }

  /** Makes the rename itself durable. Best effort: not every platform can open a folder. */
  private async syncFolder(folder: string): Promise<void> {
    try {
      const handle = await this.fileSystem.open(folder, 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
    } catch {
      // The data is flushed; only the rename's durability is left to the file system.
    }
  }

  /** Temporary files of this session left by a crash during a snapshot. */
  private async removeStaleTemporaries(folder: string): Promise<void> {
    const base = nodePath.basename(this.file);
    const prefix = `${base}.`;
    const stale = /^[0-9a-f-]{36}\.tmp$/;
    try {
      const names = await this.fileSystem.readdir(folder);
      for (const name of names) {
        if (!name.startsWith(prefix) || !stale.test(name.slice(prefix.length))) continue;
        await this.fileSystem.unlink(nodePath.join(folder, name)).catch(() => undefined);
      }
    } catch {
      // Leftovers are harmless: they are never read.
    }
  }

  private writeFailed(action: string, cause: unknown): SessionFileError {
    return new SessionFileError(
      `Could not write the session file ${this.file} to ${action}: ${errorMessage(cause)}. ` +
      'The session in memory is complete and is written out in full with the next change. ' +
      'Check that the .claw folder is writable and the disk has room.',
      { code: 'session_write_failed', file: this.file, cause },
    );
  }
}
