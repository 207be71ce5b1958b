import {
  ApprovalNotPendingError,
  answerParts,
  isApprovalDecision,
  type ApprovalAnswer,
  type ApprovalHandler,
  type ApprovalPrompt,
} from '@claw/approval';
import {
  abortReason,
  errorMessage,
  linkAbortSignal,
  type ApprovalDecision,
  type SessionEventOf,
} from '@claw/core';
import type { SessionEventLog } from './event-log.js';

/** Who may answer a session's approvals in-process: a handler with a name for `by`. */
export interface ApprovalResponder {
  /** Shown as `by` in `approval_resolved` when this responder's answer wins. */
  name: string;
  handler: ApprovalHandler;
}

interface Waiting {
  prompt: ApprovalPrompt;
  request: SessionEventOf<'approval_request'>;
  settle: (outcome: { answer: ApprovalAnswer; by: string } | { error: Error }) => void;
}

/**
 * The approvals of one session (CH-10, APR-5), shared by every client attached to it: every
 * question becomes an `approval_request` event (so every watcher, and one that reconnects later,
 * sees it) and is put to every attached responder at once; the first answer wins, from a
 * responder or from `respond` (a channel client's `approval_response`), and becomes an
 * `approval_resolved` event naming who decided. A later answer gets `ApprovalNotPendingError`.
 * A question nobody answers waits (tasks outlive their clients) until the task is canceled.
 */
export class SessionApprovals implements ApprovalHandler {
  private readonly log: SessionEventLog;
  private readonly responders = new Set<ApprovalResponder>();
  private readonly waiting = new Map<string, Waiting>();
  private taskId: string | undefined;
  private readonly onChange: (pending: number) => void;

  constructor(options: { log: SessionEventLog; onChange: (pending: number) => void }) {
    this.log = options.log;
    this.onChange = options.onChange;
  }

  /** The task whose calls are being asked about (events carry its id). */
  setTask(taskId: string | undefined): void {
    this.taskId = taskId;
  }

  /** Puts later questions to `responder` too (and the ones waiting now); returns the undo. */
  addResponder(responder: ApprovalResponder): () => void {
    this.responders.add(responder);
    for (const waiting of this.waiting.values()) this.ask(responder, waiting);
    return () => void this.responders.delete(responder);
  }

  /** The questions waiting for an answer, oldest first, as their `approval_request` events. */
  pending(): Array<SessionEventOf<'approval_request'>> {
    return [...this.waiting.values()].map((waiting) => waiting.request);
  }

  approve(prompt: ApprovalPrompt, signal: AbortSignal): Promise<ApprovalAnswer> {
    if (signal.aborted) return Promise.reject(abortReason(signal));
    return new Promise<ApprovalAnswer>((resolve, reject) => {
      const request = this.log.append({
        type: 'approval_request',
        task_id: this.taskId ?? '',
        request_id: prompt.requestId,
        tool_name: prompt.toolName,
        risk: prompt.risk,
        reason: prompt.reason,
        arguments: prompt.arguments,
      }) as SessionEventOf<'approval_request'>;
      const asked = new AbortController();
      const onAbort = (): void =>
        waiting.settle({ error: abortReason(signal) });
      const waiting: Waiting = {
        prompt,
        request,
        settle: (outcome) => {
          if (this.waiting.get(prompt.requestId) !== waiting) return;
          this.waiting.delete(prompt.requestId);
          signal.removeEventListener('abort', onAbort);
          asked.abort(new Error('the approval was settled'));
          const decision: ApprovalDecision =
            'answer' in outcome ? (answerParts(outcome.answer).decision as ApprovalDecision) : 'deny';
          this.log.append({
            type: 'approval_resolved',
            task_id: request.task_id,
            request_id: prompt.requestId,
            decision,
            by: 'answer' in outcome ? outcome.by : 'canceled',
          });
          this.onChange(this.waiting.size);
          if ('answer' in outcome) resolve(outcome.answer);
          else reject(outcome.error);
        },
      };
      this.waiting.set(prompt.requestId, waiting);
      this.asking.set(waiting, asked.signal);
      signal.addEventListener('abort', onAbort, { once: true });
      this.onChange(this.waiting.size);
      for (const responder of this.responders) this.ask(responder, waiting);
    });
  }

  /**
   * Answers a waiting question (a channel client's `approval_response`). `by` names who answered.
   *
   * @throws ApprovalNotPendingError when it is not waiting (never asked, already answered — the
   *   first answer wins — or canceled).
   */
  respond(requestId: string, decision: ApprovalDecision, by: string): void {
    const waiting = this.waiting.get(requestId);
    if (waiting === undefined || !isApprovalDecision(decision)) {
      throw new ApprovalNotPendingError(
        `No approval request "${requestId}" is waiting for an answer in this session: it was ` +
        'never asked, was already answered (the first answer wins), or was canceled.',
        { requestId },
      );
    }
    waiting.settle({ answer: decision, by });
  }

  /** Ends every wait (the task is ending or the session closing): each `approve` rejects. */
  cancelAll(reason: Error): void {
    for (const waiting of [...this.waiting.values()]) waiting.settle({ error: reason });
  }

  private readonly asking = new WeakMap<Waiting, AbortSignal>();

  private ask(responder: ApprovalResponder, waiting: Waiting): void {
    const settled = this.asking.get(waiting);
    if (settled === undefined || settled.aborted) return;
    // The responder's wait ends when the question is settled, by whoever.
    const link = linkAbortSignal(settled);
    responder.handler.approve({ ...waiting.prompt }, link.signal).then(
      (answer) => {
        link.dispose();
        if (!link.signal.aborted) waiting.settle({ answer, by: responder.name });
      },
      (error: unknown) => {
        link.dispose();
        if (link.signal.aborted) return;
        // A responder that cannot ask (its output broke) fails the question: better than waiting.
        waiting.settle({
          error:
            error instanceof Error
              ? error
              : new Error(`the approval could not be asked: ${errorMessage(error)}`),
        });
      },
    );
  }
}
