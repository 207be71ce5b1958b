import type { Message, Usage } from './messages.js';

/**
 * The conversation a run works on. The engine reads the history, appends to it, and records
 * token usage; how it is stored (memory, disk) is the implementation's business. `append` and
 * `recordUsage` resolve once the change is in place and, for a persistent session, on its way to
 * disk in order.
 */
export interface AgentSession {
  readonly id: string;
  readonly workDir: string;
  /** The whole history, oldest first. Callers must not mutate it. */
  history(): readonly Message[];
  append(...messages: Message[]): Promise<void>;
  recordUsage(usage: Usage): Promise<void>;
  /** Token totals over the session's life (kept across `/clear`). */
  usage(): Usage;
}
