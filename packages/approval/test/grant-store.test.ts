import { afterEach, describe, expect, it } from 'vitest';
import {
  FileGrantStore,
  MemoryGrantStore,
  grantKey,
  type Grant,
  type GrantStore,
} from '../src/index.js';
import { removeTempDirs, tempDir } from './fixtures.js';

afterEach(removeTempDirs);

function grant(overrides: Partial<Grant> = {}): Grant {
  const parts = {
    sessionId: overrides.sessionId ?? 'session-1',
    workDir: overrides.workDir ?? '/workspace',
    toolName: overrides.toolName ?? 'bash',
    digest: overrides.digest ?? 'digest-1',
  };
  return {
    ...parts,
    key: grantKey(parts),
    requestId: 'request-1',
    decision: 'allow_session',
    approvedAt: '2030-01-01T00:00:00.000Z',
    ...overrides,
  };
}

const stores: Array<[string, () => Promise<GrantStore>]> = [
  ['MemoryGrantStore', async () => new MemoryGrantStore()],
  ['FileGrantStore', async () => new FileGrantStore({ workDir: await tempDir() })],
];

describe.each(stores)('%s (APR-2)', (_name, makeStore) => {
  it('returns a grant put under its key, and nothing under another key', async () => {
    const store = await makeStore();
    const kept = grant();
    await store.put(kept);
    expect(await store.get(kept.key)).toEqual(kept);
    expect(await store.get(grantKey({ ...kept, digest: 'other' }))).toBeUndefined();
  });

  it('replaces a grant with the same key', async () => {
    const store = await makeStore();
    await store.put(grant({ requestId: 'first' }));
    await store.put(grant({ requestId: 'second' }));
    const all = await store.list();
    expect(all.map((each) => each.requestId)).toEqual(['second']);
  });

  it('removes an expired grant when it is looked up, and keeps a live one', async () => {
    const store = await makeStore();
    const expiring = grant({ digest: 'old', expiresAt: '2030-01-01T01:00:00.000Z' });
    const lasting = grant({ digest: 'new', expiresAt: '2030-01-02T00:00:00.000Z' });
    await store.put(expiring);
    await store.put(lasting);

    expect(await store.get(expiring.key, new Date('2030-01-01T00:59:59.999Z'))).toEqual(expiring);
    expect(await store.get(expiring.key, new Date('2030-01-01T01:00:00.000Z'))).toBeUndefined();
    expect((await store.list()).map((each) => each.digest)).toEqual(['new']);
    expect(await store.get(lasting.key, new Date('2030-01-01T01:00:00.000Z'))).toEqual(lasting);
  });

  it('treats an unreadable expiry date as expired', async () => {
    const store = await makeStore();
    const damaged = grant({ expiresAt: 'not a date' });
    await store.put(damaged);
    expect(await store.get(damaged.key)).toBeUndefined();
    expect(await store.list()).toEqual([]);
  });

  it('deletes a grant, and deleting a missing one is no error', async () => {
    const store = await makeStore();
    const kept = grant();
    await store.put(kept);
    await store.delete(kept.key);
    await store.delete(kept.key);
    expect(await store.get(kept.key)).toBeUndefined();
    expect(await store.list()).toEqual([]);
  });

  it('hands out copies: changing a returned grant changes nothing stored', async () => {
    const store = await makeStore();
    const kept = grant();
    await store.put(kept);
    const returned = await store.get(kept.key);
    if (returned === undefined) throw new Error('grant missing');
    returned.requestId = 'tampered';
    kept.requestId = 'tampered too';
    expect((await store.get(kept.key))?.requestId).toBe('request-1');
  });
});
