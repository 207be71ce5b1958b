/** What a grant key is made of (APR-2). */
export interface GrantKeyParts {
  sessionId: string;
  /** The workspace root, as the gate saw it (absolute). */
  workDir: string;
  toolName: string;
  /** `argumentDigest` of the call's raw arguments. */
  digest: string;
}

/**
 * A session-wide permission for one exact tool call: the same session, workspace, tool and
 * arguments (by digest) run again without asking (APR-2, APR-4).
 */
export interface Grant extends GrantKeyParts {
  /** `grantKey` of the other fields; stores index grants by it. */
  key: string;
  /** The approval request the user answered (audit). */
  requestId: string;
  /** The user's answer (audit). Only session-wide answers leave a grant. */
  decision: 'allow_session';
  /** When the user approved, ISO 8601 (audit). */
  approvedAt: string;
  /** When the grant stops counting, ISO 8601; absent: never (until the store is cleared). */
  expiresAt?: string;
}

/**
 * The key of the grant for these parts: the four fields, in a form where no field's content can
 * run into the next one. Audit fields are never part of the key.
 */
export function grantKey(parts: GrantKeyParts): string {
  return JSON.stringify([parts.sessionId, parts.workDir, parts.toolName, parts.digest]);
}

/**
 * True when `grant` has expired at `now`. An `expiresAt` that is not a readable date counts as
 * expired, so a damaged grant never allows more than it should.
 */
export function isGrantExpired(grant: Grant, now: Date): boolean {
  if (grant.expiresAt === undefined) return false;
  const expiresAt = Date.parse(grant.expiresAt);
  return Number.isNaN(expiresAt) || expiresAt <= now.getTime();
}

/** Where session grants are kept. Implementations serialise their own writes. */
export interface GrantStore {
  /**
   * The live grant with this key. An expired grant (at `now`, default: the current time) is
   * removed and not returned.
   */
  get(key: string, now?: Date): Promise<Grant | undefined>;
  /** Adds the grant, replacing one with the same key. */
  put(grant: Grant): Promise<void>;
  /** Removes the grant with this key; nothing happens when there is none. */
  delete(key: string): Promise<void>;
  /** Every grant kept, expired ones included, in the order they were added. */
  list(): Promise<Grant[]>;
}
