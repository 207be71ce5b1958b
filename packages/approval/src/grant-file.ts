import { grantKey, type Grant } from './grant.js';
import { GrantStoreError } from './errors.js';

/** The format version of `.claw/grants.json` this package reads and writes. */
export const grantFileVersion = 1;

interface GrantFile {
  version: typeof grantFileVersion;
  grants: Grant[];
}

/** The text of a grant file holding `grants` in their order: indented JSON and a newline. */
export function serializeGrantFile(grants: Iterable<Grant>): string {
  const content: GrantFile = { version: grantFileVersion, grants: [...grants].map(plainGrant) };
  return `${JSON.stringify(content, null, 2)}\n`;
}

/**
 * The grants in the text of a grant file, by key. Blank text is a file with no grants.
 *
 * @throws {GrantStoreError} `grant_store_corrupt` naming `file` when the text is not a grant file
 *   of this version.
 */
export function parseGrantFile(text: string, file: string): Map<string, Grant> {
  const grants = new Map<string, Grant>();
  if (text.trim() === '') return grants;
  let content: unknown;
  try {
    content = JSON.parse(text);
  } catch (error) {
    throw corrupt(file, `it is not valid JSON (${(error as Error).message})`, error);
  }
  if (!isRecord(content)) throw corrupt(file, 'it does not hold a JSON object');
  if (content.version !== grantFileVersion) {
    throw corrupt(
      file,
      `its version is ${JSON.stringify(content.version) ?? 'missing'}, and this claw reads ` +
      `version ${grantFileVersion}`,
    );
  }
  if (!Array.isArray(content.grants)) throw corrupt(file, '"grants" is not a list');
  for (const [index, entry] of (content.grants as unknown[]).entries()) {
    const grant = readGrant(entry);
    if (typeof grant === 'string') throw corrupt(file, `grant ${index} ${grant}`);
    grants.set(grant.key, grant);
  }
  return grants;
}

const textFields = [
  'key',
  'sessionId',
  'workDir',
  'toolName',
  'digest',
  'requestId',
  'approvedAt',
] as const;

/**
 * The grant in `entry` (only a grant's fields, in a fixed order), or what is wrong with it, as
 * the end of a sentence that names it (e.g. `has no text field "requestId"`); its `key` must be
 * `grantKey` of its other fields. Every store that reads grants back from JSON checks them here.
 */
export function readGrant(entry: unknown): Grant | string {
  if (!isRecord(entry)) return 'is not a JSON object';
  for (const field of textFields) {
    if (typeof entry[field] !== 'string') return `has no text field "${field}"`;
  }
  if (entry.decision !== 'allow_session') return 'has a decision other than "allow_session"';
  if (entry.expiresAt !== undefined && typeof entry.expiresAt !== 'string') {
    return 'has an "expiresAt" that is not text';
  }
  const grant = plainGrant(entry as unknown as Grant);
  if (grant.key !== grantKey(grant)) return 'has a key that does not match its other fields';
  return grant;
}

/** Only the fields of a grant, in a fixed order. */
function plainGrant(grant: Grant): Grant {
  return {
    key: grant.key,
    sessionId: grant.sessionId,
    workDir: grant.workDir,
    toolName: grant.toolName,
    digest: grant.digest,
    requestId: grant.requestId,
    decision: grant.decision,
    approvedAt: grant.approvedAt,
    ...(grant.expiresAt === undefined ? {} : { expiresAt: grant.expiresAt }),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function corrupt(file: string, detail: string, cause?: unknown): GrantStoreError {
  return new GrantStoreError(
    `The grant file ${file} is damaged: ${detail}. claw did not change it. Repair the file, or ` +
    'move it away to start again with no session grants.',
    { code: 'grant_store_corrupt', file, cause },
  );
}
