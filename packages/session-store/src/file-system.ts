import { writeSync } from 'node:fs';
import { writeAll } from '@claw/core';
import { link, mkdir, open, readdir, readFile, rename, unlink } from 'node:fs/promises';

/** The part of an open file the store uses. */
export interface SessionFileHandle {
  writeFile(data: string, encoding: 'utf8'): Promise<void>;
  /**
   * Appends at once, without a round trip through the thread pool (a `write` to the page cache
   * takes microseconds; the async path costs far more for the small lines of a session log).
   * Optional: without it the store awaits `writeFile`. Throws like `writeFile` rejects.
   */
  appendSync?(data: string): void;
  /** Flushes the file's data to the disk (fsync). */
  sync(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The file operations the file session log uses, so that tests (and unusual hosts) can put their
 * own underneath. The default is Node's `fs/promises`. Failures must reject with Node-style
 * errors (`code: 'ENOENT'` for a missing file, `'EEXIST'` for an existing one).
 */
export interface SessionFileSystem {
  readFile(path: string, encoding: 'utf8'): Promise<string>;
  readdir(path: string): Promise<string[]>;
  mkdir(path: string, options: { recursive: true }): Promise<unknown>;
  /**
   * Opens a file. The store passes `'wx'` (create, fail if it exists) for new files, the numeric
   * `O_WRONLY | O_APPEND` (no create) to append, and `'r'` to fsync a folder.
   */
  open(path: string, flags: string | number, mode?: number): Promise<SessionFileHandle>;
  rename(from: string, to: string): Promise<void>;
  /** A second name for a file; fails with `EEXIST` when `to` exists (locks are taken this way). */
  link(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
}

/** `SessionFileSystem` on Node's `fs/promises`. */
export const nodeSessionFileSystem: SessionFileSystem = {
  readFile: (path, encoding) => readFile(path, encoding),
  readdir: (path) => readdir(path),
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
  link: (from, to) => link(from, to),
  unlink: (path) => unlink(path),
};
