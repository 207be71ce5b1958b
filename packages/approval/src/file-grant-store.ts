import nodePath from 'node:path';
import {
  SerialQueue,
  errnoCode,
  errorMessage,
  prepareStateFolder,
  stateFolderName,
  writeFileAtomically,
} from '@claw/core';
import { GrantStoreError } from './errors.js';
import { nodeFileSystem, type ApprovalFileSystem } from './file-system.js';
import { isGrantExpired, type Grant, type GrantStore } from './grant.js';
import { parseGrantFile, serializeGrantFile } from './grant-file.js';

/** Options of {@link FileGrantStore}. */
export interface FileGrantStoreOptions {
  /** The workspace root; grants are kept in `<workDir>/.claw/grants.json`. */
  workDir: string;
  /** File operations underneath. Default: Node's `fs/promises`. */
  fileSystem?: ApprovalFileSystem;
}

/**
 * Session grants kept in `<workDir>/.claw/grants.json` (APR-3), a JSON object with a `version`
 * and the `grants`, audit fields included (APR-4).
 *
 * The file is the only copy: every operation reads it afresh, and every change is made to what
 * the file holds then, so that several processes working in one workspace (a `claw` in each of
 * two sessions, a `claw-server` beside them) keep each other's grants instead of writing back a
 * view read earlier. Every change writes the whole file to a temporary file in the same folder,
 * flushes it to disk and renames it over the old one, so a crash never leaves half a file. In a
 * process, all operations of one instance run one at a time, so concurrent `put`s are all kept.
 * Between processes there is no lock: two changes whose read and rename overlap (within about a
 * millisecond of each other) can still lose the first. A session's grants are written only by
 * the process that has the session (RT-5), and a lost grant is asked for again, never widened.
 *
 * Every method may throw a `GrantStoreError`: `grant_store_read_failed` when the file cannot be
 * read, `grant_store_corrupt` when it is not a grant file (it is then never overwritten; a
 * repaired file is picked up by the next call), `grant_store_write_failed` when a change cannot be
 * written (the file then holds what it held).
 */
export class FileGrantStore implements GrantStore {
  /** The grant file. */
  readonly file: string;
  private readonly fileSystem: ApprovalFileSystem;
  private readonly queue = new SerialQueue();

  constructor(options: FileGrantStoreOptions) {
    this.file = nodePath.join(nodePath.resolve(options.workDir), stateFolderName, 'grants.json');
    this.fileSystem = options.fileSystem ?? nodeFileSystem;
  }

  /**
   * The live grant with this key. An expired one (at `now`, default: the current time) is removed
   * from the file and not returned.
   */
  get(key: string, now: Date = new Date()): Promise<Grant | undefined> {
    return this.queue.run(async () => {
      const grant = (await this.read()).get(key);
      if (grant === undefined) return undefined;
      if (isGrantExpired(grant, now)) {
        await this.change('remove an expired grant', (next) => next.delete(key));
        return undefined;
      }
      return { ...grant };
    });
  }

  /** Adds the grant (replacing one with the same key) and writes the file. */
  put(grant: Grant): Promise<void> {
    return this.queue.run(() =>
      this.change('save a grant', (next) => next.set(grant.key, { ...grant })),
    );
  }

  /** Removes the grant with this key and writes the file; nothing is written when there is none. */
  delete(key: string): Promise<void> {
    return this.queue.run(() => this.change('remove a grant', (next) => next.delete(key)));
  }

  /** Every grant in the file, expired ones included. */
  list(): Promise<Grant[]> {
    return this.queue.run(async () => [...(await this.read()).values()]);
  }

  /** The grants the file holds now (none without a file). */
  private async read(): Promise<Map<string, Grant>> {
    let text: string;
    try {
      text = await this.fileSystem.readFile(this.file, 'utf8');
    } catch (error) {
      if (errnoCode(error) !== 'ENOENT') {
        throw new GrantStoreError(
          `Could not read the grant file ${this.file}: ${errorMessage(error)}. Check that claw ` +
          'may read it.',
          { code: 'grant_store_read_failed', file: this.file, cause: error },
        );
      }
      text = '';
    }
    return parseGrantFile(text, this.file);
  }

  /**
   * Applies `mutate` to what the file holds now and writes the result; writes nothing when
   * `mutate` changed nothing (it returns false, as `Map.delete` of a missing key does).
   */
  private async change(
    action: string,
    mutate: (next: Map<string, Grant>) => unknown,
  ): Promise<void> {
    const next = await this.read();
    if (mutate(next) === false) return;
    try {
      await this.writeAtomically(serializeGrantFile(next.values()));
    } catch (error) {
      throw new GrantStoreError(
        `Could not write the grant file ${this.file} to ${action}: ${errorMessage(error)}. ` +
        'Nothing was changed. Check that the .claw folder is writable and the disk has room.',
        { code: 'grant_store_write_failed', file: this.file, cause: error },
      );
    }
  }

  private async writeAtomically(text: string): Promise<void> {
    await prepareStateFolder(this.fileSystem, nodePath.dirname(this.file));
    await writeFileAtomically(this.fileSystem, this.file, text);
  }
}
