import type { ApprovalGate, ApprovalRequest, GateDecision } from '@claw/core';

/** A gate that allows every call and remembers what it was asked. For tests only. */
export class AllowAllGate implements ApprovalGate {
  readonly requests: ApprovalRequest[] = [];

  async check(request: ApprovalRequest): Promise<GateDecision> {
    this.requests.push(request);
    return { allowed: true };
  }
}

/** A gate that denies every call with `reason`. For tests only. */
export class DenyAllGate implements ApprovalGate {
  readonly requests: ApprovalRequest[] = [];

  constructor(private readonly reason = 'denied by the test gate') {}

  async check(request: ApprovalRequest): Promise<GateDecision> {
    this.requests.push(request);
    return { allowed: false, reason: this.reason };
  }
}
