import {
  checkWorkspaceTrust,
  describeWorkspaceSettings,
  resolveWorkDir,
  revokeWorkspaceTrust,
  trustRecordFile,
  trustWorkspace,
  trustedWorkspaces,
  untrustedNotice,
  type Settings,
  type WorkspaceTrust,
} from '@claw/runtime';
import type { Command } from './args.js';
import type { CliIo } from './cli.js';
import { exitStatus } from './exit-status.js';
import { reportFailure } from './failure.js';
import type { LineInput } from './line-input.js';
import { Output } from './output.js';
import { colourWanted, createStyle, type Style } from './style.js';
import { visible } from './terminal-text.js';

// Trust of a workspace's own settings (TRUST-3): `claw trust`, the REPL's question, and the line
// a run says when it left settings out.

/** How to trust the workspace, as a command the user can paste. */
export function trustCommand(workdir: string | undefined): string {
  return workdir === undefined ? 'claw trust' : `claw trust --workdir ${shellWord(workdir)}`;
}

/** `text` as one shell word: as it is when that is safe, else single-quoted. */
export function shellWord(text: string): string {
  return /^[\w./~:@%+=-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

/**
 * The line a run says when it did not use some of the workspace's settings because the workspace
 * is not trusted (TRUST-2), ending with how to trust it; undefined when it left nothing out.
 */
export function trustNotice(settings: Settings, workdir: string | undefined): string | undefined {
  if (settings.workspaceTrust === undefined) return undefined;
  return untrustedNotice(
    settings.workspaceTrust,
    settings.ignoredSettings ?? [],
    `run \`${trustCommand(workdir)}\` to use them (or pass --trust-workspace for this run)`,
  );
}

/**
 * The REPL's question at start (TRUST-3): what the workspace's settings files would do, then
 * "trust it?". A yes records the trust (the files as they are now); anything else goes on without
 * them, and the question comes again at the next start.
 */
export async function askTrust(
  settings: Settings,
  input: LineInput,
  notice: string,
  streams: { stdout: Output; outStyle: Style; io: Pick<CliIo, 'env'> },
): Promise<'trusted' | 'untrusted' | 'interrupt'> {
  const { stdout, outStyle: style } = streams;
  const trust = settings.workspaceTrust;
  if (trust === undefined) return 'untrusted';
  const first = trust.reason === 'changed'
    ? `The settings of ${trust.root} changed since you trusted it ` +
    `(${trust.changed.map((name) => `.claw/${name}`).join(', ')}). As they are now, they would:`
    : `${trust.root} has settings of its own that claw uses only if you trust them. They would:`;
  await stdout.line(style.yellow(first));
  await stdout.write(summaryText(await describeWorkspaceSettings(trust), style));
  await stdout.line(
    'Trust them only if you trust whoever wrote them: they can send your API key elsewhere, ' +
    'run programs and let tools run without asking.',
  );
  const terminal = input.terminal;
  if (!terminal) await stdout.line('Trust this workspace? [y/N]');
  const answer = await input.nextEntry('Trust this workspace? [y/N] ');
  if (answer === 'interrupt') return 'interrupt';
  const yes = answer !== 'end' && /^\s*(y|yes)\s*$/i.test(answer.text) && !answer.pasted;
  if (!yes) {
    await stdout.line(style.dim(`Going on without them. ${capitalized(notice)}`));
    return 'untrusted';
  }
  const trusted = await trustWorkspace(trust.root, { env: streams.io.env });
  await stdout.line(style.dim(
    `Trusted ${trusted.root} with its ${trusted.files.map((file) => `.claw/${file.name}`).join(', ')} ` +
    'as they are now (a change asks again); `claw trust --revoke` takes it back.',
  ));
  return 'trusted';
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The summary of the settings files, indented under each file's name. */
function summaryText(
  summaries: Awaited<ReturnType<typeof describeWorkspaceSettings>>,
  style: Style,
): string {
  const lines: string[] = [];
  for (const summary of summaries) {
    lines.push(`  ${style.bold(`.claw/${summary.name}`)}`);
    for (const line of summary.lines) lines.push(`    ${visible(line)}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * `claw trust [--workdir <dir>] [--revoke | --list]` (TRUST-3): shows what the workspace's
 * settings files do and records them as trusted; `--revoke` takes the trust back; `--list` lists
 * the trusted workspaces. Exit status 0, or 2 for a bad command line, folder or record.
 */
export async function runTrust(
  command: Extract<Command, { kind: 'trust' }>,
  io: CliIo,
): Promise<number> {
  const stdout = new Output(io.stdout);
  const stderr = new Output(io.stderr);
  const style = createStyle(colourWanted(io.stdout, io.env));
  const { env } = io;
  try {
    if (command.action === 'list') {
      const workspaces = await trustedWorkspaces({ env });
      if (workspaces.length === 0) {
        await stdout.line(`No trusted workspaces (${trustRecordFile(env) ?? 'no record'}).`);
      }
      for (const each of workspaces) {
        await stdout.line(`${each.root} ${style.dim(`trusted ${each.trustedAt}`)}`);
      }
      return exitStatus.completed;
    }
    const workDir = await resolveWorkDir(command.workdir, io.cwd);
    if (command.action === 'revoke') {
      const trust = await checkWorkspaceTrust(workDir, { env });
      const removed = await revokeWorkspaceTrust(workDir, { env });
      await stdout.line(removed
        ? `${trust.root} is no longer trusted: claw uses its .claw settings only once you trust it again.`
        : `${trust.root} was not trusted; nothing changed.`);
      return exitStatus.completed;
    }
    const before = await checkWorkspaceTrust(workDir, { env });
    const trusted = await trustWorkspace(workDir, { env });
    const summaries = await describeWorkspaceSettings(trusted);
    await stdout.write(trustedText(before, trusted, summaries, style, env));
    return exitStatus.completed;
  } catch (error) {
    return reportFailure(error, stderr, createStyle(colourWanted(io.stderr, io.env)));
  }
}

function trustedText(
  before: WorkspaceTrust,
  trusted: WorkspaceTrust,
  summaries: Awaited<ReturnType<typeof describeWorkspaceSettings>>,
  style: Style,
  env: CliIo['env'],
): string {
  const record = trustRecordFile(env) ?? 'the record';
  if (trusted.files.length === 0) {
    return `Trusted ${trusted.root}. It has no .claw/config.json, mcp.json or a2a.json yet; ` +
      `one added later needs \`claw trust\` again. (Kept in ${record}.)\n`;
  }
  const again = before.reason === 'recorded' ? ' (already trusted with these files)' : '';
  return `Trusted ${trusted.root}${again}: claw now uses\n${summaryText(summaries, style)}` +
    `A change to any of these files needs \`claw trust\` again. (Kept in ${record}.)\n`;
}
