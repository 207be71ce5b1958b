import type { ApprovalDecision } from './events.js';
import type { ToolCall } from './messages.js';
import type { RiskLevel } from './tools.js';

/** One tool call waiting for permission, as the engine presents it to the gate (ENG-3). */
export interface ApprovalRequest {
  sessionId: string;
  workDir: string;
  toolCall: ToolCall;
  risk: RiskLevel;
  /** The arguments after parsing and schema validation. */
  arguments: unknown;
}

export type GateDecision =
  | { allowed: true; decision?: ApprovalDecision | 'policy_allow' }
  | { allowed: false; reason: string; decision?: ApprovalDecision | 'policy_deny' };

/**
 * Decides whether a tool call may run. The engine asks it before every `execute`; a denial
 * becomes an error Observation, not an exception. `check` may wait for a human and must end
 * promptly with the signal's reason when the signal aborts.
 */
export interface ApprovalGate {
  check(request: ApprovalRequest, options: { signal: AbortSignal }): Promise<GateDecision>;
}
