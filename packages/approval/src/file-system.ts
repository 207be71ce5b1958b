import { writeSync } from 'node:fs';
import { writeAll } from '@claw/core';
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';

/** The part of an open file the stores use. */
export interface ApprovalFileHandle {
  writeFile(data: string, encoding: 'utf8'): Promise<void>;
  /**
   * Appends at once, without a round trip through the thread pool; optional (the audit log then
   * awaits `writeFile`). Throws like `writeFile` rejects.
   */
  appendSync?(data: string): void;
  /** Flushes the file's data to the disk (fsync). */
  sync(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The file operations `FileGrantStore` and `FileAuditLog` use, so that tests (and unusual hosts)
 * can put their own underneath. The default is Node's `fs/promises`. Failures must reject with
 * Node-style errors (`code: 'ENOENT'` for a missing file).
 */
export interface ApprovalFileSystem {
  readFile(path: string, encoding: 'utf8'): Promise<string>;
  mkdir(path: string, options: { recursive: true }): Promise<unknown>;
  /**
   * Opens a file; the stores pass `'wx'` (create, fail if it exists) or `'a'` (append, create
   * when missing) and a mode.
   */
  open(path: string, flags: string, mode: number): Promise<ApprovalFileHandle>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
}

/** `ApprovalFileSystem` on Node's `fs/promises`. */
export const nodeFileSystem: ApprovalFileSystem = {
  readFile: (path, encoding) => readFile(path, encoding),
  mkdir: (path, options) => mkdir(path, options),
  open: async (path, flags, mode) => {
    const handle = await open(path, flags, mode);
    return {
      writeFile: (data, encoding) => handle.writeFile(data, encoding),
      appendSync: (data) =>
        writeAll(data, (bytes, offset, length) => writeSync(handle.fd, bytes, offset, length)),
      sync: () => handle.sync(),
      close: () => handle.close(),
    };
  },
  rename: (from, to) => rename(from, to),
  unlink: (path) => unlink(path),
};
