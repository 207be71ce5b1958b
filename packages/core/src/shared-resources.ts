/** Options of {@link SharedResources}. */
export interface SharedResourcesOptions<K, T> {
  /**
   * Makes the value of `key` for its first user (again after it was let go), unless that
   * `acquire` gives its own maker.
   */
  make?: (key: K) => T | Promise<T>;
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
  readonly release: () => Promise<void>;
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
  private readonly byKey = new Map<K, Entry<T>>();

  constructor(private readonly options: SharedResourcesOptions<K, T>) {}

  /**
   * The value of `key`, made if nobody has it, and the lease that gives this use up. `make`
   * makes it instead of the options' maker (e.g. from what the first user knows); a user who
   * finds the value made is not asked.
   *
   * @throws what the maker throws (this use is then released).
   */
  async acquire(key: K, make?: (key: K) => T | Promise<T>): Promise<SharedLease<T>> {
    for (;;) {
      const entry = this.byKey.get(key);
      if (entry?.disposing !== undefined) {
        await entry.disposing.catch(() => undefined);
        if (this.byKey.get(key) === entry) this.byKey.delete(key);
        continue;
      }
      const current = entry ?? this.begin(key, make);
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
    const entry = this.byKey.get(key);
    return entry?.disposing === undefined ? entry?.value : undefined;
  }

  /** Every key with a value made or being made now, with it. */
  entries(): Array<[K, Promise<T>]> {
    return [...this.byKey]
      .filter(([, entry]) => entry.disposing === undefined)
      .map(([key, entry]) => [key, entry.value]);
  }

  /**
   * Takes the value of `key` out without letting it go: the caller now owns it (to destroy it
   * otherwise, say), the leases still out do nothing when released, and the next `acquire`
   * makes a new one. Undefined when the key has no value, or its value is being let go.
   */
  forget(key: K): Promise<T> | undefined {
    const entry = this.byKey.get(key);
    if (entry === undefined || entry.disposing !== undefined) return undefined;
    this.byKey.delete(key);
    return entry.value;
  }

  /** Resolves once no value of `key` is being let go (never rejects). */
  async settled(key: K): Promise<void> {
    await this.byKey.get(key)?.disposing?.catch(() => undefined);
  }

  /** How many keys have a value now (made, being made, or being let go). */
  get size(): number {
    return this.byKey.size;
  }

  /** Every value made or being made now. */
  values(): Array<Promise<T>> {
    return [...this.byKey.values()]
      .filter((entry) => entry.disposing === undefined)
      .map((entry) => entry.value);
  }

  /**
   * Lets every value go, used or not (a factory closing), and waits for them; the leases still
   * out do nothing when released. Rejects with the first failure of `dispose` after trying all.
   */
  async clear(): Promise<void> {
    const entries = [...this.byKey];
    const settled = await Promise.allSettled(entries.map(([key, entry]) => this.letGo(key, entry)));
    const failed = settled.find((result) => result.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  }

  private begin(key: K, make = this.options.make): Entry<T> {
    if (make === undefined) {
      throw new TypeError('SharedResources: no maker given, neither in the options nor to acquire');
    }
    const entry: Entry<T> = {
      value: Promise.resolve().then(() => make(key)),
      users: 0,
      disposing: undefined,
    };
    this.byKey.set(key, entry);
    entry.value.catch(() => {
      if (this.byKey.get(key) === entry) this.byKey.delete(key);
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
      if (this.byKey.get(key) !== entry || entry.disposing !== undefined) return;
      await this.letGo(key, entry);
    };
  }

  private letGo(key: K, entry: Entry<T>): Promise<void> {
    entry.disposing ??= (async () => {
      try {
        const made = await entry.value.then((value) => ({ value }), () => undefined);
        if (made !== undefined) await this.options.dispose?.(made.value, key);
      } finally {
        if (this.byKey.get(key) === entry) this.byKey.delete(key);
      }
    })();
    return entry.disposing;
  }
}
