import type { ApprovalPrompt } from '@claw/approval';
import type { Reporter, ServerEvent } from '@claw/core';
import type { RunResult } from '@claw/engine';
import type { Output } from './output.js';

/**
 * Writes CH-2 events as JSON lines (`--output stream-json`, CLI-5): one event per line, nothing
 * else on that output.
 */
export class EventWriter {
  private readonly output: Output;

  constructor(output: Output) {
    this.output = output;
  }

  emit(event: ServerEvent): Promise<void> {
    return this.output.write(`${JSON.stringify(event)}\n`);
  }
}

/** A reporter that sends the run's events as CH-2 events. */
export function createJsonReporter(events: EventWriter): Reporter {
  return {
    onThinking: ({ turn }) => events.emit({ type: 'thinking', turn }),
    onTextDelta: (content) => events.emit({ type: 'text_delta', content }),
    onTextCompleted: (content) => events.emit({ type: 'text_completed', content }),
    onToolCall: (call) =>
      events.emit({
        type: 'tool_call',
        tool_call_id: call.id,
        tool_name: call.name,
        arguments: call.arguments,
      }),
    onToolResult: (result) =>
      events.emit({
        type: 'tool_result',
        tool_call_id: result.toolCallId,
        tool_name: result.toolName,
        result: result.content,
        is_error: result.isError,
      }),
  };
}

/** The `approval_request` event for a question asked on the terminal. */
export function approvalRequestEvent(prompt: ApprovalPrompt): ServerEvent {
  return {
    type: 'approval_request',
    request_id: prompt.requestId,
    tool_name: prompt.toolName,
    risk: prompt.risk,
    reason: prompt.reason,
    arguments: prompt.arguments,
  };
}

/** The one event that ends a task: `task_completed`, `task_canceled` or `task_failed`. */
export function taskEndEvent(result: RunResult, cancelReason?: string): ServerEvent {
  switch (result.status) {
    case 'completed':
      return { type: 'task_completed', content: result.finalText };
    case 'canceled':
      return { type: 'task_canceled', ...(cancelReason === undefined ? {} : { reason: cancelReason }) };
    case 'failed':
    case 'max_turns':
      return {
        type: 'task_failed',
        error: result.error?.message ?? `the task ended with status ${result.status}`,
        code: result.error?.code ?? result.status,
      };
  }
}
