import { SerialQueue, defineTool, sleep, type Tool } from '@claw/core';
import { z } from 'zod';
import type { ScriptedToolSpec } from './case.js';
import { cpuWaitMs } from './cpu-wait.js';

/** One execution of a scripted tool, as the harness saw it. */
export interface ToolExecution {
  name: string;
  arguments: Record<string, unknown>;
  /** Milliseconds since the run's clock started. */
  startedAt: number;
  endedAt: number;
  /** The scripted delay. */
  plannedMs: number;
  /** How long the scripted wait really took (shorter when the call was aborted). */
  waitedMs: number;
  /** The process's CPU wait (`cpuWaitMs`) when the wait began and when it ended. */
  cpuWaitAt: { start: number; end: number };
  outcome: 'ok' | 'aborted';
}

export interface ScriptedToolsOptions {
  specs: readonly ScriptedToolSpec[];
  /** The run's clock in milliseconds. */
  now: () => number;
  /** Called when a tool starts executing (e.g. the cancel point). */
  onStart?: (name: string) => void;
  /** Seeded fault: the tools run one at a time. */
  serial?: boolean;
}

/**
 * The tools a case adds to the built-in ones: each waits its scripted delay (honouring the abort
 * signal) and answers its scripted result. Every execution is recorded, so the harness knows how
 * much of a tool wave's time was scripted.
 */
export function scriptedTools(options: ScriptedToolsOptions): {
  tools: Tool[];
  executions: ToolExecution[];
} {
  const executions: ToolExecution[] = [];
  const queue = new SerialQueue();
  const tools = options.specs.map((spec) =>
    defineTool({
      name: spec.name,
      description: spec.description ?? `Scripted tool ${spec.name}.`,
      risk: spec.risk ?? 'safe',
      schema: z.looseObject({}),
      execute: async (args, context) => {
        const run = async (): Promise<string> => {
          options.onStart?.(spec.name);
          const plannedMs =
            typeof spec.delayMs === 'function' ? spec.delayMs(args) : spec.delayMs ?? 0;
          const startedAt = options.now();
          const cpuWaitAtStart = cpuWaitMs();
          const record = (outcome: ToolExecution['outcome']): void => {
            const endedAt = options.now();
            const cpuWaitAt = { start: cpuWaitAtStart, end: cpuWaitMs() };
            executions.push({
              name: spec.name,
              arguments: args,
              startedAt,
              endedAt,
              plannedMs,
              waitedMs: endedAt - startedAt,
              cpuWaitAt,
              outcome,
            });
          };
          try {
            if (plannedMs > 0) await sleep(plannedMs, context.signal);
          } catch (error) {
            record('aborted');
            throw error;
          }
          record('ok');
          return typeof spec.result === 'function' ? spec.result(args) : spec.result ?? 'ok';
        };
        return options.serial === true ? queue.run(run) : run();
      },
    }),
  );
  return { tools, executions };
}
