/** Options of {@link SharedResources}. */
export interface SharedResourcesOptions<K, T> {
  /** Makes the value of `key` for its first user (again after it was let go). */
  make: (key: K) => T | Promise<T>;
  /**
   * Lets a value go once its last user released it (not called for a value that failed to be
   * made). Its failure is what that last `release` rejects with. Default: nothing to do.
   */
  dispose?: (value: T, key: K) => void | Promise<void>;
  /**
   * Keep each value made, used or not, until `clear` (a cache for a factory's life). Default
   * false: a value is let go when its last user releases it, so nothing is kept nobody uses.
   */
  keep?: boolean;
}

/** One use of a shared value: call `release` once when done (later calls do nothing). */
export interface SharedLease<T> {
  readonly value: T;
  /** Gives this use up; the last one lets the value go and resolves once it is gone. */
  release(): Promise<void>;
}

interface Entry<T> {
  value: Promise<T>;
  users: number;
  /** Set while the value is let go: a new user waits for it, then gets a new value. */
  disposing: Promise<void> | undefined;
}

/**
 * Values shared by key while something uses them (LIFE-1): the first `acquire` of a key makes
 * its value, later ones share it, and the last `release` lets it go (`dispose`) — unless `keep`.
 * A value that fails to be made is not kept: its users get the error and the next `acquire`
 * tries again. An `acquire` that comes while a value is being let go waits for that, then makes
 * a new one, so two values of one key never live at once.
 */
export class SharedResources<K, T> {
  private readonly entries = new Map<K, Entry<T>>();

  constructor(private readonly options: SharedResourcesOptions<K, T>) {}

  /**
   * The value of `key`, made if nobody has it, and the lease that gives this use up.
   *
   * @throws what `make` throws (this use is then released).
   */
  async acquire(key: K): Promise<SharedLease<T>> {
    for (;;) {
      const entry = this.entries.get(key);
      if (entry?.disposing !== undefined) {
        await entry.disposing.catch(() => undefined);
        if (this.entries.get(key) === entry) this.entries.delete(key);
        continue;
      }
      const current = entry ?? this.begin(key);
      current.users += 1;
      let value: T;
      try {
        value = await current.value;
      } catch (error) {
        current.users -= 1;
        throw error;
      }
      return { value, release: this.releaser(key, current) };
    }
  }

  /** The value of `key` when one is made or being made, without becoming a user of it. */
  peek(key: K): Promise<T> | undefined {
    const entry = this.entries.get(key);
    return entry?.disposing === undefined ? entry?.value : undefined;
  }

  /** How many keys have a value now (made, being made, or being let go). */
  get size(): number {
    return this.entries.size;
  }

  /** Every value made or being made now. */
  values(): Array<Promise<T>> {
    return [...this.entries.values()]
      .filter((entry) => entry.disposing === undefined)
      .map((entry) => entry.value);
  }

  /**
   * Lets every value go, used or not (a factory closing), and waits for them; the leases still
   * out do nothing when released. Rejects with the first failure of `dispose` after trying all.
   */
  async clear(): Promise<void> {
    const entries = [...this.entries];
    const settled = await Promise.allSettled(entries.map(([key, entry]) => this.letGo(key, entry)));
    const failed = settled.find((result) => result.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  }

  private begin(key: K): Entry<T> {
    const entry: Entry<T> = {
      value: Promise.resolve().then(() => this.options.make(key)),
      users: 0,
      disposing: undefined,
    };
    this.entries.set(key, entry);
    entry.value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return entry;
  }

  private releaser(key: K, entry: Entry<T>): () => Promise<void> {
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      entry.users -= 1;
      if (entry.users > 0 || this.options.keep === true) return;
      if (this.entries.get(key) !== entry || entry.disposing !== undefined) return;
      await this.letGo(key, entry);
    };
  }

  private letGo(key: K, entry: Entry<T>): Promise<void> {
    entry.disposing ??= (async () => {
      try {
        const made = await entry.value.then((value) => ({ value }), () => undefined);
        if (made !== undefined) await this.options.dispose?.(made.value, key);
      } finally {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      }
    })();
    return entry.disposing;
  }
}
