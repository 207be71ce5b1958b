import type { AgentSession } from '@claw/core';

/** A session that may be able to clear its history and to wait for its writes (SES-4, SES-5). */
type MaybePersistent = AgentSession & {
  clear?: () => Promise<void>;
  flush?: () => Promise<void>;
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
