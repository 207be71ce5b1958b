import {
  addCost,
  addUsage,
  emptyUsage,
  type AgentSession,
  type CostTotals,
  type Message,
  type Usage,
} from '@claw/core';
import { z } from 'zod';

export const spawnSubagentToolName = 'spawn_subagent';
/** Most model calls of a subagent run (ENG-9). */
export const subagentMaxTurns = 10;

export const spawnSubagentArguments = z.object({
  task: z
    .string()
    .min(1)
    .describe('What the subagent should do, self-contained: it does not see this conversation.'),
});

export const spawnSubagentDescription =
  'Start a subagent: a separate run with the same tools (it cannot spawn further subagents) and ' +
  `at most ${subagentMaxTurns} model calls, working on \`task\` alone. Returns its final answer. ` +
  'Use it for a self-contained piece of work whose details need not stay in this conversation.';

/**
 * The session of a subagent started by a running parent: its own conversation (it starts empty),
 * but the parent session's id and workspace (so approvals granted for the session apply), and its
 * tokens and cost recorded into the parent session too (ENG-9).
 */
export class SubagentSession implements AgentSession {
  private readonly messages: Message[] = [];
  private totals: Usage = { ...emptyUsage };
  private spent: CostTotals = { usd: 0, unpricedCalls: 0 };

  constructor(private readonly parent: AgentSession) {}

  get id(): string {
    return this.parent.id;
  }

  get workDir(): string {
    return this.parent.workDir;
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
    await this.parent.recordUsage(usage, costUsd);
  }

  usage(): Usage {
    return { ...this.totals };
  }

  cost(): CostTotals {
    return { ...this.spent };
  }
}
