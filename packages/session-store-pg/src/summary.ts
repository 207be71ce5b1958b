import { addCost, addUsage } from '@claw/core';
import {
  summaryOf,
  type LogRecord,
  type SessionSnapshot,
  type SessionSummary,
} from '@claw/session-store';

/**
 * The summary `list` shows of a stored session: its snapshot with the records after it applied
 * (messages appended, inserted by repair or cleared; usage and cost added; the last event seq).
 */
export function summarize(
  snapshot: SessionSnapshot,
  records: readonly LogRecord[],
): SessionSummary {
  return advanceSummary(summaryOf({ snapshot, records: [] }), records);
}

/** `summary` with `records` applied (kept in the session's row, so that `list` reads no log). */
export function advanceSummary(
  summary: SessionSummary,
  records: readonly LogRecord[],
): SessionSummary {
  let { messageCount, usage, cost, lastEventSeq, updatedAt } = summary;
  for (const record of records) {
    const { change } = record;
    switch (change.type) {
      case 'append':
        messageCount += change.messages.length;
        break;
      case 'repair':
        messageCount += change.inserts.length;
        break;
      case 'clear':
        messageCount = 0;
        break;
      case 'usage':
        usage = addUsage(usage, change.usage);
        cost = addCost(cost, change.costUsd);
        break;
      case 'event':
        lastEventSeq = change.event.seq;
        break;
      case 'tool_started':
      case 'tool_finished':
        break;
    }
    updatedAt = record.at;
  }
  return { ...summary, updatedAt, messageCount, usage, cost, lastEventSeq };
}
