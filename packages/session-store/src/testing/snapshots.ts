import type { SessionSnapshot } from '../session-log.js';
import { newSessionSnapshot } from '../session-state.js';

/**
 * The snapshot of a session with nothing in it yet (fixed times, so that what a backend gives
 * back can be compared whole), with `overrides`.
 */
export function emptySnapshot(
  id: string,
  overrides: Partial<SessionSnapshot> = {},
): SessionSnapshot {
  return {
    ...newSessionSnapshot({ id, workDir: '/conformance/workspace', now: '2030-01-01T00:00:00.000Z' }),
    ...overrides,
  };
}
