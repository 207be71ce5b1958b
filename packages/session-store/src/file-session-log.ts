import { constants } from 'node:fs';
import nodePath from 'node:path';
import {
  errnoCode,
  errorMessage,
  prepareStateFolder,
  writeFileAtomically,
  writeFlushedTemporary,
} from '@claw/core';
import { SessionLogError } from './errors.js';
import {
  nodeSessionFileSystem,
  type SessionFileHandle,
  type SessionFileSystem,
} from './file-system.js';
import { acquireLockFile } from './lock-file.js';
import { readLog } from './log-reader.js';
import { encodeChange, encodeSnapshot } from './records.js';
import {
  checkAppendSeqs,
  type AppendResult,
  type LogRecord,
  type SessionLog,
  type SessionLogLock,
  type SessionPage,
  type SessionSnapshot,
  type SessionSummary,
  type StoredLog,
  type UnreadableSession,
} from './session-log.js';
import { assertSessionId, isValidSessionId } from './session-id.js';
import { summaryOf } from './summary.js';

/** The folder, under a workspace, that holds its session files. */
export const sessionsFolder = nodePath.join('.claw', 'sessions');

/** The extension of a session file. */
export const sessionFileExtension = '.jsonl';

/** Default of `compactMinBytes`: the log is not compacted before it holds this many bytes. */
export const defaultCompactMinBytes = 256 * 1024;

const appendFlags = constants.O_WRONLY | constants.O_APPEND;

/** Options of {@link FileSessionLog}. */
export interface FileSessionLogOptions {
  /** The folder of the session files, e.g. `<workDir>/.claw/sessions`. */
  directory: string;
  /**
   * The workspace's state folder the directory is in (`<workDir>/.claw`), made with its
   * `.gitignore` before the first session file (`prepareStateFolder`). Default: none.
   */
  stateFolder?: string;
  /** File operations underneath. Default: Node's `fs/promises`. */
  fileSystem?: SessionFileSystem;
  /**
   * The records after a snapshot are compacted into a new one once they reach the snapshot's
   * size and at least this many bytes. Default: 256 KiB.
   */
  compactMinBytes?: number;
}

/** What the log knows about one session file it has read or written. */
interface FileState {
  lastSeq: number;
  snapshotBytes: number;
  logBytes: number;
  /** Kept open between appends; closed by compaction, removal and release. */
  handle: SessionFileHandle | undefined;
  /** While `compactBeside` writes its snapshot: what is appended meanwhile, to go after it. */
  carried?: Carried;
  /** The flush of the folder after a compaction's rename; a flushed append waits for it. */
  folderSynced?: Promise<void>;
}

/** The appends made while a compaction beside them writes its snapshot. */
interface Carried {
  text: string[];
  bytes: number;
  /** One of them was flushed: so is the new file, before it takes the old one's place. */
  sync: boolean;
}

/**
 * Sessions as files (RT-6, SES-2): `<directory>/<id>.jsonl` holds a snapshot line, then one line
 * per change, each a JSON record with its version, number, time and a checksum; `<id>.lock` is
 * the session's lock (RT-5). An append costs the size of the change, not of the history; the
 * file is rewritten as a new snapshot (temporary file, fsync, rename: the commit point) when the
 * writer compacts. A crash at any byte leaves a readable file: a torn last line is dropped on
 * load; damage anywhere else is reported, never overwritten.
 */
export class FileSessionLog implements SessionLog {
  readonly directory: string;
  private readonly fileSystem: SessionFileSystem;
  private readonly compactMinBytes: number;
  private readonly files = new Map<string, FileState>();
  private readonly stateFolder: string | undefined;
  private folderReady: Promise<void> | undefined;
  private staleTemporariesChecked = new Set<string>();
  /**
   * A session's file work that must not overlap a compaction's switch of files: the switch, and
   * the appends that come while it waits or works.
   */
  private readonly turns = new Map<string, Promise<void>>();
  /** The last append made at once (no switch pending), settled or not: a switch waits for it. */
  private readonly lastAppends = new Map<string, Promise<unknown>>();
  /** The compactions beside appends under way; every other call on the session waits for it. */
  private readonly besides = new Map<string, Promise<void>>();

  constructor(options: FileSessionLogOptions) {
    this.directory = nodePath.resolve(options.directory);
    this.fileSystem = options.fileSystem ?? nodeSessionFileSystem;
    this.compactMinBytes = options.compactMinBytes ?? defaultCompactMinBytes;
    this.stateFolder = options.stateFolder === undefined
      ? undefined
      : nodePath.resolve(options.stateFolder);
  }

  /** The file of session `id`. @throws SessionStoreError `invalid_session_id`. */
  location(id: string): string {
    assertSessionId(id);
    return nodePath.join(this.directory, `${id}${sessionFileExtension}`);
  }

  async acquire(id: string): Promise<SessionLogLock> {
    const file = `${this.location(id).slice(0, -sessionFileExtension.length)}.lock`;
    await this.ensureFolder(file);
    const lock = await acquireLockFile({ file, sessionId: id, fileSystem: this.fileSystem });
    return {
      holder: lock.holder,
      release: async () => {
        await this.forget(id);
        await lock.release();
      },
    };
  }

  async load(id: string): Promise<StoredLog | undefined> {
    const file = this.location(id);
    await this.besides.get(id);
    return this.loadNow(id, file);
  }

  private async loadNow(id: string, file: string): Promise<StoredLog | undefined> {
    const text = await this.readSessionFile(file);
    if (text === undefined) return undefined;
    const read = readLog(text, { file, id });
    await this.closeHandle(id);
    this.files.set(id, {
      lastSeq: read.lastSeq,
      snapshotBytes: read.snapshotBytes,
      logBytes: read.logBytes,
      handle: undefined,
    });
    return read.log;
  }

  append(
    id: string,
    records: readonly LogRecord[],
    options: { sync: boolean; onWritten?: () => void },
  ): Promise<AppendResult> {
    const file = this.location(id);
    if (this.turns.has(id)) {
      return this.inTurn(id, () => this.appendNow(id, file, records, options));
    }
    // One append at a time (a session has one writer). No switch of files is pending: at once.
    const appended = this.appendNow(id, file, records, options);
    this.lastAppends.set(id, appended);
    return appended;
  }

  private async appendNow(
    id: string,
    file: string,
    records: readonly LogRecord[],
    options: { sync: boolean; onWritten?: () => void },
  ): Promise<AppendResult> {
    const state = this.files.get(id) ?? (await this.stateFromFile(id, file));
    checkAppendSeqs(records, state.lastSeq, file);
    const last = records.at(-1);
    if (last === undefined) return { compactionDue: this.compactionDue(state) };
    const text = records
      .map((record) => encodeChange(record.seq, record.at, record.change, record.encoded))
      .join('');
    try {
      state.handle ??= await this.fileSystem.open(file, appendFlags);
      const writing = appendText(state.handle, text);
      if (writing !== undefined) await writing;
      const carried = state.carried;
      if (carried !== undefined) {
        carried.text.push(text);
        carried.bytes += Buffer.byteLength(text, 'utf8');
        carried.sync ||= options.sync;
      }
      options.onWritten?.();
      if (options.sync) {
        await state.handle.sync();
        // Just after a compaction: the new file's name is durable too.
        await state.folderSynced;
      }
    } catch (error) {
      await this.closeHandle(id);
      // The lines may be half on disk: only a new snapshot puts the file right.
      this.files.delete(id);
      if (errnoCode(error) === 'ENOENT') {
        throw new SessionLogError(
          `The session file ${file} is gone (removed behind claw's back).`,
          { code: 'session_missing', location: file, cause: error },
        );
      }
      throw this.writeFailed(file, 'save a change', error);
    }
    state.lastSeq = last.seq;
    state.logBytes += Buffer.byteLength(text, 'utf8');
    return { compactionDue: this.compactionDue(state) };
  }

  async compact(id: string, snapshot: SessionSnapshot): Promise<void> {
    await this.besides.get(id);
    await this.compactNow(id, snapshot);
  }

  private async compactNow(id: string, snapshot: SessionSnapshot): Promise<void> {
    const file = this.location(id);
    const line = encodeSnapshot(snapshot);
    await this.closeHandle(id);
    this.files.delete(id);
    try {
      await this.ensureFolder(file);
      await writeFileAtomically(this.fileSystem, file, line);
    } catch (error) {
      throw this.writeFailed(file, 'save the session', error);
    }
    await this.syncFolder(nodePath.dirname(file));
    this.files.set(id, {
      lastSeq: snapshot.seq,
      snapshotBytes: Buffer.byteLength(line, 'utf8'),
      logBytes: 0,
      handle: undefined,
    });
    await this.checkStaleTemporaries(id, file);
  }

  /**
   * `compact` beside the appends that come meanwhile (see `SessionLog.compactBeside`): the
   * snapshot is written to a temporary file and flushed while they go on into the session file;
   * then, between two appends, the temporary file gets what they appended (flushed too when one of
   * them was), takes the session file's place (rename) and the folder is flushed. Only the switch
   * holds appends back, and only a carried flushed append makes it wait for a flush; an append
   * that is to be flushed waits for the folder's flush. Every other call on the session waits for
   * the compaction. When an append fails meanwhile (the next write is then a whole snapshot) or
   * the session is let go, the compaction gives up and the file stays as it was. One at a time:
   * a second waits for the first. Where the file is not known to be at `snapshot.seq` (not read
   * or written in this process), it compacts as `compact` does, with the appends held back.
   */
  compactBeside(id: string, snapshot: SessionSnapshot): Promise<void> {
    const under = this.besides.get(id);
    if (under !== undefined) return under.then(() => this.compactBeside(id, snapshot));
    const state = this.files.get(id);
    if (state === undefined || state.lastSeq !== snapshot.seq) {
      return this.inTurn(id, () => this.compactNow(id, snapshot));
    }
    // Set before this returns: every append after the snapshot's last record is carried over.
    const carried: Carried = { text: [], bytes: 0, sync: false };
    state.carried = carried;
    const file = this.location(id);
    const done = this.switchAfterSnapshot(id, file, encodeSnapshot(snapshot), state, carried);
    const settled = done.then(
      () => undefined,
      () => undefined,
    );
    this.besides.set(id, settled);
    void settled.then(() => {
      if (state.carried === carried) state.carried = undefined;
      if (this.besides.get(id) === settled) this.besides.delete(id);
    });
    return done;
  }

  private async switchAfterSnapshot(
    id: string,
    file: string,
    line: string,
    state: FileState,
    carried: Carried,
  ): Promise<void> {
    let temporary: string;
    try {
      temporary = await writeFlushedTemporary(this.fileSystem, file, line);
    } catch (error) {
      throw this.writeFailed(file, 'save the session', error);
    }
    let renamed = false;
    try {
      renamed = await this.inTurn(id, async () => {
        // An append failed meanwhile (a whole snapshot comes next), or the session was let go.
        if (this.files.get(id) !== state) return false;
        const tail = carried.text.join('');
        if (tail !== '') {
          const appending = await this.fileSystem.open(temporary, appendFlags);
          try {
            await appendText(appending, tail);
            if (carried.sync) await appending.sync();
          } finally {
            await appending.close();
          }
        }
        await this.fileSystem.rename(temporary, file);
        await this.closeHandle(id);
        this.files.set(id, {
          lastSeq: state.lastSeq,
          snapshotBytes: Buffer.byteLength(line, 'utf8'),
          logBytes: carried.bytes,
          handle: undefined,
          folderSynced: this.syncFolder(nodePath.dirname(file)),
        });
        return true;
      });
    } catch (error) {
      throw this.writeFailed(file, 'save the session', error);
    } finally {
      if (!renamed) await this.fileSystem.unlink(temporary).catch(() => undefined);
    }
    await this.files.get(id)?.folderSynced;
    await this.checkStaleTemporaries(id, file);
  }

  /** Runs `work` once the session's file work under way is done, and before the next. */
  private async inTurn<T>(id: string, work: () => Promise<T>): Promise<T> {
    const before = this.turns.get(id);
    let finish: () => void = () => undefined;
    const mine = new Promise<void>((resolve) => {
      finish = resolve;
    });
    this.turns.set(id, mine);
    try {
      if (before !== undefined) await before;
      await this.lastAppends.get(id)?.catch(() => undefined);
      return await work();
    } finally {
      finish();
      if (this.turns.get(id) === mine) this.turns.delete(id);
    }
  }

  /** The first compaction of a session removes what a crash during an earlier one left. */
  private async checkStaleTemporaries(id: string, file: string): Promise<void> {
    if (this.staleTemporariesChecked.has(id)) return;
    this.staleTemporariesChecked.add(id);
    await this.removeStaleTemporaries(file);
  }

  async remove(id: string): Promise<void> {
    const file = this.location(id);
    await this.forget(id);
    try {
      await this.fileSystem.unlink(file);
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return;
      throw new SessionLogError(
        `Could not remove the session file ${file}: ${errorMessage(error)}. Check that the ` +
        '.claw folder is writable.',
        { code: 'session_write_failed', location: file, cause: error },
      );
    }
  }

  async list(options: { limit?: number; after?: string } = {}): Promise<SessionPage> {
    const limit = Math.max(1, options.limit ?? 100);
    const ids = (await this.fileNames())
      .filter((name) => name.endsWith(sessionFileExtension))
      .map((name) => name.slice(0, -sessionFileExtension.length))
      .filter((id) => isValidSessionId(id) && (options.after === undefined || id > options.after))
      .sort();
    const sessions: SessionSummary[] = [];
    const unreadable: UnreadableSession[] = [];
    let index = 0;
    for (; index < ids.length && sessions.length + unreadable.length < limit; index += 1) {
      const id = ids[index] as string;
      try {
        const summary = await this.summary(id);
        if (summary !== undefined) sessions.push(summary);
      } catch (error) {
        unreadable.push({ id, location: this.location(id), reason: errorMessage(error) });
      }
    }
    const page: SessionPage = unreadable.length > 0 ? { sessions, unreadable } : { sessions };
    if (index < ids.length) page.next = ids[index - 1];
    return page;
  }

  /** Closes what the log keeps open for a session and forgets what it knew. */
  private async forget(id: string): Promise<void> {
    await this.besides.get(id);
    this.lastAppends.delete(id);
    await this.closeHandle(id);
    this.files.delete(id);
  }

  /**
   * The summary of a stored session; undefined when it has no file (any more) or an empty one (a
   * session not written yet, SES-3).
   *
   * @throws SessionLogError what `load` throws for it.
   */
  private async summary(id: string): Promise<SessionSummary | undefined> {
    const file = this.location(id);
    const text = await this.readSessionFile(file);
    if (text === undefined) return undefined;
    const { log } = readLog(text, { file, id });
    return summaryOf(log);
  }

  /** A session file's text; undefined when there is none, or it is empty. */
  private async readSessionFile(file: string): Promise<string | undefined> {
    let text: string;
    try {
      text = await this.fileSystem.readFile(file, 'utf8');
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return undefined;
      throw new SessionLogError(
        `Could not read the session file ${file}: ${errorMessage(error)}. Check that claw may ` +
        'read it.',
        { code: 'session_read_failed', location: file, cause: error },
      );
    }
    return text === '' ? undefined : text;
  }

  private async stateFromFile(id: string, file: string): Promise<FileState> {
    // In an append's turn: no compaction is switching files now (it would wait for the turn).
    if ((await this.loadNow(id, file)) === undefined) {
      throw new SessionLogError(
        `The session file ${file} does not exist: write a snapshot first.`,
        { code: 'session_missing', location: file },
      );
    }
    return this.files.get(id) as FileState;
  }

  private compactionDue(state: FileState): boolean {
    return state.logBytes >= Math.max(this.compactMinBytes, state.snapshotBytes);
  }

  private async closeHandle(id: string): Promise<void> {
    const state = this.files.get(id);
    const handle = state?.handle;
    if (state === undefined || handle === undefined) return;
    state.handle = undefined;
    await handle.close().catch(() => undefined);
  }

  /** Creates the sessions folder (and the state folder it is in) once per log. */
  private ensureFolder(file: string): Promise<void> {
    const { stateFolder, fileSystem } = this;
    this.folderReady ??= (
      stateFolder === undefined ? Promise.resolve() : prepareStateFolder(fileSystem, stateFolder)
    )
      .then(() => fileSystem.mkdir(nodePath.dirname(file), { recursive: true }))
      .then(() => undefined);
    const ready = this.folderReady;
    // A failure is not cached: the next call tries again.
    ready.catch(() => {
      if (this.folderReady === ready) this.folderReady = undefined;
    });
    return ready;
  }

  /** Makes a rename durable. Best effort: not every platform can open a folder. */
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
  private async removeStaleTemporaries(file: string): Promise<void> {
    const folder = nodePath.dirname(file);
    const prefix = `${nodePath.basename(file)}.`;
    const stale = /^[0-9a-f-]{36}\.tmp$/;
    try {
      for (const name of await this.fileSystem.readdir(folder)) {
        if (!name.startsWith(prefix) || !stale.test(name.slice(prefix.length))) continue;
        await this.fileSystem.unlink(nodePath.join(folder, name)).catch(() => undefined);
      }
    } catch {
      // Leftovers are harmless: they are never read.
    }
  }

  private async fileNames(): Promise<string[]> {
    try {
      return await this.fileSystem.readdir(this.directory);
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return [];
      throw new SessionLogError(
        `Could not list the sessions in ${this.directory}: ${errorMessage(error)}.`,
        { code: 'session_read_failed', location: this.directory, cause: error },
      );
    }
  }

  private writeFailed(file: string, action: string, cause: unknown): SessionLogError {
    return new SessionLogError(
      `Could not write the session file ${file} to ${action}: ${errorMessage(cause)}. ` +
      'The session in memory is complete and is written out in full with the next change. ' +
      'Check that the .claw folder is writable and the disk has room.',
      { code: 'session_write_failed', location: file, cause },
    );
  }
}

/**
 * Appends `text` through a file opened to append: at once where the handle can (then nothing is
 * returned to wait for: an append's own records are written before it yields).
 */
function appendText(handle: SessionFileHandle, text: string): Promise<void> | undefined {
  if (handle.appendSync === undefined) return handle.writeFile(text, 'utf8');
  handle.appendSync(text);
  return undefined;
}
