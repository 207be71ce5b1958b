import nodePath from 'node:path';
import { errorMessage } from '@claw/core';
import { SessionFileError } from './errors.js';
import { errnoCode, nodeSessionFileSystem, type SessionFileSystem } from './file-system.js';
import { defaultCompactMinBytes, FileSessionWriter, type WriterStart } from './file-session-writer.js';
import { byRecency, LiveSessions } from './live-sessions.js';
import { readLog, type LoadedLog } from './log-reader.js';
import type {
  GetOrCreateOptions,
  PersistentSession,
  SessionManager,
  SessionSummary,
} from './session-manager.js';
import { assertSessionId, assertWorkDir, isValidSessionId } from './session-id.js';
import { newSessionState } from './session-state.js';
import { StoredSession } from './stored-session.js';

/** The folder, under a workspace, that holds its session files. */
export const sessionsFolder = nodePath.join('.claw', 'sessions');

/** The extension of a session file. */
export const sessionFileExtension = '.jsonl';

/** Options of {@link FileSessionManager}. */
export interface FileSessionManagerOptions {
  /** The workspace whose sessions this manager keeps, in `<workDir>/.claw/sessions/`. */
  workDir: string;
  /** File operations underneath. Default: Node's `fs/promises`. */
  fileSystem?: SessionFileSystem;
  /** The clock for createdAt and updatedAt. Default: the current time. */
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
 * Sessions on disk (SES-1..SES-5): one file per session, `<workDir>/.claw/sessions/<id>.jsonl`.
 *
 * The file is JSON lines: a snapshot of the whole session first, then one record per change
 * (`append`, `usage`, `clear`, `tool_started`, `tool_finished`, `repair`), each with its version,
 * number and time, and a checksum. An append costs the size of the change, not of the history;
 * the file is compacted into a new snapshot (temporary file, fsync, rename) once the records
 * after the snapshot outweigh it. A crash at any byte leaves a readable file: a torn last line is
 * dropped on load; damage anywhere else is reported, never overwritten.
 *
 * Use one manager per workspace in a process: two managers on the same file would each write
 * their own view of it.
 */
export class FileSessionManager implements SessionManager {
  /** The folder holding the session files. */
  readonly directory: string;
  private readonly workDir: string;
  private readonly fileSystem: SessionFileSystem;
  private readonly now: () => Date;
  private readonly compactMinBytes: number;
  private readonly syncEveryWrite: boolean;
  private readonly live = new LiveSessions();

  /** @throws SessionStoreError `invalid_work_dir` when `workDir` is empty. */
  constructor(options: FileSessionManagerOptions) {
    assertWorkDir(options.workDir);
    this.workDir = options.workDir;
    this.directory = nodePath.join(nodePath.resolve(options.workDir), sessionsFolder);
    this.fileSystem = options.fileSystem ?? nodeSessionFileSystem;
    this.now = options.now ?? (() => new Date());
    this.compactMinBytes = options.compactMinBytes ?? defaultCompactMinBytes;
    this.syncEveryWrite = options.syncEveryWrite ?? false;
  }

  /**
   * The file of session `id`.
   *
   * @throws SessionStoreError `invalid_session_id`.
   */
  fileOf(id: string): string {
    assertSessionId(id);
    return nodePath.join(this.directory, `${id}${sessionFileExtension}`);
  }

  /**
   * The live session, else the one in its file (repaired at once, SES-7; a repair is the only
   * write a load makes), else a new one: a missing or empty file is a new session, and nothing
   * is written until its first change. The session takes the caller's `workDir` (SES-5).
   *
   * @throws SessionStoreError `invalid_session_id`, `invalid_work_dir`,
   * `session_workdir_conflict`; SessionFileError `session_read_failed`, `session_corrupt`,
   * `session_version_unsupported` (the file is left as it is), `session_write_failed` (the repair
   * could not be saved; the next call tries again).
   */
  getOrCreate(id: string, options: GetOrCreateOptions): Promise<PersistentSession> {
    return this.live.getOrOpen(id, options.workDir, () => this.open(id, options.workDir));
  }

  /**
   * Every session with a file or a live object, most recently changed first. Files that cannot
   * be read are left out (`getOrCreate` on their id says why).
   *
   * @throws SessionFileError `session_read_failed` when the folder cannot be listed.
   */
  async list(): Promise<SessionSummary[]> {
    const summaries = new Map<string, SessionSummary>();
    for (const session of await this.live.all()) summaries.set(session.id, session.summary());
    for (const name of await this.fileNames()) {
      const id = name.slice(0, -sessionFileExtension.length);
      if (!name.endsWith(sessionFileExtension) || !isValidSessionId(id) || summaries.has(id)) {
        continue;
      }
      const loaded = await this.read(this.fileOf(id), id, this.workDir).catch(() => undefined);
      if (loaded === undefined) continue;
      const { state } = loaded;
      summaries.set(id, {
        id,
        createdAt: state.createdAt,
        updatedAt: state.updatedAt,
        messageCount: state.messages.length,
        usage: state.usage,
        cost: state.cost,
      });
    }
    return [...summaries.values()].sort(byRecency);
  }

  /**
   * Empties a session's history and keeps its totals (SES-5).
   *
   * @throws what `getOrCreate` and `PersistentSession.clear` throw.
   */
  async clear(id: string): Promise<void> {
    assertSessionId(id);
    const session =
      (await this.live.peek(id)) ?? (await this.getOrCreate(id, { workDir: this.workDir }));
    await session.clear();
  }

  /**
   * Removes a session's file; its live object rejects later changes (`session_deleted`).
   *
   * @throws SessionStoreError `invalid_session_id`; SessionFileError `session_write_failed` when
   * the file cannot be removed.
   */
  async delete(id: string): Promise<void> {
    const file = this.fileOf(id);
    const live = await this.live.take(id);
    if (live !== undefined) {
      await live.delete();
      return;
    }
    try {
      await this.fileSystem.unlink(file);
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return;
      throw new SessionFileError(
        `Could not remove the session file ${file}: ${errorMessage(error)}. Check that the ` +
        '.claw folder is writable.',
        { code: 'session_write_failed', file, cause: error },
      );
    }
  }

  private async open(id: string, workDir: string): Promise<StoredSession> {
    const file = this.fileOf(id);
    const loaded = await this.read(file, id, workDir);
    const state =
      loaded?.state ?? newSessionState({ id, workDir, now: this.now().toISOString() });
    const start: WriterStart =
      loaded === undefined
        ? { persistedSeq: 0, snapshotBytes: 0, logBytes: 0, needsSnapshot: true }
        : {
            persistedSeq: loaded.state.seq,
            snapshotBytes: loaded.snapshotBytes,
            logBytes: loaded.logBytes,
            // A torn tail is rewritten away by the next write, never appended after.
            needsSnapshot: loaded.tornTail,
          };
    const session = new StoredSession({
      state,
      now: this.now,
      writer: (current) =>
        new FileSessionWriter({
          file,
          fileSystem: this.fileSystem,
          state: current,
          start,
          compactMinBytes: this.compactMinBytes,
          syncEveryWrite: this.syncEveryWrite,
        }),
    });
    await session.repair();
    return session;
  }

  /** The session in `file`; `undefined` when there is none yet (missing or empty file). */
  private async read(file: string, id: string, workDir: string): Promise<LoadedLog | undefined> {
    let text: string;
    try {
      text = await this.fileSystem.readFile(file, 'utf8');
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return undefined;
      throw new SessionFileError(
        `Could not read the session file ${file}: ${errorMessage(error)}. Check that claw may ` +
        'read it.',
        { code: 'session_read_failed', file, cause: error },
      );
    }
    if (text === '') return undefined;
    return readLog(text, { file, id, workDir });
  }

  private async fileNames(): Promise<string[]> {
    try {
      return await this.fileSystem.readdir(this.directory);
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return [];
      throw new SessionFileError(
        `Could not list the sessions in ${this.directory}: ${errorMessage(error)}.`,
        { code: 'session_read_failed', file: this.directory, cause: error },
      );
    }
  }
}
