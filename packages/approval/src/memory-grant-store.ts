import { isGrantExpired, type Grant, type GrantStore } from './grant.js';

/** A `GrantStore` in memory, for tests and library users that keep nothing on disk. */
export class MemoryGrantStore implements GrantStore {
  private readonly grants = new Map<string, Grant>();

  /** The live grant with this key; an expired one (at `now`, default: now) is removed. */
  async get(key: string, now: Date = new Date()): Promise<Grant | undefined> {
    const grant = this.grants.get(key);
    if (grant === undefined) return undefined;
    if (isGrantExpired(grant, now)) {
      this.grants.delete(key);
      return undefined;
    }
    return { ...grant };
  }

  async put(grant: Grant): Promise<void> {
    this.grants.set(grant.key, { ...grant });
  }

  async delete(key: string): Promise<void> {
    this.grants.delete(key);
  }

  async list(): Promise<Grant[]> {
    return [...this.grants.values()].map((grant) => ({ ...grant }));
  }
}
