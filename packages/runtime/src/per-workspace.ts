import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { SharedResources } from '@claw/core';

/**
 * One value per workspace, keyed by the folder's real location (two spellings of one folder
 * share it), made once on first use and kept for the factory's life. A value that fails to be
 * made is not kept: the next `get` tries again (e.g. once a broken config file is fixed).
 */
export class PerWorkspace<T> {
  private readonly values: SharedResources<string, T>;

  constructor(make: (root: string) => Promise<T>) {
    this.values = new SharedResources({ make, keep: true });
  }

  async get(workDir: string): Promise<T> {
    const root = await realpath(workDir).catch(() => path.resolve(workDir));
    // Kept whether used or not: nothing to give back.
    return (await this.values.acquire(root)).value;
  }

  /** Every value made so far (some may still be in the making). */
  all(): Array<Promise<T>> {
    return this.values.values();
  }
}
