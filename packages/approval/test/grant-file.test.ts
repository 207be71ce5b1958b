import { describe, expect, it } from 'vitest';
import { grantKey, readGrant, type Grant } from '../src/index.js';

const parts = { sessionId: 's1', workDir: '/work/space', toolName: 'bash', digest: 'd1' };
const grant: Grant = {
  key: grantKey(parts),
  ...parts,
  requestId: 'r1',
  decision: 'allow_session',
  approvedAt: '2030-01-01T00:00:00.000Z',
};

describe('readGrant: a stored grant, checked (APR-2)', () => {
  it('gives only the fields of a grant', () => {
    expect(readGrant({ ...grant, extra: 'dropped' })).toEqual(grant);
    const expiring = { ...grant, expiresAt: '2030-01-02T00:00:00.000Z' };
    expect(readGrant(expiring)).toEqual(expiring);
  });

  it.each([
    ['a list', [grant], 'is not a JSON object'],
    ['no requestId', { ...grant, requestId: undefined }, 'has no text field "requestId"'],
    ['a numeric session', { ...grant, sessionId: 7 }, 'has no text field "sessionId"'],
    ['another decision', { ...grant, decision: 'allow_once' }, 'has a decision other than "allow_session"'],
    ['an expiry that is not text', { ...grant, expiresAt: 1 }, 'has an "expiresAt" that is not text'],
    ['a key of other fields', { ...grant, toolName: 'write_file' }, 'has a key that does not match its other fields'],
  ])('says what is wrong with %s', (_what, entry, problem) => {
    expect(readGrant(entry)).toBe(problem);
  });
});
