import { askOnce, type ApprovalRequest, type Eventual } from '@claw/core';
import { realpath } from 'node:fs/promises';
import nodePath from 'node:path';
import {
  SandboxError,
  checkDestructiveCommand,
  checkWorkspaceEscape,
  clawStateReason,
  isClawState,
  isEnvFile,
  isInside,
  locateWithinWorkspace,
  protectedPathReason,
  workspaceSpellings,
  type WorkspaceLocation,
} from '@claw/sandbox';
import { argumentsOf } from './call-arguments.js';
import { describeCall } from './describe-call.js';
import { ApprovalError } from './errors.js';
import { FilePatterns } from './file-patterns.js';
import type { Policy, PolicyVerdict } from './policy.js';

/** Options of {@link DefaultPolicy}. */
export interface DefaultPolicyOptions {
  /**
   * True when `bash` runs OS-isolated (SBX-4) on this machine. When false (the default), asking
   * about bash requires a human (`requireHuman`) and the question says bash is not isolated.
   * May be a promise (the isolation probe still running): only a bash call waits for it, every
   * other tool is judged at once. May be a function that gives that promise: it is called once,
   * by the first bash call that needs to know (the probe starts only then).
   */
  bashIsolated?: Eventual<boolean>;
  /**
   * `.env` files the user lets the tools use (read, and with approval write): the policy denies
   * a `path` naming a `.env` or `.env.*` file at any depth (templates such as `.env.example`
   * aside, see `isEnvFile` of `@claw/sandbox`) unless one of these patterns covers it, spelled as
   * asked for and, through a symlink, where it really is. Patterns are workspace-relative, `/`
   * between folders: `*` stands for any characters within one file or folder name, `**` as a
   * whole segment for any number of folders; anything else is compared exactly. So `.env.local`
   * names only the root's, `config/.env.*` those in `config/`, and a pattern starting with `**`
   * and `/.env.test` every `.env.test`. They never lift the denial of claw's state. Default none.
   *
   * @throws ApprovalError `invalid_policy_options` (from the constructor) for a pattern that is
   *   not text, is absolute, or has an empty, `.` or `..` segment.
   */
  allowFiles?: readonly string[];
  /**
   * Absolute folders whose files the tools may neither read nor write, also when the workspace
   * holds them: the user's own claw folders (settings, the record of trusted workspaces, servers'
   * tokens), which lie in the workspace when it is the home folder. A folder that does not exist
   * yet counts too (a write would create it). Compared lexically and on the real location.
   * Default none.
   */
  privateFolders?: readonly string[];
}

/** Tools that write the file named by their `path` argument. */
const writingTools = new Set(['write_file', 'edit_file']);

/**
 * The policy claw uses unless told otherwise (APR-1), checked in this order:
 * 1. An argument named `path` (of any tool) that is not a usable path inside the workspace
 *    (`resolveWithinWorkspace`: empty, absolute outside the workspace, leaving it lexically or
 *    through a symlink) →
 *    deny with the sandbox's message. A `path` that is not text → deny.
 * 2. A `path` (of any tool: read or written, the secrets must not reach the model) naming claw's
 *    state: anything in a `.claw` folder at any depth but its settings files `config.json`,
 *    `mcp.json` and `a2a.json` (sessions, grants, the audit log, traces, the server's token),
 *    spelled so or reached through a symlink → deny (`isClawState` of `@claw/sandbox`).
 *    A `path` in one of `privateFolders` (the user's claw folders, spelled so or at their real
 *    paths, which a policy resolves once, at its first check of a path) → deny.
 * 3. A `path` naming a `.env` or `.env.*` file at any depth (not a template such as
 *    `.env.example`), lexically or through a symlink, that `allowFiles` does not cover → deny.
 * 4. `write_file` / `edit_file` of a path in a `.claw` folder (at any depth) or `.git/hooks/`, or
 *    of `.git/config` (lexically, case-insensitively, and on the real location) → deny.
 * 5. `bash` without a command, or with one the sandbox fences flag as destructive or reaching
 *    outside the workspace → deny, without asking.
 * 6. Risk `safe` → allow; `mutating` / `dangerous` → ask, with a reason saying what the call will
 *    do. Unless `bashIsolated`, a bash ask requires a human and says bash is not isolated.
 *
 * `evaluate` does not throw for bad arguments (they are denials); it passes on unexpected
 * file-system errors that are not `SandboxError`s.
 */
export class DefaultPolicy implements Policy {
  private readonly isBashIsolated: () => Promise<boolean>;
  private readonly allowedFiles: FilePatterns;
  private readonly privateFolders: readonly string[];
  /**
   * Each private folder as spelled and as its real path, resolved once per policy (a policy
   * serves one session): resolving them for every call cost several `realpath` system calls and,
   * for folders not made yet, a failure each — most of a file call's policy check (PERF-5).
   */
  private privateCovers: Promise<ReadonlyArray<ReadonlySet<string>>> | undefined;

  /**
   * @throws ApprovalError `invalid_policy_options` for an unusable `allowFiles` pattern or a
   *   `privateFolders` entry that is not an absolute path.
   */
  constructor(options: DefaultPolicyOptions = {}) {
    this.isBashIsolated = askOnce(options.bashIsolated ?? false);
    this.allowedFiles = new FilePatterns(options.allowFiles ?? []);
    this.privateFolders = (options.privateFolders ?? []).map((folder) => {
      if (typeof folder !== 'string' || !nodePath.isAbsolute(folder)) {
        throw new ApprovalError(
          `privateFolders must be absolute paths, got ${JSON.stringify(folder)}`,
          { code: 'invalid_policy_options' },
        );
      }
      return nodePath.resolve(folder);
    });
  }

  async evaluate(request: ApprovalRequest): Promise<PolicyVerdict> {
    const toolName = request.toolCall.name;
    const args = argumentsOf(request);
    if (Object.hasOwn(args, 'path')) {
      const denial = await this.checkPath(request.workDir, toolName, args.path);
      if (denial !== undefined) return denial;
    }
    if (toolName === 'bash') {
      const denial = checkCommand(args.command);
      if (denial !== undefined) return denial;
    }
    if (request.risk === 'safe') return { action: 'allow' };
    const reason = describeCall(toolName, args);
    if (toolName === 'bash' && !(await this.isBashIsolated())) {
      return {
        action: 'ask',
        reason:
          `${reason}\nbash is NOT isolated on this machine: the command runs with your own ` +
          'rights and can read, change or send anything you can; only a text check of the ' +
          'command stands in the way.',
        requireHuman: true,
      };
    }
    return { action: 'ask', reason };
  }

  private async checkPath(
    workDir: string,
    toolName: string,
    path: unknown,
  ): Promise<PolicyVerdict | undefined> {
    if (typeof path !== 'string') {
      return { action: 'deny', reason: `the "path" argument of ${toolName} must be text` };
    }
    let location: WorkspaceLocation;
    try {
      location = await locateWithinWorkspace(workDir, path);
    } catch (error) {
      if (error instanceof SandboxError) return { action: 'deny', reason: error.message };
      throw error;
    }
    const writing = writingTools.has(toolName);
    const refused = `${toolName} may not ${writing ? 'change' : toolName === 'read_file' ? 'read' : 'use'} ${path}`;
    if (await isClawState(location)) return { action: 'deny', reason: `${refused}: ${clawStateReason}` };
    if (await this.isPrivate(location)) return { action: 'deny', reason: `${refused}: ${privateReason}` };
    const spellings = workspaceSpellings(location);
    if (spellings.some((spelling) => isEnvFile(spelling) && !this.allowedFiles.matches(spelling))) {
      return { action: 'deny', reason: `${refused}: ${envFileReason}` };
    }
    // A writing tool's target must also not be protected (.claw, .git/hooks/, .git/config).
    if (writing) {
      const reason =
        protectedPathReason(location.realRoot, location.realPath) ??
        protectedPathReason(nodePath.resolve(workDir), location.path);
      if (reason !== undefined) return { action: 'deny', reason: `${refused}: ${reason}` };
    }
    return undefined;
  }

  /** True when the located path lies in one of `privateFolders`, spelled so or really. */
  private async isPrivate(location: WorkspaceLocation): Promise<boolean> {
    if (this.privateFolders.length === 0) return false;
    this.privateCovers ??= Promise.all(this.privateFolders.map(async (folder) =>
      new Set([folder, await realPathOfMissing(folder)])));
    for (const covers of await this.privateCovers) {
      for (const cover of covers) {
        if (isInside(cover, location.path) || isInside(cover, location.realPath)) return true;
      }
    }
    return false;
  }
}

/** Why the user's claw folders are refused. */
const privateReason =
  'it is in your own claw folder (your settings, the workspaces you trust, servers\' tokens), ' +
  'which is not for the model';

/** The real path of `folder`, resolving its nearest existing ancestor when it does not exist. */
async function realPathOfMissing(folder: string): Promise<string> {
  const rest: string[] = [];
  for (let current = folder; ; current = nodePath.dirname(current)) {
    try {
      return nodePath.join(await realpath(current), ...rest.reverse());
    } catch {
      if (current === nodePath.dirname(current)) return folder;
      rest.push(nodePath.basename(current));
    }
  }
}

/** Why a `.env` file is refused, and what would allow it. */
const envFileReason =
  '.env files hold secrets (keys, passwords, tokens) that are not for the model; templates such ' +
  'as .env.example are fine. The user can allow this file in claw\'s settings.';

function checkCommand(command: unknown): PolicyVerdict | undefined {
  if (typeof command !== 'string' || command.trim() === '') {
    return { action: 'deny', reason: 'bash needs a command (a non-empty "command" argument)' };
  }
  const destructive = checkDestructiveCommand(command);
  if (destructive !== undefined) {
    return { action: 'deny', reason: `the command is destructive: ${destructive}` };
  }
  const escape = checkWorkspaceEscape(command);
  if (escape !== undefined) {
    return {
      action: 'deny',
      reason: `the command tries to reach a path outside the workspace: ${escape}`,
    };
  }
  return undefined;
}
