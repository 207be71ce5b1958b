import type { AgentSession, Usage } from '@claw/core';
import { MemorySession } from '@claw/session-store';
import { z } from 'zod';

/** The name of the tool that starts a subagent run (ENG-9). */
export const spawnSubagentToolName = 'spawn_subagent';
/** Most model calls of a subagent run (ENG-9). */
export const subagentMaxTurns = 10;

/** The arguments of `spawn_subagent` (the schema the model sees): the subagent's task. */
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
export class SubagentSession extends MemorySession {
  override readonly changesApplyAtOnce: boolean;

  constructor(private readonly parent: AgentSession) {
    super({ id: parent.id, workDir: parent.workDir });
    this.changesApplyAtOnce = parent.changesApplyAtOnce === true;
  }

  /** Both at once: each applies before it returns when the parent's changes do. */
  override async recordUsage(usage: Usage, costUsd?: number): Promise<void> {
    await Promise.all([super.recordUsage(usage, costUsd), this.parent.recordUsage(usage, costUsd)]);
  }
}
