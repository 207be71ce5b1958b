import type { AgentSession } from '@claw/core';
import { describeRepair, type RepairedCall, type SessionManager } from '@claw/session-store';

/** A session that may be able to clear its history and to wait for its writes (SES-4, SES-5). */
type MaybePersistent = AgentSession & {
  clear?: () => Promise<void>;
  flush?: () => Promise<void>;
  lastRepair?: () => readonly RepairedCall[];
};

/** The session's `clear`, when it has one (`/clear`). */
export function clearOf(session: AgentSession): (() => Promise<void>) | undefined {
  const persistent = session as MaybePersistent;
  const clear = persistent.clear;
  return typeof clear === 'function' ? () => clear.call(persistent) : undefined;
}

/** Waits until the session's changes are on disk, for sessions that write to disk. */
export async function flushSession(session: AgentSession): Promise<void> {
  const persistent = session as MaybePersistent;
  const flush = persistent.flush;
  if (typeof flush === 'function') await flush.call(persistent);
}

/**
 * What the session repaired when it was opened (SES-7, SES-8): tool calls an interrupted earlier
 * run left without a result, and what the model is told about each. Empty when nothing was.
 */
export function repairNotice(session: AgentSession): string[] {
  const persistent = session as MaybePersistent;
  const repaired = typeof persistent.lastRepair === 'function' ? persistent.lastRepair() : [];
  if (repaired.length === 0) return [];
  return [
    `the previous run of this session was interrupted; ${repaired.length} tool call(s) had no result:`,
    ...describeRepair(repaired).map((line) => `  ${line}`),
    'the model is told the same; nothing was run again',
  ];
}

/** `/sessions`: the workspace's sessions, most recent first, with their last activity. */
export async function sessionListing(manager: SessionManager, current: string): Promise<string[]> {
  const sessions = await manager.list();
  if (sessions.length === 0) return ['no saved sessions in this workspace yet'];
  return sessions.map((session) => {
    const marker = session.id === current ? '*' : ' ';
    const when = session.updatedAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
    return `${marker} ${session.id.padEnd(20)} last active ${when}, ${session.messageCount} messages, ` +
      `${session.usage.totalTokens} tokens`;
  });
}
