import { randomUUID } from 'node:crypto';
import {
  ApprovalNotPendingError,
  answerParts,
  isApprovalDecision,
  type ApprovalAnswer,
  type ApprovalHandler,
  type ApprovalPrompt,
  type ElicitationPrompt,
} from '@claw/approval';
import {
  ClawError,
  abortReason,
  elicitationActions,
  errorMessage,
  linkAbortSignal,
  type ApprovalDecision,
  type ElicitationAction,
  type ElicitationAnswer,
  type ElicitationContent,
  type ElicitationSchema,
  type SessionEventOf,
} from '@claw/core';
import type { SessionEventLog } from './event-log.js';

/** A request for input an MCP server sent (MCP-7), as a session asks it. */
export interface ElicitationQuestion {
  server: string;
  message: string;
  requestedSchema: ElicitationSchema;
  /**
   * Checks a filled-in form (defaults applied) against `requestedSchema`; a channel client's
   * answer that fails is refused (it may answer again). Default: taken as it is (the MCP client
   * checks every answer before it sends it).
   */
  validate?: (
    content: Readonly<Record<string, unknown>>,
  ) => { valid: true; content: ElicitationContent } | { valid: false; error: string };
}

/**
 * An answer to a request for input that cannot be taken (`elicitation_not_pending`: it is not
 * waiting; `invalid_elicitation_answer`: the content does not fit the form, or the action is
 * not one of accept, decline, cancel).
 */
export class ElicitationAnswerError extends ClawError {
  readonly requestId: string;

  constructor(
    message: string,
    options: { requestId: string; code: 'elicitation_not_pending' | 'invalid_elicitation_answer' },
  ) {
    super(message, { code: options.code });
    this.requestId = options.requestId;
  }
}

interface Eliciting {
  prompt: ElicitationPrompt;
  request: SessionEventOf<'elicitation_request'>;
  validate: ElicitationQuestion['validate'];
  /** Aborted once it is settled: the responders asked stop waiting. */
  asked: AbortController;
  settle: (outcome: { answer: ElicitationAnswer; by: string } | { error: Error }) => void;
}

/** Who may answer a session's approvals in-process: a handler with a name for `by`. */
export interface ApprovalResponder {
  /** Shown as `by` in `approval_resolved` when this responder's answer wins. */
  name: string;
  handler: ApprovalHandler;
}

interface Waiting {
  prompt: ApprovalPrompt;
  request: SessionEventOf<'approval_request'>;
  /** Aborted once it is settled: the responders asked stop waiting. */
  asked: AbortController;
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
  private readonly eliciting = new Map<string, Eliciting>();
  /** Attached clients without an in-process handler, which answer through `respond…`. */
  private clients = 0;
  private taskId: string | undefined;
  private readonly sessionId: string;
  private readonly workDir: string;
  private readonly onChange: (pending: number) => void;

  constructor(options: {
    log: SessionEventLog;
    onChange: (pending: number) => void;
    sessionId?: string;
    workDir?: string;
  }) {
    this.log = options.log;
    this.onChange = options.onChange;
    this.sessionId = options.sessionId ?? '';
    this.workDir = options.workDir ?? '';
  }

  /**
   * Counts a client that answers through `respond` and `respondElicitation` (a channel client)
   * until the returned undo: with none, and no responder that can be asked, a request for
   * input is declined at once (MCP-7: nobody to ask).
   */
  addClient(): () => void {
    this.clients += 1;
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      this.clients -= 1;
    };
  }

  /** The task whose calls are being asked about (events carry its id). */
  setTask(taskId: string | undefined): void {
    this.taskId = taskId;
  }

  /** Puts later questions to `responder` too (and the ones waiting now); returns the undo. */
  addResponder(responder: ApprovalResponder): () => void {
    this.responders.add(responder);
    for (const waiting of this.waiting.values()) this.ask(responder, waiting);
    for (const eliciting of this.eliciting.values()) this.askInput(responder, eliciting);
    return () => void this.responders.delete(responder);
  }

  /** Whether a request for input could be answered now: by a responder, or a channel client. */
  canElicit(): boolean {
    return this.clients > 0 ||
      [...this.responders].some((responder) => responder.handler.elicit !== undefined);
  }

  /** The requests for input waiting for an answer, oldest first, as their events. */
  pendingElicitations(): Array<SessionEventOf<'elicitation_request'>> {
    return [...this.eliciting.values()].map((eliciting) => eliciting.request);
  }

  /**
   * Asks for input an MCP server wants (MCP-7): an `elicitation_request` event (every client of
   * the session sees it), put to every responder that can answer it (`elicit`); the first answer
   * wins, from a responder or from `respondElicitation` (a channel client's
   * `elicitation_response`), and becomes an `elicitation_resolved` event. With nobody who could
   * answer (no such responder, no channel client attached) it is declined at once. When `signal`
   * aborts (the server's time for an answer is up, or it withdrew the request) it rejects with the
   * signal's reason, and the event says `timeout` or `canceled`.
   */
  elicit(question: ElicitationQuestion, signal: AbortSignal): Promise<ElicitationAnswer> {
    if (signal.aborted) return Promise.reject(abortReason(signal));
    const requestId = `elicitation-${randomUUID()}`;
    const request = this.log.append({
      type: 'elicitation_request',
      task_id: this.taskId ?? '',
      request_id: requestId,
      server: question.server,
      message: question.message,
      requested_schema: question.requestedSchema,
    }) as SessionEventOf<'elicitation_request'>;
    const resolved = (action: ElicitationAction, by: string): void => void this.log.append({
      type: 'elicitation_resolved',
      task_id: request.task_id,
      request_id: requestId,
      action,
      by,
    });
    if (!this.canElicit()) {
      resolved('decline', 'nobody');
      return Promise.resolve({ action: 'decline' });
    }
    return new Promise<ElicitationAnswer>((resolve, reject) => {
      const onAbort = (): void => eliciting.settle({ error: abortReason(signal) });
      const eliciting: Eliciting = {
        prompt: {
          requestId,
          sessionId: this.sessionId,
          server: question.server,
          message: question.message,
          requestedSchema: question.requestedSchema,
          workDir: this.workDir,
        },
        request,
        validate: question.validate,
        asked: new AbortController(),
        settle: (outcome) => {
          if (this.eliciting.get(requestId) !== eliciting) return;
          this.eliciting.delete(requestId);
          signal.removeEventListener('abort', onAbort);
          eliciting.asked.abort(new Error('the request for input was settled'));
          if ('answer' in outcome) {
            resolved(outcome.answer.action, outcome.by);
          } else {
            const code = (outcome.error as { code?: unknown }).code;
            const timedOut = code === 'mcp_elicitation_timeout';
            resolved(timedOut ? 'decline' : 'cancel', timedOut ? 'timeout' : 'canceled');
          }
          this.changed();
          if ('answer' in outcome) resolve(outcome.answer);
          else reject(outcome.error);
        },
      };
      this.eliciting.set(requestId, eliciting);
      signal.addEventListener('abort', onAbort, { once: true });
      this.changed();
      for (const responder of this.responders) this.askInput(responder, eliciting);
    });
  }

  /**
   * Answers a waiting request for input (a channel client's `elicitation_response`); `by` names
   * who answered. An `accept` is checked against the form first (defaults applied).
   *
   * @throws ElicitationAnswerError `elicitation_not_pending` when it is not waiting (never asked,
   *   already answered — the first answer wins — or withdrawn); `invalid_elicitation_answer` when
   *   the action is unknown or the content does not fit the form (it then stays waiting).
   */
  respondElicitation(
    requestId: string,
    answer: { action: ElicitationAction; content?: Readonly<Record<string, unknown>> },
    by: string,
  ): void {
    const eliciting = this.eliciting.get(requestId);
    if (eliciting === undefined) {
      throw new ElicitationAnswerError(
        `No request for input "${requestId}" is waiting for an answer in this session: it was ` +
        'never asked, was already answered (the first answer wins), or was withdrawn.',
        { requestId, code: 'elicitation_not_pending' },
      );
    }
    const invalid = (why: string): ElicitationAnswerError => new ElicitationAnswerError(
      `The answer to the request for input "${requestId}" was not taken: ${why}. Answer again.`,
      { requestId, code: 'invalid_elicitation_answer' },
    );
    if (!(elicitationActions as readonly unknown[]).includes(answer.action)) {
      throw invalid(
        `${JSON.stringify(answer.action)} is not one of ${elicitationActions.join(', ')}`,
      );
    }
    if (answer.action !== 'accept') {
      eliciting.settle({ answer: { action: answer.action }, by });
      return;
    }
    const content = answer.content ?? {};
    const checked = eliciting.validate?.(content) ??
      { valid: true as const, content: content as ElicitationContent };
    if (!checked.valid) throw invalid(`it does not fit the form (${checked.error})`);
    eliciting.settle({ answer: { action: 'accept', content: checked.content }, by });
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
      const onAbort = (): void =>
        waiting.settle({ error: abortReason(signal) });
      const waiting: Waiting = {
        prompt,
        request,
        asked: new AbortController(),
        settle: (outcome) => {
          if (this.waiting.get(prompt.requestId) !== waiting) return;
          this.waiting.delete(prompt.requestId);
          signal.removeEventListener('abort', onAbort);
          waiting.asked.abort(new Error('the approval was settled'));
          const decision: ApprovalDecision =
            'answer' in outcome ? (answerParts(outcome.answer).decision as ApprovalDecision) : 'deny';
          this.log.append({
            type: 'approval_resolved',
            task_id: request.task_id,
            request_id: prompt.requestId,
            decision,
            by: 'answer' in outcome ? outcome.by : 'canceled',
          });
          this.changed();
          if ('answer' in outcome) resolve(outcome.answer);
          else reject(outcome.error);
        },
      };
      this.waiting.set(prompt.requestId, waiting);
      signal.addEventListener('abort', onAbort, { once: true });
      this.changed();
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

  /**
   * Ends every wait (the task is ending or the session closing): each `approve` and `elicit`
   * rejects.
   */
  cancelAll(reason: Error): void {
    for (const waiting of [...this.waiting.values()]) waiting.settle({ error: reason });
    for (const eliciting of [...this.eliciting.values()]) eliciting.settle({ error: reason });
  }

  private askInput(responder: ApprovalResponder, eliciting: Eliciting): void {
    const { handler } = responder;
    if (handler.elicit === undefined) return;
    const elicit = handler.elicit.bind(handler);
    putTo(responder.name, eliciting, 'the request for input', (signal) =>
      elicit({ ...eliciting.prompt }, signal));
  }

  private ask(responder: ApprovalResponder, waiting: Waiting): void {
    putTo(responder.name, waiting, 'the approval', (signal) =>
      responder.handler.approve({ ...waiting.prompt }, signal));
  }

  /** Tells `onChange` how many questions wait now. */
  private changed(): void {
    this.onChange(this.waiting.size + this.eliciting.size);
  }
}

/**
 * Puts a question (an approval, a request for input) to one responder, named `by`: its answer
 * settles the question unless another settled it first, and its wait ends once the question is
 * settled, by whoever (`asked`). A responder that cannot ask (its output broke) fails the
 * question: better than waiting.
 */
function putTo<A>(
  by: string,
  question: {
    asked: AbortController;
    settle: (outcome: { answer: A; by: string } | { error: Error }) => void;
  },
  what: string,
  asking: (signal: AbortSignal) => Promise<A>,
): void {
  if (question.asked.signal.aborted) return;
  // The responder may leave its listeners on the signal: it gets one of its own.
  const link = linkAbortSignal(question.asked.signal);
  asking(link.signal).then(
    (answer) => {
      link.dispose();
      if (!link.signal.aborted) question.settle({ answer, by });
    },
    (error: unknown) => {
      link.dispose();
      if (link.signal.aborted) return;
      question.settle({
        error: error instanceof Error
          ? error
          : new Error(`${what} could not be asked: ${errorMessage(error)}`),
      });
    },
  );
}
