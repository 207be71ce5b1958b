import { defineTool, type Tool } from '@claw/core';
import { ToolRegistry } from './registry.js';
import type { RunBudget } from './run-budget.js';
import type { RunResult } from './run-types.js';
import { ReporterError } from './safe-reporter.js';
import {
  spawnSubagentArguments,
  spawnSubagentDescription,
  spawnSubagentToolName,
} from './subagent.js';

export interface SpawnToolOptions {
  /** The budget of the run the tool belongs to, which its subagents share (BUD-3). */
  budget: RunBudget;
  /** Runs a child loop on `task`; aborting `signal` (the spawn call's) cancels it. */
  runChild: (task: string, signal: AbortSignal) => Promise<RunResult>;
}

/**
 * `spawn_subagent` (TOOL-5, ENG-9) bound to one run: each call counts against the run's
 * subagent budget and runs a child loop. The child's final answer is the result; a child that
 * did not finish is an error result. A canceled child, or one stopped because the run's reporter
 * failed, rethrows, so the parent stops too (ENG-5, ENG-7).
 */
export function createSpawnTool(options: SpawnToolOptions): Tool {
  return defineTool({
    name: spawnSubagentToolName,
    description: spawnSubagentDescription,
    risk: 'safe',
    schema: spawnSubagentArguments,
    execute: async (args, context) => {
      options.budget.takeSpawn();
      const child = await options.runChild(args.task, context.signal);
      if (child.status === 'canceled') throw context.signal.reason;
      if (child.error instanceof ReporterError) throw child.error;
      if (child.status === 'completed') return child.finalText;
      return {
        content:
          `the subagent did not finish (${child.status}): ${child.error?.message ?? 'no reason'}` +
          (child.finalText === '' ? '' : `\nIts last answer: ${child.finalText}`),
        isError: true,
      };
    },
  });
}

/** The engine's tools plus `spawn`, in a registry of their own (the engine's is left as it is). */
export function withTool(tools: ToolRegistry, spawn: Tool): ToolRegistry {
  const registry = new ToolRegistry(tools.all());
  registry.register(spawn);
  return registry;
}
