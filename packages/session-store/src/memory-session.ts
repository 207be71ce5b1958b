import {
  addCost,
  addUsage,
  emptyUsage,
  type AgentSession,
  type Compaction,
  type CostTotals,
  type Message,
  type Usage,
} from '@claw/core';

export interface MemorySessionOptions {
  id?: string;
  workDir: string;
  /** History to start from (copied). */
  history?: readonly Message[];
  usage?: Usage;
  cost?: CostTotals;
}

/**
 * A session that lives only in memory and never touches disk: for tests, library users and
 * subagents run on their own.
 */
export class MemorySession implements AgentSession {
  readonly id: string;
  readonly workDir: string;
  readonly changesApplyAtOnce: boolean = true;
  private readonly messages: Message[];
  private totals: Usage;
  private spent: CostTotals;
  private compacted: Compaction | undefined;

  constructor(options: MemorySessionOptions) {
    this.id = options.id ?? 'default';
    this.workDir = options.workDir;
    this.messages = [...(options.history ?? [])];
    this.totals = { ...(options.usage ?? emptyUsage) };
    this.spent = { ...(options.cost ?? { usd: 0, unpricedCalls: 0 }) };
  }

  history(): readonly Message[] {
    return this.messages;
  }

  async append(...messages: Message[]): Promise<void> {
    this.messages.push(...messages);
  }

  async recordUsage(usage: Usage, costUsd?: number): Promise<void> {
    this.totals = addUsage(this.totals, usage);
    this.spent = addCost(this.spent, costUsd);
  }

  usage(): Usage {
    return { ...this.totals };
  }

  compaction(): Compaction | undefined {
    return this.compacted;
  }

  async compact(compaction: Compaction): Promise<void> {
    this.compacted = compaction;
  }

  cost(): CostTotals {
    return { ...this.spent };
  }
}
