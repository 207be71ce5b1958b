import { ClawError, abortReason, errorMessage, type ApprovalDecision } from '@claw/core';
import { ApprovalError, ApprovalNotPendingError } from './errors.js';
import {
  invalidDecision,
  isApprovalDecision,
  type ApprovalHandler,
  type ApprovalPrompt,
} from './handler.js';

/** Options of {@link PendingApprovals}. */
export interface PendingApprovalsOptions {
  /**
   * Shows or sends the question: print it in the terminal, send an `approval_request` event. The
   * answer comes back later through `respond`. A failure here fails the approval (the request is
   * then no longer pending).
   */
  onRequest: (prompt: ApprovalPrompt) => void | Promise<void>;
}

interface Waiter {
  prompt: ApprovalPrompt;
  resolve(decision: ApprovalDecision): void;
  reject(error: Error): void;
}

/**
 * The approve/respond mechanism that terminal and channel sessions share (APR-5). `approve`
 * registers the request, hands it to `onRequest`, and then only waits, for `respond` with its id
 * or for the abort. Whoever owns the input (the REPL, the connection's read loop) calls `respond`;
 * nothing here reads input, so an abort leaves no reader behind.
 */
export class PendingApprovals implements ApprovalHandler {
  private readonly onRequest: PendingApprovalsOptions['onRequest'];
  private readonly waiters = new Map<string, Waiter>();

  constructor(options: PendingApprovalsOptions) {
    this.onRequest = options.onRequest;
  }

  /**
   * Asks for a decision and waits for it. When `signal` aborts, rejects with the signal's reason
   * and the request is no longer pending (a later `respond` is refused).
   *
   * @throws {ApprovalError} `approval_already_pending` when a request with the same id is waiting;
   *   `approval_request_failed` when `onRequest` fails with an error that is not a `ClawError`
   *   (a `ClawError` is passed on as it is); `approval_canceled` after `cancelAll` without a
   *   reason.
   */
  approve(prompt: ApprovalPrompt, signal: AbortSignal): Promise<ApprovalDecision> {
    if (signal.aborted) return Promise.reject(abortReason(signal));
    if (this.waiters.has(prompt.requestId)) {
      return Promise.reject(
        new ApprovalError(
          `The approval request "${prompt.requestId}" is already waiting for an answer; every ` +
          'request needs its own id.',
          { code: 'approval_already_pending' },
        ),
      );
    }
    return new Promise<ApprovalDecision>((resolve, reject) => {
      const onAbort = (): void => settle(() => reject(abortReason(signal)));
      const settle = (finish: () => void): void => {
        if (this.waiters.get(prompt.requestId) !== waiter) return;
        this.waiters.delete(prompt.requestId);
        signal.removeEventListener('abort', onAbort);
        finish();
      };
      const waiter: Waiter = {
        prompt: { ...prompt },
        resolve: (decision) => settle(() => resolve(decision)),
        reject: (error) => settle(() => reject(error)),
      };
      this.waiters.set(prompt.requestId, waiter);
      signal.addEventListener('abort', onAbort, { once: true });
      const fail = (error: unknown): void => waiter.reject(requestFailed(prompt, error));
      try {
        Promise.resolve(this.onRequest({ ...prompt })).catch(fail);
      } catch (error) {
        fail(error);
      }
    });
  }

  /**
   * Answers the pending request `requestId`.
   *
   * @throws {ApprovalNotPendingError} `approval_not_pending` when no request with that id is
   *   waiting: it was never asked, was already answered, or was canceled.
   * @throws {ApprovalError} `invalid_approval_decision` when `decision` is not a decision.
   */
  respond(requestId: string, decision: ApprovalDecision): void {
    if (!isApprovalDecision(decision)) throw invalidDecision(decision);
    const waiter = this.waiters.get(requestId);
    if (waiter === undefined) {
      const open = this.pending();
      throw new ApprovalNotPendingError(
        `No approval request "${requestId}" is waiting for an answer: it was never asked, was ` +
        'already answered, or was canceled. ' +
        (open.length === 0
          ? 'No request is waiting now.'
          : `Waiting now: ${open.map((id) => `"${id}"`).join(', ')}.`),
        { requestId },
      );
    }
    waiter.resolve(decision);
  }

  /** The ids of the requests waiting for an answer, oldest first. */
  pending(): string[] {
    return [...this.waiters.keys()];
  }

  /** The prompts of the requests waiting for an answer, oldest first (to ask them again). */
  pendingPrompts(): ApprovalPrompt[] {
    return [...this.waiters.values()].map((waiter) => ({ ...waiter.prompt }));
  }

  /**
   * Fails every waiting request (Ctrl-C, connection closed): each `approve` rejects with `reason`
   * when it is an `Error`, otherwise with an `ApprovalError` `approval_canceled`.
   */
  cancelAll(reason?: unknown): void {
    const error =
      reason instanceof Error
        ? reason
        : new ApprovalError(
            'The approval request was canceled before it was answered' +
            (reason === undefined ? '.' : `: ${errorMessage(reason)}.`),
            { code: 'approval_canceled', cause: reason },
          );
    for (const waiter of [...this.waiters.values()]) waiter.reject(error);
  }
}

function requestFailed(prompt: ApprovalPrompt, error: unknown): Error {
  if (error instanceof ClawError) return error;
  return new ApprovalError(
    `Could not ask for approval of ${prompt.toolName} (request "${prompt.requestId}"): ` +
    `${errorMessage(error)}.`,
    { code: 'approval_request_failed', cause: error },
  );
}
