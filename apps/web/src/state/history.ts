// Rebuilds a transcript from a `history` event: the messages of the session as of a seq.
import type { ServerEventOf, WireMessage } from '@claw/channel/protocol';
import type { ApprovalItem, CompactionItem, TranscriptItem } from './types.js';

type HistoryCompaction = ServerEventOf<'history'>['compaction'];

/**
 * The transcript of a `history`: its messages, with the divider of its compaction before message
 * `up_to` (at the end when `up_to` is past the last).
 */
export function itemsFromHistory(
  messages: readonly WireMessage[],
  seq: number,
  compaction?: HistoryCompaction,
): TranscriptItem[] {
  const items: TranscriptItem[] = [];
  const divider = (): CompactionItem => ({
    kind: 'compaction',
    key: `h${seq}-compaction`,
    ...(compaction?.summary === undefined ? {} : { summary: compaction.summary }),
  });
  messages.forEach((message, index) => {
    const key = `h${seq}-${index}`;
    if (compaction !== undefined && index === compaction.up_to) items.push(divider());
    switch (message.role) {
      case 'system':
        return;
      case 'user':
        items.push({ kind: 'user', key, text: message.content, status: 'sent' });
        return;
      case 'assistant':
        // What the model reasoned before this reply comes first, folded as when it streamed.
        if (message.reasoning !== undefined && message.reasoning !== '') {
          items.push({ kind: 'thinking', key: `${key}-thinking`, text: message.reasoning, streaming: false });
        }
        if (message.content !== '') {
          items.push({ kind: 'assistant', key, text: message.content, streaming: false });
        }
        (message.tool_calls ?? []).forEach((call, callIndex) => {
          items.push({
            kind: 'tool',
            key: `${key}-${callIndex}`,
            toolCallId: call.id,
            name: call.name,
            arguments: call.arguments,
          });
        });
        return;
      case 'tool': {
        const result = { text: message.content, isError: message.is_error === true };
        const index = findOpenToolCall(items, message.tool_call_id);
        const call = index === -1 ? undefined : items[index];
        if (call?.kind === 'tool') {
          items[index] = { ...call, result };
        } else {
          items.push({
            kind: 'tool',
            key,
            toolCallId: message.tool_call_id,
            name: 'tool',
            arguments: '',
            result,
          });
        }
        return;
      }
    }
  });
  if (compaction !== undefined && compaction.up_to >= messages.length) items.push(divider());
  return items;
}

/** The divider of a live `context_compacted`. */
export function compactionItem(
  event: ServerEventOf<'context_compacted'>,
  key: string,
): CompactionItem {
  return {
    kind: 'compaction',
    key,
    figures: {
      reason: event.reason,
      tokensBefore: event.tokens_before,
      tokensAfter: event.tokens_after,
      prunedResults: event.pruned_results,
      summarisedMessages: event.summarised_messages,
    },
    ...(event.summary === undefined ? {} : { summary: event.summary }),
    ...(event.error === undefined ? {} : { error: event.error }),
  };
}

/**
 * The index of the latest call with this id that has no result yet (else the latest with this
 * id, else -1). Ids may repeat across tasks, so the search goes from the end.
 */
export function findOpenToolCall(items: readonly TranscriptItem[], toolCallId: string): number {
  let fallback = -1;
  for (let index = items.length - 1; index >= 0; index -= 1) {
    const item = items[index];
    if (item?.kind !== 'tool' || item.toolCallId !== toolCallId) continue;
    if (item.result === undefined) return index;
    if (fallback === -1) fallback = index;
  }
  return fallback;
}

export function approvalItem(event: ServerEventOf<'approval_request'>): ApprovalItem {
  return {
    kind: 'approval',
    key: `a-${event.request_id}`,
    requestId: event.request_id,
    seq: event.seq,
    toolName: event.tool_name,
    risk: event.risk,
    reason: event.reason,
    arguments: event.arguments,
  };
}
