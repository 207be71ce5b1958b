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

/** Options of `ApprovalGate.check`. */
export interface GateCheckOptions {
  signal: AbortSignal;
  /**
   * Called when the decision starts waiting for a person. The engine records the intents of a
   * tool wave's calls together once none is still being checked; a gate that waits for a person
   * without calling this holds the wave's other calls back until the person answers.
   */
  onAsking?: () => void;
}

/**
 * Decides whether a tool call may run. The engine asks it before every `execute`; a denial
 * becomes an error Observation, not an exception. `check` may wait for a human (calling
 * `onAsking` first) and must end promptly with the signal's reason when the signal aborts.
 */
export interface ApprovalGate {
  check(request: ApprovalRequest, options: GateCheckOptions): Promise<GateDecision>;
}
