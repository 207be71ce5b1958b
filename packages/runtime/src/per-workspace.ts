import { realpath } from 'node:fs/promises';
import path from 'node:path';

/**
 * One value per workspace, keyed by the folder's real location (two spellings of one folder
 * share it), made once on first use and kept for the factory's life. A value that fails to be
 * made is not kept: the next `get` tries again (e.g. once a broken config file is fixed).
 */
export class PerWorkspace<T> {
  private readonly values = new Map<string, Promise<T>>();

  constructor(private readonly make: (root: string) => Promise<T>) {}

  async get(workDir: string): Promise<T> {
    const root = await realpath(workDir).catch(() => path.resolve(workDir));
    let value = this.values.get(root);
    if (value === undefined) {
      const made = this.make(root);
      value = made;
      this.values.set(root, made);
      made.catch(() => {
        if (this.values.get(root) === made) this.values.delete(root);
      });
    }
    return value;
  }

  /** Every value made so far (some may still be in the making). */
  all(): Array<Promise<T>> {
    return [...this.values.values()];
  }
}
