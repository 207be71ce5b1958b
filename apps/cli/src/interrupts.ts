/** What to do on Ctrl-C / SIGINT (or SIGTERM); the latest registered handler gets it. */
export type InterruptHandler = (signal: NodeJS.Signals) => void;

/**
 * Routes the process's SIGINT and SIGTERM to whatever part of the app is in charge (the REPL,
 * a one-shot task). With nobody in charge (start-up), `fallback` runs (exit at once).
 */
export class Interrupts {
  private readonly handlers: InterruptHandler[] = [];
  private readonly fallback: InterruptHandler;

  constructor(fallback: InterruptHandler) {
    this.fallback = fallback;
  }

  fire(signal: NodeJS.Signals): void {
    const handler = this.handlers.at(-1);
    if (handler === undefined) this.fallback(signal);
    else handler(signal);
  }

  /** Puts `handler` in charge until the returned function is called. */
  handle(handler: InterruptHandler): () => void {
    this.handlers.push(handler);
    return () => {
      const index = this.handlers.lastIndexOf(handler);
      if (index >= 0) this.handlers.splice(index, 1);
    };
  }
}
