import { askOnce, type ApprovalRequest, type Eventual } from '@claw/core';
import {
  ProtectedPathError,
  SandboxError,
  checkDestructiveCommand,
  checkWorkspaceEscape,
  resolveWithinWorkspace,
  resolveWritableFile,
} from '@claw/sandbox';
import { argumentsOf } from './call-arguments.js';
import { describeCall } from './describe-call.js';
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
}

/** Tools that write the file named by their `path` argument. */
const writingTools = new Set(['write_file', 'edit_file']);

/**
 * The policy claw uses unless told otherwise (APR-1), checked in this order:
 * 1. An argument named `path` (of any tool) that is not a usable path inside the workspace
 *    (`resolveWithinWorkspace`: empty, absolute outside the workspace, leaving it lexically or
 *    through a symlink) →
 *    deny with the sandbox's message. A `path` that is not text → deny.
 * 2. `write_file` / `edit_file` of a path under `.claw/` or `.git/hooks/`, or of `.git/config`
 *    (lexically, case-insensitively, and on the real location) → deny.
 * 3. `bash` without a command, or with one the sandbox fences flag as destructive or reaching
 *    outside the workspace → deny, without asking.
 * 4. Risk `safe` → allow; `mutating` / `dangerous` → ask, with a reason saying what the call will
 *    do. Unless `bashIsolated`, a bash ask requires a human and says bash is not isolated.
 *
 * `evaluate` does not throw for bad arguments (they are denials); it passes on unexpected
 * file-system errors that are not `SandboxError`s.
 */
export class DefaultPolicy implements Policy {
  private readonly isBashIsolated: () => Promise<boolean>;

  constructor(options: DefaultPolicyOptions = {}) {
    this.isBashIsolated = askOnce(options.bashIsolated ?? false);
  }

  async evaluate(request: ApprovalRequest): Promise<PolicyVerdict> {
    const toolName = request.toolCall.name;
    const args = argumentsOf(request);
    if (Object.hasOwn(args, 'path')) {
      const denial = await checkPath(request.workDir, toolName, args.path);
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
}

async function checkPath(
  workDir: string,
  toolName: string,
  path: unknown,
): Promise<PolicyVerdict | undefined> {
  if (typeof path !== 'string') {
    return { action: 'deny', reason: `the "path" argument of ${toolName} must be text` };
  }
  try {
    // A writing tool's target must also not be protected (.claw/, .git/hooks/, .git/config).
    if (writingTools.has(toolName)) await resolveWritableFile(workDir, path);
    else await resolveWithinWorkspace(workDir, path);
  } catch (error) {
    if (error instanceof ProtectedPathError) {
      return { action: 'deny', reason: `${toolName} may not change ${path}: ${error.reason}` };
    }
    if (error instanceof SandboxError) return { action: 'deny', reason: error.message };
    throw error;
  }
  return undefined;
}

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
