import type { BudgetsLeft, Reporter, ToolProgressReport, UsageReport, WireUsage } from '@claw/core';
import type { SessionEventLog } from './event-log.js';

function wireUsage(usage: UsageReport['call']): WireUsage {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.totalTokens,
    ...(usage.cachedPromptTokens === undefined ? {} : { cached_tokens: usage.cachedPromptTokens }),
  };
}

function budgetsLeft(left: UsageReport['budgetsLeft']): BudgetsLeft {
  const result: BudgetsLeft = {};
  if (left.sessionTokens !== undefined) result.session_tokens = left.sessionTokens;
  if (left.runTokens !== undefined) result.run_tokens = left.runTokens;
  if (left.sessionCostUsd !== undefined) result.session_cost_usd = left.sessionCostUsd;
  if (left.runCostUsd !== undefined) result.run_cost_usd = left.runCostUsd;
  if (left.toolTimeMs !== undefined) result.tool_time_ms = left.toolTimeMs;
  if (left.subagents !== undefined) result.subagents = left.subagents;
  return result;
}

/** The task's reporter, and what it knows of tool calls still waiting for their result. */
export interface TaskReporter {
  reporter: Reporter;
  /** Gives every reported call without a result one (canceled), so the events stay paired. */
  closeOpenCalls(reason: string): void;
}

/**
 * The reporter of a task run by the runtime: each callback appends its CH-2 event to the
 * session's event log (which never waits for a consumer, RT-3) and then calls the library
 * user's own reporter, if one was given, returning what it returns: the engine awaits that, and
 * its failure stops the run as always (ENG-7). Without one, a callback returns nothing to wait
 * for. Tool calls that end without a reported result (canceled, or their run stopped)
 * get a `tool_result` event from their Observation, so the event stream stays paired like the
 * history.
 */
export function createTaskReporter(
  log: SessionEventLog,
  taskId: string,
  user: Reporter | undefined,
  onProgress?: (report: ToolProgressReport) => void,
): TaskReporter {
  const open = new Map<string, string>();
  const result = (toolCallId: string, content: string, isError: boolean): void => {
    const toolName = open.get(toolCallId);
    if (toolName === undefined) return;
    open.delete(toolCallId);
    log.append({
      type: 'tool_result',
      task_id: taskId,
      tool_call_id: toolCallId,
      tool_name: toolName,
      result: content,
      is_error: isError,
    });
  };
  const reporter: Reporter = {
    onThinking: (info) => {
      log.append({
        type: 'thinking',
        task_id: taskId,
        turn: info.turn,
        ...(info.purpose === undefined ? {} : { purpose: info.purpose }),
      });
      return user?.onThinking?.(info);
    },
    onTextDelta: (delta) => {
      log.append({ type: 'text_delta', task_id: taskId, content: delta });
      return user?.onTextDelta?.(delta);
    },
    onThinkingDelta: (delta) => {
      log.append({ type: 'thinking_delta', task_id: taskId, content: delta });
      return user?.onThinkingDelta?.(delta);
    },
    onTextCompleted: (text) => {
      log.append({ type: 'text_completed', task_id: taskId, content: text });
      return user?.onTextCompleted?.(text);
    },
    onToolCall: (call) => {
      open.set(call.id, call.name);
      log.append({
        type: 'tool_call',
        task_id: taskId,
        tool_call_id: call.id,
        tool_name: call.name,
        arguments: call.arguments,
      });
      return user?.onToolCall?.(call);
    },
    onToolResult: (report) => {
      result(report.toolCallId, report.content, report.isError);
      return user?.onToolResult?.(report);
    },
    // Not a session event either: the start of a call is told to the library user's reporter.
    onToolStarted: (call) => user?.onToolStarted?.(call),
    // Progress is not a session event (it is not kept): those who listen to the session's
    // progress (`onProgress`) and the library user's reporter hear it.
    onToolProgress: (report) => {
      onProgress?.(report);
      return user?.onToolProgress?.(report);
    },
    // A retry is: the task's record says the model failed and was asked again.
    onModelRetry: (report) => {
      log.append({
        type: 'model_retry',
        task_id: taskId,
        attempt: report.attempt,
        attempts: report.attempts,
        delay_ms: report.delayMs,
        error: report.reason,
      });
      return user?.onModelRetry?.(report);
    },
    onMessage: (message) => {
      if (message.role === 'tool') result(message.toolCallId, message.content, message.isError === true);
      return user?.onMessage?.(message);
    },
    onCompacted: (compaction) => {
      log.append({
        type: 'context_compacted',
        task_id: taskId,
        reason: compaction.reason,
        tokens_before: compaction.tokensBefore,
        tokens_after: compaction.tokensAfter,
        pruned_results: compaction.prunedResults,
        summarised_messages: compaction.summarisedMessages,
        ...(compaction.summary === undefined || compaction.summarisedMessages === 0
          ? {}
          : { summary: compaction.summary }),
        ...(compaction.summaryError === undefined ? {} : { error: compaction.summaryError }),
      });
      return user?.onCompacted?.(compaction);
    },
    onUsage: (report) => {
      log.append({
        type: 'usage',
        task_id: taskId,
        call: wireUsage(report.call),
        run: wireUsage(report.run),
        session: wireUsage(report.session),
        cost: {
          call_usd: report.callCostUsd ?? null,
          run_usd: report.runCost.usd,
          session_usd: report.sessionCost.usd,
          unpriced_calls: report.sessionCost.unpricedCalls,
        },
        budgets_left: budgetsLeft(report.budgetsLeft),
      });
      return user?.onUsage?.(report);
    },
  };
  return {
    reporter,
    closeOpenCalls: (reason) => {
      for (const id of [...open.keys()]) result(id, reason, true);
    },
  };
}
