import nodePath from 'node:path';
import { errorMessage } from '@claw/core';
import type { AuditEntry, AuditLog } from './audit.js';
import { AuditLogError } from './errors.js';
import { nodeFileSystem, type ApprovalFileSystem } from './file-system.js';
import { SerialQueue } from '@claw/core';

/** Options of {@link FileAuditLog}. */
export interface FileAuditLogOptions {
  /** The workspace root; entries go to `<workDir>/.claw/audit.jsonl`. */
  workDir: string;
  /** File operations underneath. Default: Node's `fs/promises`. */
  fileSystem?: ApprovalFileSystem;
}

/**
 * The audit log as JSON lines in `<workDir>/.claw/audit.jsonl` (APR-4): one line per entry,
 * appended (the file is never rewritten), one append at a time in the order recorded.
 *
 * `record` throws an `AuditLogError` (`audit_write_failed`, naming the file) when the line cannot
 * be appended.
 */
export class FileAuditLog implements AuditLog {
  /** The audit file. */
  readonly file: string;
  private readonly fileSystem: ApprovalFileSystem;
  private readonly queue = new SerialQueue();

  constructor(options: FileAuditLogOptions) {
    this.file = nodePath.join(nodePath.resolve(options.workDir), '.claw', 'audit.jsonl');
    this.fileSystem = options.fileSystem ?? nodeFileSystem;
  }

  record(entry: AuditEntry): Promise<void> {
    const line = `${JSON.stringify(entry)}\n`;
    return this.queue.run(async () => {
      try {
        await this.fileSystem.mkdir(nodePath.dirname(this.file), { recursive: true });
        await this.fileSystem.appendFile(this.file, line, 'utf8');
      } catch (error) {
        throw new AuditLogError(
          `Could not append to the audit log ${this.file}: ${errorMessage(error)}. Check that ` +
          'the .claw folder is writable and the disk has room.',
          { file: this.file, cause: error },
        );
      }
    });
  }
}
