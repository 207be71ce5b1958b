import {
  ApprovalNotPendingError,
  PendingApprovals,
  type ApprovalHandler,
  type ApprovalPrompt,
} from '@claw/approval';
import type { ApprovalDecision } from '@claw/core';
import { describeToolCall } from './format.js';
import type { Style } from './style.js';
import { visible } from './terminal-text.js';

export interface TerminalApprovalsOptions {
  /** Puts one question to the user: called for one request at a time, the oldest waiting. */
  ask(prompt: ApprovalPrompt): void | Promise<void>;
  /** Called for every request as it arrives (e.g. to send an `approval_request` event). */
  announce?(prompt: ApprovalPrompt): void | Promise<void>;
}

/**
 * The terminal's approval handler (APR-5, CLI-1): it never reads input. `approve` shows the
 * question and waits; the REPL, the only reader of stdin, hands the answer over with `answer`.
 * Calls of one reply can ask at the same time: they are asked one after another, oldest first.
 * An abort (Ctrl-C) or `cancelAll` ends the wait and leaves nothing pending.
 */
export class TerminalApprovals implements ApprovalHandler {
  private readonly pending: PendingApprovals;
  private readonly options: TerminalApprovalsOptions;
  /** The request whose question is on screen. */
  private asked: string | undefined;

  constructor(options: TerminalApprovalsOptions) {
    this.options = options;
    this.pending = new PendingApprovals({ onRequest: (prompt) => this.onRequest(prompt) });
  }

  approve(prompt: ApprovalPrompt, signal: AbortSignal): Promise<ApprovalDecision> {
    const decision = this.pending.approve(prompt, signal);
    const next = (): void => this.askNext();
    void decision.then(next, next);
    return decision;
  }

  /** The question on screen, if one is waiting for its answer. */
  get current(): ApprovalPrompt | undefined {
    return this.pending.pendingPrompts().find((prompt) => prompt.requestId === this.asked);
  }

  /** Answers the question on screen; false when none is waiting (any more). */
  answer(decision: ApprovalDecision): boolean {
    const requestId = this.asked;
    if (requestId === undefined) return false;
    try {
      this.pending.respond(requestId, decision);
      return true;
    } catch (error) {
      if (error instanceof ApprovalNotPendingError) return false;
      throw error;
    }
  }

  /** Ends every wait (Ctrl-C): each `approve` rejects. */
  cancelAll(reason?: unknown): void {
    this.pending.cancelAll(reason);
  }

  private async onRequest(prompt: ApprovalPrompt): Promise<void> {
    await this.options.announce?.(prompt);
    if (this.asked !== undefined) return;
    this.asked = prompt.requestId;
    await this.options.ask(prompt);
  }

  private askNext(): void {
    if (this.asked !== undefined && this.pending.pending().includes(this.asked)) return;
    this.asked = undefined;
    const next = this.pending.pendingPrompts()[0];
    if (next === undefined) return;
    this.asked = next.requestId;
    // A question that cannot be shown cannot be answered: fail the waits rather than hang.
    Promise.resolve(this.options.ask(next)).catch((error: unknown) => this.cancelAll(error));
  }
}

/** `y`/`yes` allow once, `a`/`always` allow for the session, `n`/`no` deny; else undefined. */
export function parseApprovalAnswer(line: string): ApprovalDecision | undefined {
  switch (line.trim().toLowerCase()) {
    case 'y':
    case 'yes':
      return 'allow_once';
    case 'a':
    case 'always':
      return 'allow_session';
    case 'n':
    case 'no':
      return 'deny';
    default:
      return undefined;
  }
}

export const approvalChoices = '[y] allow once  [a] allow for this session  [n] deny';

/** The question for one call, ending with the choices (no newline: the answer follows). */
export function approvalQuestion(prompt: ApprovalPrompt, style: Style): string {
  const call = describeToolCall({ name: prompt.toolName, arguments: prompt.arguments });
  const reason = visible(prompt.reason)
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
  return (
    `${style.yellow('?')} ${style.bold(`approve ${call}`)} ${style.dim(`(risk: ${prompt.risk})`)}\n` +
    `${reason}\n  ${approvalChoices} > `
  );
}

/** Said when a line is not an answer to the question on screen. */
export function approvalReask(style: Style): string {
  return `  ${style.yellow('answer y, a or n')}: ${approvalChoices} > `;
}

/** What was decided, for the transcript. */
export function decisionText(decision: ApprovalDecision): string {
  switch (decision) {
    case 'allow_once':
      return 'allowed once';
    case 'allow_session':
      return 'allowed for this session';
    case 'deny':
      return 'denied';
  }
}

/** Why an unattended run denied a call, for stderr. */
export function unattendedDenial(prompt: ApprovalPrompt, mode: 'ask' | 'allow' | 'deny'): string {
  const call = describeToolCall({ name: prompt.toolName, arguments: prompt.arguments });
  const firstReason = prompt.reason.split('\n').find((line) => /NOT isolated/.test(line));
  if (mode === 'allow') {
    return (
      `denied ${call}: only a person may allow it` +
      `${firstReason === undefined ? '' : ' (bash is NOT isolated on this machine)'}, and this ` +
      'run has nobody to ask. Run claw on a terminal with --approval ask to answer it, or ' +
      'install bubblewrap so that bash runs isolated.'
    );
  }
  return (
    `denied ${call}: it needs approval and there is no terminal to ask on. Use ` +
    '--approval allow to allow such calls, or run claw on a terminal.'
  );
}
