import { randomUUID } from 'node:crypto';
import type { Message, Part } from '@a2a-js/sdk';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import { errorMessage } from '@claw/core';
import { messageText, textPart } from './parts.js';
import { claimInboundSlot } from './task-limit.js';

/** An inbound task as claw runs it. */
export interface InboundTask {
  taskId: string;
  contextId: string;
  /** The text of the remote's message (never empty: empty messages are refused before). */
  text: string;
}

/** How an inbound run ended, with the report the remote gets. */
export interface InboundOutcome {
  status: 'completed' | 'failed' | 'canceled';
  report: string;
}

/** A claw run started for an inbound task. */
export interface InboundRun {
  /** The claw session it runs in (visible in the console and over the channel protocol). */
  sessionId: string;
  done: Promise<InboundOutcome>;
  cancel(reason: Error): void;
}

/** What claw does with an inbound task; the server implements it on its sessions. */
export interface InboundRunner {
  /** @throws when the run cannot start (the task then fails with the error's message). */
  start(task: InboundTask, hooks: { onProgress: (text: string) => void }): Promise<InboundRun>;
}

const state = {
  submitted: 1,
  working: 2,
  completed: 3,
  failed: 4,
  canceled: 5,
} as const;

/**
 * The SDK's `AgentExecutor` over claw runs (A2A-2): each inbound task is a claw run (in its own
 * session, with its own budgets), published as v1.0 events: the task (submitted), working, a
 * working update per step (tool calls), the report as an artifact, then completed / failed /
 * canceled with the report as the status message. `CancelTask` cancels the claw task (its
 * history stays paired) and the task ends canceled.
 */
export class ClawAgentExecutor implements AgentExecutor {
  private readonly runner: InboundRunner;
  private readonly running = new Map<string, InboundRun>();

  constructor(runner: InboundRunner) {
    this.runner = runner;
  }

  execute = async (context: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    // The request's place under the limit on inbound tasks is given back when the run ends.
    const slot = claimInboundSlot(context.context);
    try {
      await this.run(context, bus);
    } finally {
      slot?.release();
    }
  };

  private async run(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId } = context;
    const status = (value: number, text?: string, metadata?: Record<string, unknown>): void => {
      bus.publish({
        kind: 'statusUpdate',
        data: {
          taskId,
          contextId,
          status: {
            state: value,
            message: text === undefined
              ? undefined
              : agentMessage(taskId, contextId, [textPart(text)]),
            timestamp: new Date().toISOString(),
          },
          metadata,
        },
      });
    };
    if (context.task === undefined) {
      bus.publish({
        kind: 'task',
        data: {
          id: taskId,
          contextId,
          status: {
            state: state.submitted,
            message: undefined,
            timestamp: new Date().toISOString(),
          },
          artifacts: [],
          history: [context.userMessage],
          metadata: {},
        },
      });
    } else {
      bus.publish({ kind: 'task', data: context.task });
    }
    let run: InboundRun;
    try {
      run = await this.runner.start(
        { taskId, contextId, text: messageText(context.userMessage).trim() },
        { onProgress: (text) => status(state.working, text) },
      );
    } catch (error) {
      status(state.failed, `claw could not start the task: ${errorMessage(error)}`);
      bus.finished();
      return;
    }
    this.running.set(taskId, run);
    status(state.working, undefined, { claw_session_id: run.sessionId });
    let outcome: InboundOutcome;
    try {
      outcome = await run.done;
    } catch (error) {
      outcome = { status: 'failed', report: `the claw task failed: ${errorMessage(error)}` };
    } finally {
      this.running.delete(taskId);
    }
    if (outcome.status === 'completed') {
      bus.publish({
        kind: 'artifactUpdate',
        data: {
          taskId,
          contextId,
          artifact: {
            artifactId: 'report',
            name: 'report',
            description: 'The final report of the claw task',
            parts: [textPart(outcome.report)],
            metadata: undefined,
            extensions: [],
          },
          append: false,
          lastChunk: true,
          metadata: undefined,
        },
      });
      status(state.completed, outcome.report);
    } else {
      status(outcome.status === 'failed' ? state.failed : state.canceled, outcome.report);
    }
    bus.finished();
  }

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    await Promise.resolve();
    const run = this.running.get(taskId);
    if (run !== undefined) {
      // The run ends canceled and `execute` publishes it.
      run.cancel(new Error('canceled by the A2A client (CancelTask)'));
      return;
    }
    bus.publish({
      kind: 'statusUpdate',
      data: {
        taskId,
        contextId: '',
        status: { state: state.canceled, message: undefined, timestamp: new Date().toISOString() },
        metadata: undefined,
      },
    });
  };
}

function agentMessage(taskId: string, contextId: string, parts: Part[]): Message {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: 2,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}
