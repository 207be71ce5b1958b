/**
 * What happened to one tool call at the gate (APR-4):
 * - `policy_allow` / `policy_deny`: the policy decided alone;
 * - `grant_reuse`: an earlier session grant allowed it;
 * - `mode_allow` / `mode_deny`: the approval mode (`--approval allow|deny`) decided;
 * - `allow_once` / `allow_session` / `deny`: the user answered.
 */
export type AuditDecision =
  | 'allow_once'
  | 'allow_session'
  | 'deny'
  | 'policy_deny'
  | 'policy_allow'
  | 'mode_allow'
  | 'mode_deny'
  | 'grant_reuse';

/** One line of the audit log. */
export interface AuditEntry {
  /** When the decision was made, ISO 8601. */
  time: string;
  requestId: string;
  sessionId: string;
  toolName: string;
  /** `argumentDigest` of the call's raw arguments. */
  digest: string;
  decision: AuditDecision;
  /** Why, in words: the policy's reason, or which grant was reused. */
  reason?: string;
}

/** Where the gate records its decisions. Append-only. */
export interface AuditLog {
  record(entry: AuditEntry): Promise<void>;
  /** Releases what the log holds open (a file); optional. */
  close?(): Promise<void>;
}

/** An `AuditLog` in memory, for tests. */
export class MemoryAuditLog implements AuditLog {
  private readonly recorded: AuditEntry[] = [];

  async record(entry: AuditEntry): Promise<void> {
    this.recorded.push({ ...entry });
  }

  /** The entries recorded so far, oldest first (a copy). */
  get entries(): AuditEntry[] {
    return this.recorded.map((entry) => ({ ...entry }));
  }
}
