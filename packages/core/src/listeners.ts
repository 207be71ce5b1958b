/**
 * Listeners of something that only informs (progress, a change of a list): each hears every
 * value, and one that throws misses that value alone. The others still hear it, and the emitter
 * never fails because of a listener.
 */
export class Listeners<T> {
  private readonly listeners = new Set<(value: T) => void>();

  /** The number of listeners. */
  get size(): number {
    return this.listeners.size;
  }

  /** Adds `listener`; returns the function that removes it (safe to call more than once). */
  add(listener: (value: T) => void): () => void {
    // A wrapper of its own, so that adding one function twice gives two independent listeners.
    const entry = (value: T): void => listener(value);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  /** Tells every listener there is now, in the order they were added. */
  emit(value: T): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(value);
      } catch {
        // Informational: a listener's failure is its own.
      }
    }
  }

  /** Removes every listener. */
  clear(): void {
    this.listeners.clear();
  }
}
