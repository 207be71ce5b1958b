import type { SessionSnapshot } from '../session-log.js';

/**
 * The snapshot of a session with nothing in it yet (fixed times, so that what a backend gives
 * back can be compared whole), with `overrides`.
 */
export function emptySnapshot(
  id: string,
  overrides: Partial<SessionSnapshot> = {},
): SessionSnapshot {
  return {
    id,
    workDir: '/conformance/workspace',
    createdAt: '2030-01-01T00:00:00.000Z',
    updatedAt: '2030-01-01T00:00:00.000Z',
    seq: 0,
    eventSeq: 0,
    history: [],
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    cost: { usd: 0, unpricedCalls: 0 },
    journal: { active: false, calls: [] },
    ...overrides,
  };
}
