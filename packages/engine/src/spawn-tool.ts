import { ClawError, defineTool, type Tool } from '@claw/core';
import { ToolRegistry, joinToolSources, type ToolSource } from './registry.js';
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

/**
 * The run's tools plus `spawn`, as a live view (the engine's registry is left as it is, and tools
 * that change during the run are seen by its next model call).
 *
 * @throws ClawError `duplicate_tool` when the run's tools already hold a tool of that name.
 */
export function withTool(tools: ToolSource, spawn: Tool): ToolSource {
  const name = spawn.definition.name;
  if (tools.get(name) !== undefined) {
    throw new ClawError(`a tool named "${name}" is already registered; tool names must be unique`, {
      code: 'duplicate_tool',
    });
  }
  return joinToolSources(tools, new ToolRegistry([spawn]));
}
