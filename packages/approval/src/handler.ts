import {
  abortReason,
  approvalDecisions,
  type ApprovalDecision,
  type ElicitationAnswer,
  type ElicitationSchema,
  type RiskLevel,
} from '@claw/core';
import { ApprovalError } from './errors.js';

/** What a user is asked to decide about one tool call. */
export interface ApprovalPrompt {
  /** Unique per question; the answer is matched to it. */
  requestId: string;
  sessionId: string;
  toolName: string;
  risk: RiskLevel;
  /** What the call will do, in words (from the policy). */
  reason: string;
  /** The call's raw JSON arguments. */
  arguments: string;
  workDir: string;
  /** The tool call asked about (its id in the conversation), when the gate knows it. */
  toolCallId?: string;
}

/** A request for input from an MCP server (MCP-7), as whoever answers approvals is asked it. */
export interface ElicitationPrompt {
  /** Unique per question; the answer is matched to it. */
  requestId: string;
  sessionId: string;
  /** The MCP server that asks, as named in its configuration. */
  server: string;
  /** What the server tells the user it wants. */
  message: string;
  /** The form to fill in: a flat object of strings, numbers, integers, booleans and enums. */
  requestedSchema: ElicitationSchema;
  workDir: string;
}

/**
 * Gets the user's decision for one prompt (APR-5). `approve` only waits: it never reads input
 * itself (whoever owns the input hands the answer over, see `PendingApprovals`). When `signal`
 * aborts it rejects with the signal's reason and leaves nothing behind.
 */
export interface ApprovalHandler {
  approve(prompt: ApprovalPrompt, signal: AbortSignal): Promise<ApprovalAnswer>;
  /**
   * Asks the user to fill in a form an MCP server sent during a call (MCP-7); the same person
   * who answers approvals answers these. Optional: a handler without it is not asked (another
   * client of the session may answer; with nobody, claw declines). The answer's content is
   * checked against the form before it is sent; `decline` is the answer of a handler that has
   * nobody to ask. When `signal` aborts (answered elsewhere, timed out, withdrawn) it rejects
   * with the signal's reason and leaves nothing behind.
   */
  elicit?(prompt: ElicitationPrompt, signal: AbortSignal): Promise<ElicitationAnswer>;
}

/**
 * A handler's answer: the decision, or the decision with the reason to give the model. A handler
 * that answers for nobody (an unattended run) says so, instead of "the user denied it".
 */
export type ApprovalAnswer = ApprovalDecision | { decision: ApprovalDecision; reason: string };

/** The decision and reason of an answer (`reason` undefined when the handler gave none). */
export function answerParts(answer: unknown): { decision: unknown; reason: string | undefined } {
  if (typeof answer === 'object' && answer !== null && 'decision' in answer) {
    const { decision, reason } = answer as { decision: unknown; reason?: unknown };
    return { decision, reason: typeof reason === 'string' && reason !== '' ? reason : undefined };
  }
  return { decision: answer, reason: undefined };
}

/** True when `value` is one of `allow_once`, `allow_session`, `deny`. */
export function isApprovalDecision(value: unknown): value is ApprovalDecision {
  return (approvalDecisions as readonly unknown[]).includes(value);
}

/**
 * The error for a decision that is none of `allow_once`, `allow_session`, `deny`
 * (`invalid_approval_decision`).
 */
export function invalidDecision(value: unknown): ApprovalError {
  return new ApprovalError(
    `${JSON.stringify(value) ?? String(value)} is not an approval decision. Answer with one of ` +
    `${approvalDecisions.join(', ')}.`,
    { code: 'invalid_approval_decision' },
  );
}

/**
 * A handler that always answers `decision` without asking anyone, for non-interactive modes and
 * tests. It still honours the signal: an aborted signal rejects with its reason.
 *
 * @throws {ApprovalError} `invalid_approval_decision` when `decision` is not a decision.
 */
export function staticHandler(decision: ApprovalDecision): ApprovalHandler {
  if (!isApprovalDecision(decision)) throw invalidDecision(decision);
  return {
    async approve(_prompt, signal) {
      if (signal.aborted) throw abortReason(signal);
      return decision;
    },
  };
}
