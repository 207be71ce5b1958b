import { ClawError } from '@claw/core';
import { UnknownRuntimeError } from './errors.js';
import type { Runtime } from './runtime.js';

/**
 * Runtimes by id (RT-1): the server keeps one per connection. `destroy` cancels the runtime's task
 * and releases it.
 */
export class RuntimeManager {
  private readonly runtimes = new Map<string, Runtime>();

  /**
   * Registers a runtime built elsewhere (by the factory).
   *
   * @throws ClawError `runtime_exists` when the id is taken.
   */
  add(runtime: Runtime): void {
    if (this.runtimes.has(runtime.id)) {
      throw new ClawError(`a runtime with id ${JSON.stringify(runtime.id)} already exists`, {
        code: 'runtime_exists',
      });
    }
    this.runtimes.set(runtime.id, runtime);
  }

  /** @throws UnknownRuntimeError */
  get(id: string): Runtime {
    const runtime = this.runtimes.get(id);
    if (runtime === undefined) throw new UnknownRuntimeError(id);
    return runtime;
  }

  has(id: string): boolean {
    return this.runtimes.has(id);
  }

  ids(): string[] {
    return [...this.runtimes.keys()];
  }

  /**
   * Cancels the runtime's task, waits for it, and forgets the runtime.
   *
   * @throws UnknownRuntimeError
   */
  async destroy(id: string): Promise<void> {
    const runtime = this.get(id);
    this.runtimes.delete(id);
    await runtime.close();
  }

  /** Destroys every runtime (server shutdown). */
  async destroyAll(): Promise<void> {
    const all = [...this.runtimes.values()];
    this.runtimes.clear();
    await Promise.all(all.map((runtime) => runtime.close()));
  }
}
