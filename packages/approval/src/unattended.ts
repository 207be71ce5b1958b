import { abortReason } from '@claw/core';
import type { ApprovalAnswer, ApprovalHandler, ApprovalPrompt } from './handler.js';

/** Options of {@link UnattendedApprovals}. */
export interface UnattendedApprovalsOptions {
  /** Says, to whoever watches (a log, stderr), why this call is denied. Optional. */
  explain?: (prompt: ApprovalPrompt) => void | Promise<void>;
}

/**
 * The handler when nobody can answer (no terminal, a script, a remote-originated run): every
 * question is denied at once, and the model is told the truth — nobody was asked — not that a
 * person said no. Nobody at the terminal never means "allowed".
 */
export class UnattendedApprovals implements ApprovalHandler {
  private readonly explain: UnattendedApprovalsOptions['explain'];

  constructor(options: UnattendedApprovalsOptions = {}) {
    this.explain = options.explain;
  }

  async approve(prompt: ApprovalPrompt, signal: AbortSignal): Promise<ApprovalAnswer> {
    if (signal.aborted) throw abortReason(signal);
    await this.explain?.(prompt);
    return {
      decision: 'deny',
      reason:
        'nobody was asked: this run is unattended, so calls that need approval are denied ' +
        `(${prompt.reason})`,
    };
  }
}
