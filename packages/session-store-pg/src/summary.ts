import type { Message } from '@claw/core';
import {
  summaryOf,
  type LogRecord,
  type SessionSnapshot,
  type SessionSummary,
} from '@claw/session-store';

/**
 * The summary `list` shows of a stored session: its snapshot with the records after it applied,
 * as a load applies them (`summaryOf`).
 *
 * @throws Error when a record does not fit the session (a corrupt log).
 */
export function summarize(
  snapshot: SessionSnapshot,
  records: readonly LogRecord[],
): SessionSummary {
  return summaryOf({ snapshot, records: [...records] });
}

/**
 * `summary` with `records` applied (kept in the session's row, so that `list` reads no log), the
 * way a load applies them: messages appended, inserted by repair or cleared, usage and cost
 * added, the last event seq, the title (its first prompt's, kept until a clear). `undefined` when
 * a record does not fit the summary: `list` then reads the session whole (and leaves it out when
 * it is corrupt).
 */
export function advanceSummary(
  summary: SessionSummary,
  records: readonly LogRecord[],
): SessionSummary | undefined {
  // The summary as a snapshot: only the number of messages counts, so their places stay empty.
  const snapshot: SessionSnapshot = {
    id: summary.id,
    workDir: summary.workDir,
    createdAt: summary.createdAt,
    updatedAt: summary.updatedAt,
    seq: 0,
    eventSeq: summary.lastEventSeq,
    history: new Array<Message>(summary.messageCount),
    usage: summary.usage,
    cost: summary.cost,
    journal: { active: false, calls: [] },
  };
  let advanced: SessionSummary;
  try {
    advanced = summarize(snapshot, records);
  } catch {
    return undefined;
  }
  // The summary's messages are only places: its first prompt is known by the title it gave.
  const cleared = records.some((record) => record.change.type === 'clear');
  const { title: newTitle, ...rest } = advanced;
  const title = cleared ? newTitle : summary.title ?? newTitle;
  return { ...rest, ...(title === undefined ? {} : { title }) };
}
