import nodePath from 'node:path';
import { stateFolderName } from '@claw/core';
import {
  FileSessionLog,
  sessionFileExtension,
  sessionsFolder,
} from './file-session-log.js';
import type { SessionFileSystem } from './file-system.js';
import { assertWorkDir } from './session-id.js';
import { SessionStore } from './session-store.js';

/** Options of {@link FileSessionManager}. */
export interface FileSessionManagerOptions {
  /** The workspace whose sessions this manager keeps, in `<workDir>/.claw/sessions/`. */
  workDir: string;
  /** File operations underneath. Default: Node's `fs/promises`. */
  fileSystem?: SessionFileSystem;
  /** The clock for createdAt, updatedAt and event times. Default: the current time. */
  now?: () => Date;
  /**
   * A session file is compacted (rewritten as one snapshot) once the lines after its snapshot
   * reach the snapshot's size and at least this many bytes. Default: 256 KiB.
   */
  compactMinBytes?: number;
  /**
   * Flush every write to the disk hardware (fsync). Default: false: tool starts and snapshots
   * are flushed; other changes survive a crash of the process, and a power loss may lose the
   * last of them (never the file's readability).
   */
  syncEveryWrite?: boolean;
}

/**
 * Sessions on disk (SES-1..SES-5, RT-5): a `SessionStore` on a `FileSessionLog` in
 * `<workDir>/.claw/sessions/` — one file per session, `<id>.jsonl`, locked by `<id>.lock` while
 * a process has it open.
 */
export class FileSessionManager extends SessionStore {
  /** The folder holding the session files. */
  readonly directory: string;

  /** @throws SessionStoreError `invalid_work_dir` when `workDir` is empty. */
  constructor(options: FileSessionManagerOptions) {
    assertWorkDir(options.workDir);
    const workDir = nodePath.resolve(options.workDir);
    const directory = nodePath.join(workDir, sessionsFolder);
    super({
      log: new FileSessionLog({
        directory,
        stateFolder: nodePath.join(workDir, stateFolderName),
        ...(options.fileSystem === undefined ? {} : { fileSystem: options.fileSystem }),
        ...(options.compactMinBytes === undefined
          ? {}
          : { compactMinBytes: options.compactMinBytes }),
      }),
      workDir: options.workDir,
      ...(options.now === undefined ? {} : { now: options.now }),
      ...(options.syncEveryWrite === undefined ? {} : { syncEveryWrite: options.syncEveryWrite }),
    });
    this.directory = directory;
  }

  /**
   * The file of session `id`.
   *
   * @throws SessionStoreError `invalid_session_id`.
   */
  fileOf(id: string): string {
    return this.log.location(id);
  }
}

export { sessionFileExtension, sessionsFolder };
