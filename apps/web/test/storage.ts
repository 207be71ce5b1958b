// An in-memory sessionStorage, with an optional quota (a browser throws QuotaExceededError).

export class MemoryStorage implements Storage {
  [name: string]: unknown;
  readonly values = new Map<string, string>();
  /** setItem calls, key by key, to see what a save wrote. */
  readonly writes: string[] = [];

  constructor(private readonly quota = Number.POSITIVE_INFINITY) {}

  get length(): number {
    return this.values.size;
  }

  key(index: number): string | null {
    return [...this.values.keys()][index] ?? null;
  }

  getItem(key: string): string | null {
    return this.values.get(key) ?? null;
  }

  setItem(key: string, value: string): void {
    this.writes.push(key);
    const used = [...this.values].reduce(
      (sum, [name, text]) => sum + (name === key ? 0 : name.length + text.length),
      0,
    );
    if (used + key.length + value.length > this.quota) {
      throw new DOMException(`Setting the value of '${key}' exceeded the quota.`, 'QuotaExceededError');
    }
    this.values.set(key, value);
  }

  removeItem(key: string): void {
    this.values.delete(key);
  }

  clear(): void {
    this.values.clear();
  }
}
