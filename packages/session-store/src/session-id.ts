import { SessionStoreError } from './errors.js';

/** The longest session id accepted, in UTF-8 bytes (it becomes a file name). */
export const maxSessionIdBytes = 128;

function hasControlCharacter(text: string): boolean {
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** Why `id` cannot be a session id, or `undefined` when it can. */
function problemWith(id: string): string | undefined {
  if (id.length === 0) return 'it is empty';
  if (Buffer.byteLength(id, 'utf8') > maxSessionIdBytes) {
    return `it is longer than ${maxSessionIdBytes} bytes`;
  }
  if (id.includes('/') || id.includes('\\')) return 'it contains a path separator';
  if (id.includes('..')) return 'it contains ".."';
  if (hasControlCharacter(id)) return 'it contains a control character';
  return undefined;
}

/** True when `id` can name a session (see {@link assertSessionId}). */
export function isValidSessionId(id: string): boolean {
  return problemWith(id) === undefined;
}

/**
 * Checks that `id` can name a session file (SES-2): not empty, at most
 * {@link maxSessionIdBytes} UTF-8 bytes, no `/`, `\`, `..`, NUL or other control characters.
 *
 * @throws SessionStoreError `invalid_session_id` naming the problem.
 */
export function assertSessionId(id: string): void {
  const problem = problemWith(id);
  if (problem === undefined) return;
  throw new SessionStoreError(
    `Invalid session id ${JSON.stringify(id)}: ${problem}. Use letters, digits, "-", "_" or ".".`,
    { code: 'invalid_session_id' },
  );
}

/**
 * Checks the workDir a session is opened with.
 *
 * @throws SessionStoreError `invalid_work_dir` when it is empty.
 */
export function assertWorkDir(workDir: string): void {
  if (workDir.trim() !== '') return;
  throw new SessionStoreError(
    'A session needs the workspace folder it works in: workDir is empty.',
    { code: 'invalid_work_dir' },
  );
}
