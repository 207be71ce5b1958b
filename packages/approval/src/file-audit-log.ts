import nodePath from 'node:path';
import { SerialQueue, errorMessage, prepareStateFolder, stateFolderName } from '@claw/core';
import type { AuditEntry, AuditLog } from './audit.js';
import { AuditLogError } from './errors.js';
import { nodeFileSystem, type ApprovalFileHandle, type ApprovalFileSystem } from './file-system.js';

/** Options of {@link FileAuditLog}. */
export interface FileAuditLogOptions {
  /** The workspace root; entries go to `<workDir>/.claw/audit.jsonl`. */
  workDir: string;
  /** File operations underneath. Default: Node's `fs/promises`. */
  fileSystem?: ApprovalFileSystem;
}

interface Batch {
  lines: string[];
  written: Promise<void>;
}

/**
 * The audit log as JSON lines in `<workDir>/.claw/audit.jsonl` (APR-4): one line per entry,
 * appended (the file is never rewritten), in the order recorded. The file is opened once (for
 * appending) and kept open until `close`; entries recorded in the same tick, or while a write
 * is under way, go out together, so a wave of tool calls costs one write, not one open, write and
 * close each.
 *
 * `record` resolves once its line was handed to the file, and throws an `AuditLogError`
 * (`audit_write_failed`, naming the file) when it cannot be appended.
 */
export class FileAuditLog implements AuditLog {
  /** The audit file. */
  readonly file: string;
  private readonly fileSystem: ApprovalFileSystem;
  private readonly queue = new SerialQueue();
  private handle: ApprovalFileHandle | undefined;
  private waiting: Batch | undefined;

  constructor(options: FileAuditLogOptions) {
    this.file = nodePath.join(nodePath.resolve(options.workDir), stateFolderName, 'audit.jsonl');
    this.fileSystem = options.fileSystem ?? nodeFileSystem;
  }

  record(entry: AuditEntry): Promise<void> {
    const line = `${JSON.stringify(entry)}\n`;
    let batch = this.waiting;
    if (batch === undefined) {
      const next: Batch = { lines: [], written: Promise.resolve() };
      next.written = this.queue.run(async () => {
        // The entries of this tick's work (a wave's calls are checked together, a few promise
        // steps apart) join this write.
        await new Promise<void>((resolve) => process.nextTick(resolve));
        // From here on, new entries wait for the next write.
        if (this.waiting === next) this.waiting = undefined;
        await this.append(next.lines.join(''));
      });
      this.waiting = next;
      batch = next;
    }
    batch.lines.push(line);
    return batch.written;
  }

  /** Closes the file once the queued writes are done. Recording again reopens it. */
  close(): Promise<void> {
    return this.queue.run(async () => {
      const handle = this.handle;
      this.handle = undefined;
      await handle?.close().catch(() => undefined);
    });
  }

  private async append(text: string): Promise<void> {
    try {
      if (this.handle === undefined) {
        await prepareStateFolder(this.fileSystem, nodePath.dirname(this.file));
        this.handle = await this.fileSystem.open(this.file, 'a', 0o600);
      }
      if (this.handle.appendSync !== undefined) this.handle.appendSync(text);
      else await this.handle.writeFile(text, 'utf8');
    } catch (error) {
      // A broken handle is not reused: the next entry opens the file again.
      const handle = this.handle;
      this.handle = undefined;
      await handle?.close().catch(() => undefined);
      throw new AuditLogError(
        `Could not append to the audit log ${this.file}: ${errorMessage(error)}. Check that ` +
        'the .claw folder is writable and the disk has room.',
        { file: this.file, cause: error },
      );
    }
  }
}
