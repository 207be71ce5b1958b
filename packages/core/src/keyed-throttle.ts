/**
 * Lets each key through at most once every `everyMs` (say, one progress report a tool call to a
 * client). Keys are never told they ended, so all are forgotten once `maxKeys` are held.
 */
export class KeyedThrottle {
  private readonly lastAt = new Map<string, number>();

  constructor(
    private readonly everyMs: number,
    private readonly maxKeys: number,
  ) {}

  /** True, and noted as its last time, when `key` may go at `now`; false when it went lately. */
  allow(key: string, now = Date.now()): boolean {
    const last = this.lastAt.get(key);
    if (last !== undefined && now - last < this.everyMs) return false;
    if (this.lastAt.size >= this.maxKeys) this.lastAt.clear();
    this.lastAt.set(key, now);
    return true;
  }

  /** Forgets every key. */
  clear(): void {
    this.lastAt.clear();
  }
}
