import type { RuntimeFactory } from '@claw/runtime';
import { describeRepair, type PersistentSession } from '@claw/session-store';

/**
 * What the session repaired when it was opened (SES-7, SES-8): tool calls an interrupted earlier
 * run left without a result, and what the model is told about each. Empty when nothing was.
 */
export function repairNotice(session: PersistentSession): string[] {
  const repaired = session.lastRepair();
  if (repaired.length === 0) return [];
  return [
    `the previous run of this session was interrupted; ${repaired.length} tool call(s) had no result:`,
    ...describeRepair(repaired).map((line) => `  ${line}`),
    'the model is told the same; nothing was run again',
  ];
}

/** `/sessions`: the workspace's sessions, most recent first, with their last activity. */
export async function sessionListing(
  factory: RuntimeFactory,
  workDir: string,
  current: string,
): Promise<string[]> {
  const sessions = await factory.listSessions(workDir);
  if (sessions.length === 0) return ['no saved sessions in this workspace yet'];
  return sessions.map((session) => {
    const marker = session.id === current ? '*' : ' ';
    const when = session.updatedAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
    return `${marker} ${session.id.padEnd(20)} last active ${when}, ${session.messageCount} messages, ` +
      `${session.usage.totalTokens} tokens`;
  });
}
