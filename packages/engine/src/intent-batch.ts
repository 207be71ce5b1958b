/**
 * Lets the calls of one tool wave record their intents (SES-8) together: a call that passed its
 * checks waits until no other call of the wave is still being checked, then all that waited
 * record their intents in the same tick, so the session stores them in one write with one fsync
 * instead of one each (PERF-1). A call whose check waits for a person (the gate's `onAsking`)
 * no longer holds the others back; neither does one still waiting for its turn under the
 * concurrency limit, nor one not yet handed over (it has not started its checks). The wave hands
 * its calls over one after another, each once the reporter took its `tool_call`: when the reporter
 * answers at once, every call has entered before any check (which waits for the file system)
 * is done; a reporter that makes the wave wait only splits the batch, it never holds a call back.
 *
 * Every call that `enter`s must end its checks with exactly one of `ready` (it will run) or
 * `leave` (it will not run, or it now waits for a person and will come back through `ready`).
 */
export class IntentBatch {
  private checking = 0;
  private waiting: Array<() => void> = [];

  /** A call starts its checks (argument parsing, the approval gate). */
  enter(): void {
    this.checking += 1;
  }

  /** A call that `enter`ed stopped counting: it ended without running, or waits for a person. */
  leave(): void {
    this.checking -= 1;
    this.release();
  }

  /**
   * A call passed its checks (after `enter`, or after `leave` when it waited for a person: pass
   * `counted: false` then). Resolves when its intent may be recorded.
   */
  ready(counted = true): Promise<void> {
    if (counted) this.checking -= 1;
    const turn = new Promise<void>((resolve) => this.waiting.push(resolve));
    this.release();
    return turn;
  }

  private release(): void {
    if (this.checking > 0 || this.waiting.length === 0) return;
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve();
  }
}
