import type { ApprovalRequest } from '@claw/core';

/**
 * What a policy says about one tool call (APR-1): run it, ask the user, or refuse it.
 * `requireHuman` on an ask means only a person may allow it: an approval mode that allows
 * everything (`--approval allow`) still asks.
 */
export type PolicyVerdict =
  | { action: 'allow' }
  | { action: 'ask'; reason: string; requireHuman?: boolean }
  | { action: 'deny'; reason: string };

/** Maps a tool call, from its risk and arguments, to allow / ask / deny (APR-1). */
export interface Policy {
  evaluate(request: ApprovalRequest): Promise<PolicyVerdict>;
}
