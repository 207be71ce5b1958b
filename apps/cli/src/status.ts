import { describeCost } from '@claw/channel/protocol';
import type { Runtime, Settings } from '@claw/runtime';
import { instructionsLines } from './instructions.js';
import type { Style } from './style.js';
import { visible } from './terminal-text.js';

export interface StatusContext {
  workDir: string;
  settings: Settings;
  options: { sessionId: string };
  /** How bash runs (the isolation probe's finding). */
  spawner: { description: string };
}

/**
 * The REPL's `/status`: the session, model and approval mode, how bash runs, the project
 * instructions the model is given (REAL-2), and what the session has used so far.
 */
export function statusLines(context: StatusContext, runtime: Runtime, style: Style): string[] {
  const { settings } = context;
  const usage = runtime.session.usage();
  const cost = runtime.session.cost();
  const cached = usage.cachedPromptTokens ?? 0;
  const tokens = `${usage.totalTokens.toLocaleString('en-US')} tokens` +
    (cached > 0 ? ` (${cached.toLocaleString('en-US')} cached)` : '');
  const instructions = instructionsLines(runtime.instructions, style);
  return [
    `session ${visible(context.options.sessionId)} · workspace ${visible(context.workDir)}`,
    `model ${visible(settings.model)} · approval ${settings.approval} · max turns ${settings.maxTurns}`,
    visible(context.spawner.description),
    ...(instructions.length > 0
      ? instructions
      : [style.dim('instructions: none (no AGENTS.md in the workspace, its repository or your claw folder)')]),
    ...(settings.systemPromptFile === undefined
      ? []
      : [`system prompt: ${visible(settings.systemPromptFile)} (replaces claw's own)`]),
    `this session: ${runtime.session.history().length} messages · ${tokens} · cost ` +
    describeCost(cost.usd, cost.unpricedCalls),
  ];
}
