import type { SessionUpdate, ToolCallContent } from '@agentclientprotocol/sdk';
import type { Compaction, Message, Reporter, ToolCall } from '@claw/core';
import { diffOf, filePathOf, resultContent, toolCallUpdate } from './tool-views.js';

// What an editor is told of a task (ACP-2), from claw's reporter callbacks, and of a stored
// session when it loads it (its history, as updates).

export interface AcpReporterOptions {
  /** Sends one `session/update`; rejects when the connection is gone (the run stops). */
  send: (update: SessionUpdate) => Promise<void>;
  workDir: string;
  /** The text of a file before a write, for its diff (`null`: none yet; `undefined`: unknown). */
  before: (file: string) => Promise<string | null | undefined>;
  /** The model's context window, for `usage_update`'s size. */
  contextWindowTokens: number;
}

/**
 * A reporter that tells the editor what the task does: answer and thinking chunks, each tool
 * call as `tool_call` (pending, with its diff) then `tool_call_update`s (in progress once it runs
 * or is allowed, then completed or failed with its output), usage and compactions. Awaited like
 * the terminal's: an editor that cannot be written to stops the run.
 */
export function createAcpReporter(options: AcpReporterOptions): Reporter & {
  /** A call was allowed by the editor's answer: it is running now. */
  started(toolCallId: string): Promise<void>;
} {
  const { send, workDir } = options;
  const calls = new Map<string, { call: ToolCall; diff: ToolCallContent[]; running: boolean }>();
  let compactions = 0;
  const running = async (toolCallId: string): Promise<void> => {
    const known = calls.get(toolCallId);
    if (known === undefined || known.running) return;
    known.running = true;
    await send({ sessionUpdate: 'tool_call_update', toolCallId, status: 'in_progress' });
  };
  return {
    onTextDelta: (delta) => send({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: delta } }),
    onThinkingDelta: (delta) =>
      send({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: delta } }),
    onThinking: async (info) => {
      if (info.purpose !== 'summary') return;
      compactions += 1;
      await send({ sessionUpdate: 'compaction_update', compactionId: `compaction-${compactions}`, status: 'in_progress' });
    },
    onToolCall: async (call) => {
      const file = call.name === 'write_file' ? filePathOf(call, workDir) : undefined;
      const before = file === undefined ? undefined : await options.before(file);
      const update = toolCallUpdate(call, workDir, before);
      calls.set(call.id, { call, diff: update.content ?? [], running: false });
      await send({ sessionUpdate: 'tool_call', ...update });
    },
    onToolStarted: (call) => running(call.id),
    onToolProgress: (report) => running(report.toolCallId),
    onToolResult: async (result) => {
      const known = calls.get(result.toolCallId);
      calls.delete(result.toolCallId);
      await send({
        sessionUpdate: 'tool_call_update',
        toolCallId: result.toolCallId,
        status: result.isError ? 'failed' : 'completed',
        // A write's or an edit's diff stays, with what the tool said.
        content: [...(result.isError ? [] : known?.diff ?? []), ...resultContent(result.content)],
        rawOutput: { result: result.content, isError: result.isError },
      });
    },
    onUsage: (report) =>
      send({
        sessionUpdate: 'usage_update',
        used: report.call.promptTokens + report.call.completionTokens,
        size: options.contextWindowTokens,
        ...(report.sessionCost.unpricedCalls > 0 && report.sessionCost.usd === 0
          ? {}
          : { cost: { amount: report.sessionCost.usd, currency: 'USD' } }),
      }),
    onCompacted: async (compaction) => {
      if (compaction.summarisedMessages === 0) compactions += 1;
      await send(compactionUpdate(compaction, `compaction-${compactions}`));
    },
    started: running,
  };
}

/** A compaction that is done, as the editor is told of it. */
function compactionUpdate(compaction: Compaction, compactionId: string): SessionUpdate {
  return {
    sessionUpdate: 'compaction_update',
    compactionId,
    status: compaction.summaryError === undefined ? 'completed' : 'failed',
    ...(compaction.summary === undefined || compaction.summarisedMessages === 0
      ? {}
      : { summary: [{ type: 'text', text: compaction.summary }] }),
    ...(compaction.summaryError === undefined ? {} : { error: compaction.summaryError }),
  };
}

/**
 * A stored session's history as the updates that tell it (`session/load`): the user's and the
 * model's messages as chunks (its thinking too), each tool call with its result. A call that a
 * crash interrupted has the result repair gave it, an error: it shows as failed.
 */
export function historyUpdates(history: readonly Message[], workDir: string): SessionUpdate[] {
  const updates: SessionUpdate[] = [];
  const calls = new Map<string, ToolCall>();
  for (const message of history) {
    switch (message.role) {
      case 'system':
        break;
      case 'user':
        updates.push({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: message.content } });
        break;
      case 'assistant':
        if (message.reasoning !== undefined && message.reasoning !== '') {
          updates.push({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: message.reasoning } });
        }
        if (message.content !== '') {
          updates.push({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: message.content } });
        }
        for (const call of message.toolCalls ?? []) {
          calls.set(call.id, call);
          updates.push({ sessionUpdate: 'tool_call', ...toolCallUpdate(call, workDir) });
        }
        break;
      case 'tool': {
        const call = calls.get(message.toolCallId);
        const failed = message.isError === true;
        updates.push({
          sessionUpdate: 'tool_call_update',
          toolCallId: message.toolCallId,
          status: failed ? 'failed' : 'completed',
          content: [
            ...(failed || call === undefined ? [] : diffOf(call, workDir, undefined)),
            ...resultContent(message.content),
          ],
        });
        break;
      }
    }
  }
  return updates;
}
