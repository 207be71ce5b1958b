import { randomUUID } from 'node:crypto';
import nodePath from 'node:path';
import {
  abortReason,
  raceAbort,
  approvalModes,
  type ApprovalMode,
  type ApprovalDecision,
  type ApprovalGate,
  type ApprovalRequest,
  type GateCheckOptions,
  type GateDecision,
} from '@claw/core';
import type { AuditDecision, AuditLog } from './audit.js';
import { DefaultPolicy } from './default-policy.js';
import { argumentDigest } from './digest.js';
import { grantKey, type Grant, type GrantStore } from './grant.js';
import {
  answerParts,
  invalidDecision,
  isApprovalDecision,
  type ApprovalHandler,
  type ApprovalPrompt,
} from './handler.js';
import type { Policy } from './policy.js';

export { approvalModes, type ApprovalMode };

/** Options of {@link Gate}. */
export interface GateOptions {
  /** Default: `new DefaultPolicy()` (bash counted as not isolated). */
  policy?: Policy;
  /** Asked for the calls the policy asks about (in mode `ask`, or when a human is required). */
  handler: ApprovalHandler;
  /** Where session grants are looked up and kept. */
  grants: GrantStore;
  /** Where every decision is recorded. Default: nowhere. */
  audit?: AuditLog;
  /** Default `ask`. */
  mode?: ApprovalMode;
  /** How long a session grant lasts. Default: no expiry. */
  grantTtlMs?: number;
  /** The clock. Default: the system clock. */
  now?: () => Date;
  /** Ids of approval requests. Default: `approval-<random UUID>`. */
  newRequestId?: () => string;
}

interface CallFacts {
  request: ApprovalRequest;
  requestId: string;
  digest: string;
}

/**
 * The approval gate the engine calls before every tool call (APR-1..APR-5):
 * 1. the policy denies → denied (`policy_deny`), the handler is never asked;
 * 2. the policy allows → allowed (`policy_allow`);
 * 3. the policy asks: a live session grant for the same session, workspace, tool and arguments →
 *    allowed (`grant_reuse`); else mode `allow` → allowed once (`mode_allow`) unless the policy
 *    requires a human; mode `deny` → denied with a reason saying how to allow it (`mode_deny`);
 *    otherwise the handler decides: `allow_once`, `allow_session` (a grant is kept, expiring
 *    after `grantTtlMs`), or `deny`. The caller's `onAsking` is called just before the handler
 *    is asked.
 *
 * Every decision is recorded in the audit log. `check` rejects with the signal's reason when the
 * signal aborts (also while waiting for the handler); it passes on errors of the policy, the
 * handler, the grant store (e.g. a `GrantStoreError` when a session grant cannot be saved: the
 * call is then not allowed) and the audit log (a decision that cannot be recorded is not given),
 * and throws an `ApprovalError` `invalid_approval_decision` when the handler answers something
 * that is not a decision.
 */
export class Gate implements ApprovalGate {
  private readonly policy: Policy;
  private readonly handler: ApprovalHandler;
  private readonly grants: GrantStore;
  private readonly audit: AuditLog | undefined;
  private readonly mode: ApprovalMode;
  private readonly grantTtlMs: number | undefined;
  private readonly now: () => Date;
  private readonly newRequestId: () => string;

  constructor(options: GateOptions) {
    this.policy = options.policy ?? new DefaultPolicy();
    this.handler = options.handler;
    this.grants = options.grants;
    this.audit = options.audit;
    this.mode = options.mode ?? 'ask';
    this.grantTtlMs = options.grantTtlMs;
    this.now = options.now ?? (() => new Date());
    this.newRequestId = options.newRequestId ?? (() => `approval-${randomUUID()}`);
  }

  async check(request: ApprovalRequest, options: GateCheckOptions): Promise<GateDecision> {
    const { signal } = options;
    if (signal.aborted) throw abortReason(signal);
    const facts: CallFacts = {
      request,
      requestId: this.newRequestId(),
      digest: argumentDigest(request.toolCall.arguments),
    };
    const verdict = await this.policy.evaluate(request);
    if (signal.aborted) throw abortReason(signal);
    if (verdict.action === 'deny') {
      await this.record(facts, 'policy_deny', verdict.reason);
      return { allowed: false, reason: verdict.reason, decision: 'policy_deny' };
    }
    if (verdict.action === 'allow') {
      await this.record(facts, 'policy_allow');
      return { allowed: true, decision: 'policy_allow' };
    }

    const key = grantKey({
      sessionId: request.sessionId,
      workDir: nodePath.resolve(request.workDir),
      toolName: request.toolCall.name,
      digest: facts.digest,
    });
    const grant = await this.grants.get(key, this.now());
    if (grant !== undefined) {
      await this.record(
        facts,
        'grant_reuse',
        `allowed for the session by request ${grant.requestId} at ${grant.approvedAt}`,
      );
      return { allowed: true, decision: 'allow_session' };
    }

    const requireHuman = verdict.requireHuman === true;
    if (this.mode === 'allow' && !requireHuman) {
      await this.record(facts, 'mode_allow', verdict.reason);
      return { allowed: true, decision: 'allow_once' };
    }
    if (this.mode === 'deny') {
      const reason =
        `${verdict.reason}\nApproval mode is deny, so calls that need approval are refused. ` +
        (requireHuman
          ? 'This one needs a person to allow it: run with --approval ask.'
          : 'To allow them, run with --approval ask (to be asked) or --approval allow.');
      await this.record(facts, 'mode_deny', verdict.reason);
      return { allowed: false, reason, decision: 'deny' };
    }

    options.onAsking?.();
    const { decision, reason: answerReason } = await this.ask(facts, verdict.reason, signal);
    switch (decision) {
      case 'allow_once':
        await this.record(facts, 'allow_once', verdict.reason);
        return { allowed: true, decision };
      case 'allow_session':
        await this.grants.put(this.newGrant(key, facts));
        await this.record(facts, 'allow_session', verdict.reason);
        return { allowed: true, decision };
      case 'deny':
        await this.record(facts, 'deny', answerReason ?? verdict.reason);
        return {
          allowed: false,
          reason: answerReason ?? `the user denied it: ${verdict.reason}`,
          decision,
        };
    }
  }

  /** The handler's decision (and reason), or the signal's reason when it aborts first. */
  private async ask(
    facts: CallFacts,
    reason: string,
    signal: AbortSignal,
  ): Promise<{ decision: ApprovalDecision; reason: string | undefined }> {
    const { request } = facts;
    const prompt: ApprovalPrompt = {
      requestId: facts.requestId,
      sessionId: request.sessionId,
      toolName: request.toolCall.name,
      risk: request.risk,
      reason,
      arguments: request.toolCall.arguments,
      workDir: request.workDir,
      toolCallId: request.toolCall.id,
    };
    // The handler should honour the signal; racing it too means one that does not cannot hang us.
    const answer: unknown = await raceAbort(this.handler.approve(prompt, signal), signal);
    const { decision, reason: answerReason } = answerParts(answer);
    if (!isApprovalDecision(decision)) throw invalidDecision(answer);
    return { decision, reason: answerReason };
  }

  private newGrant(key: string, facts: CallFacts): Grant {
    const approvedAt = this.now();
    return {
      key,
      sessionId: facts.request.sessionId,
      workDir: nodePath.resolve(facts.request.workDir),
      toolName: facts.request.toolCall.name,
      digest: facts.digest,
      requestId: facts.requestId,
      decision: 'allow_session',
      approvedAt: approvedAt.toISOString(),
      ...(this.grantTtlMs === undefined
        ? {}
        : { expiresAt: new Date(approvedAt.getTime() + this.grantTtlMs).toISOString() }),
    };
  }

  private async record(facts: CallFacts, decision: AuditDecision, reason?: string): Promise<void> {
    if (this.audit === undefined) return;
    await this.audit.record({
      time: this.now().toISOString(),
      requestId: facts.requestId,
      sessionId: facts.request.sessionId,
      toolName: facts.request.toolCall.name,
      digest: facts.digest,
      decision,
      ...(reason === undefined ? {} : { reason }),
    });
  }
}
