import path from 'node:path';
import { resolveWorkDir, WorkspaceSessions, type RuntimeFactory } from '@claw/runtime';
import {
  describeRepair,
  sessionsFolder,
  type PersistentSession,
  type SessionListOptions,
  type SessionSummary,
  type UnreadableSession,
} from '@claw/session-store';
import type { Command } from './args.js';
import type { CliIo } from './cli.js';
import { exitStatus } from './exit-status.js';
import { reportFailure } from './failure.js';
import { Output } from './output.js';
import { colourWanted, createStyle } from './style.js';
import { visible } from './terminal-text.js';

/**
 * What the session repaired when it was opened (SES-7, SES-8): tool calls an interrupted earlier
 * run left without a result, and what the model is told about each. Empty when nothing was.
 */
export function repairNotice(session: PersistentSession): string[] {
  // A call whose stored result repair put back had one: it is not news to the user.
  const repaired = session.lastRepair().filter(({ state }) => state !== 'recovered');
  if (repaired.length === 0) return [];
  return [
    `the previous run of this session was interrupted; ${repaired.length} tool call(s) had no result:`,
    ...describeRepair(repaired).map((line) => `  ${visible(line)}`),
    'the model is told the same; nothing was run again',
  ];
}

/** `/sessions`: the workspace's sessions, most recent first, with their last activity. */
export async function sessionListing(
  factory: RuntimeFactory,
  workDir: string,
  current: string,
): Promise<string[]> {
  const { sessions, unreadable } = await listing((options) =>
    factory.listSessions(workDir, options),
  );
  return [...sessionLines(sessions, current), ...unreadableLines(unreadable)];
}

/** What `list` gives, with the sessions it could not read beside it. */
async function listing(
  list: (options: SessionListOptions) => Promise<SessionSummary[]>,
): Promise<{ sessions: SessionSummary[]; unreadable: UnreadableSession[] }> {
  const unreadable: UnreadableSession[] = [];
  const sessions = await list({ onUnreadable: (one) => unreadable.push(one) });
  return { sessions, unreadable };
}

/**
 * A line per session (`current` marked with `*`), or a line saying there is none. A session with
 * a prompt ends its line with its title (the first line of its first prompt).
 */
export function sessionLines(sessions: readonly SessionSummary[], current?: string): string[] {
  if (sessions.length === 0) return ['no saved sessions in this workspace yet'];
  return sessions.map((session) => {
    const marker = session.id === current ? '*' : ' ';
    const when = session.updatedAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
    const title = session.title === undefined ? '' : `: ${JSON.stringify(visible(session.title))}`;
    return `${marker} ${session.id.padEnd(20)} last active ${when}, ${session.messageCount} messages, ` +
      `${session.usage.totalTokens} tokens${title}`;
  });
}

/**
 * `claw sessions` (CLI-7): the workspace's saved sessions, most recent first, read from its
 * `.claw/sessions/` without opening any (a session another process has open is listed too).
 * Exit status 0, or 2 for a workspace that cannot be used.
 */
export async function runSessionList(
  command: Extract<Command, { kind: 'sessions' }>,
  io: CliIo,
): Promise<number> {
  const stdout = new Output(io.stdout);
  try {
    const workDir = await resolveWorkDir(command.workdir, io.cwd);
    const workspace = new WorkspaceSessions();
    const { sessions, unreadable } = await listing((options) => workspace.list(workDir, options));
    const where = path.join(workDir, sessionsFolder);
    const lines = sessions.length === 0
      ? [`no saved sessions in ${where} yet; a task (claw, claw -p) saves its session there`]
      : [
          `sessions in ${where}, most recent first (resume one with claw --session <id>):`,
          ...sessionLines(sessions),
        ];
    lines.push(...unreadableLines(unreadable));
    await stdout.write(`${lines.join('\n')}\n`);
    return exitStatus.completed;
  } catch (error) {
    const style = createStyle(colourWanted(io.stderr, io.env));
    return reportFailure(error, new Output(io.stderr), style);
  }
}

/**
 * A line for each session file the store could not read (it lists what it can read): a damaged
 * file is said, with what is wrong and what to do, not left out unseen.
 */
function unreadableLines(unreadable: readonly UnreadableSession[]): string[] {
  return unreadable.map((session) => `! ${session.id} cannot be read: ${visible(session.reason)}`);
}
