import { addCost, addUsage } from '@claw/core';
import type { LogRecord, SessionSnapshot, SessionSummary } from '@claw/session-store';

/**
 * The summary `list` shows of a stored session: its snapshot with the records after it applied
 * (messages appended, inserted by repair or cleared; usage and cost added; the last event seq).
 */
export function summarize(
  snapshot: SessionSnapshot,
  records: readonly LogRecord[],
): SessionSummary {
  let messageCount = snapshot.history.length;
  let usage = { ...snapshot.usage };
  let cost = { ...snapshot.cost };
  let lastEventSeq = snapshot.eventSeq;
  let updatedAt = snapshot.updatedAt;
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
  return {
    id: snapshot.id,
    workDir: snapshot.workDir,
    createdAt: snapshot.createdAt,
    updatedAt,
    messageCount,
    usage,
    cost,
    lastEventSeq,
  };
}
