import { ApprovalError } from './errors.js';

/**
 * Workspace-relative path patterns (`DefaultPolicyOptions.allowFiles`): `/` between segments;
 * `*` stands for any characters within one segment (none included, dots included), `**` as a
 * whole segment for any number of segments (none included); every other character stands for
 * itself, compared exactly. A pattern names paths from the workspace root: `.env` is only the
 * root's, `**\/.env` is any. A leading `./` is ignored.
 */
export class FilePatterns {
  private readonly patterns: ReadonlyArray<readonly Matcher[]>;

  /** @throws ApprovalError `invalid_policy_options` for a pattern that can name no path. */
  constructor(patterns: readonly string[]) {
    this.patterns = patterns.map(compile);
  }

  /** True when a pattern covers `relative` (a workspace-relative path, `/` between segments). */
  matches(relative: string): boolean {
    const segments = relative.split('/');
    return this.patterns.some((pattern) => matchFrom(pattern, 0, segments, 0));
  }
}

/** One segment of a pattern: `**`, or a test of one path segment. */
type Matcher = '**' | RegExp;

function compile(pattern: unknown): Matcher[] {
  if (typeof pattern !== 'string') throw invalid(pattern, 'it is not text');
  const segments = pattern.replace(/^(?:\.\/)+/, '').split('/');
  if (pattern.startsWith('/')) throw invalid(pattern, 'it is absolute; give it from the workspace root');
  if (pattern.includes('\0')) throw invalid(pattern, 'it contains a NUL byte');
  for (const segment of segments) {
    if (segment === '' || segment === '.' || segment === '..') {
      throw invalid(pattern, 'it has an empty, "." or ".." segment');
    }
  }
  return segments.map((segment) => {
    if (segment === '**') return '**';
    const body = segment
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('[^/]*');
    return new RegExp(`^${body}$`);
  });
}

function matchFrom(
  pattern: readonly Matcher[],
  at: number,
  segments: readonly string[],
  from: number,
): boolean {
  if (at === pattern.length) return from === segments.length;
  const matcher = pattern[at];
  if (matcher === '**') {
    for (let next = from; next <= segments.length; next += 1) {
      if (matchFrom(pattern, at + 1, segments, next)) return true;
    }
    return false;
  }
  const segment = segments[from];
  if (matcher === undefined || segment === undefined || !matcher.test(segment)) return false;
  return matchFrom(pattern, at + 1, segments, from + 1);
}

function invalid(pattern: unknown, why: string): ApprovalError {
  return new ApprovalError(
    `the file pattern ${JSON.stringify(pattern)} cannot be used: ${why}. Give a path from the ` +
    'workspace root, with * for any characters within a folder or file name and ** for any ' +
    'number of folders (e.g. .env.local or **/.env.test).',
    { code: 'invalid_policy_options' },
  );
}
