import { describe, expect, it } from 'vitest';
import { SharedResources } from '../src/index.js';

/** A resource that records what happened to it. */
function tracked(options: { keep?: boolean; failMake?: (key: string) => boolean; failDispose?: boolean } = {}) {
  const log: string[] = [];
  let made = 0;
  const shared = new SharedResources<string, { key: string; n: number }>({
    make: async (key) => {
      await Promise.resolve();
      if (options.failMake?.(key) === true) {
        log.push(`make ${key} failed`);
        throw new Error(`cannot make ${key}`);
      }
      made += 1;
      log.push(`make ${key}#${made}`);
      return { key, n: made };
    },
    dispose: async (value, key) => {
      await Promise.resolve();
      log.push(`dispose ${key}#${value.n}`);
      if (options.failDispose === true) throw new Error(`cannot dispose ${key}`);
    },
    ...(options.keep === undefined ? {} : { keep: options.keep }),
  });
  return { shared, log };
}

describe('SharedResources (LIFE-1)', () => {
  it('makes a value once for concurrent users and lets it go after the last release', async () => {
    const { shared, log } = tracked();
    const [a, b] = await Promise.all([shared.acquire('w'), shared.acquire('w')]);
    expect(a.value).toBe(b.value);
    expect(shared.size).toBe(1);
    await a.release();
    expect(log).toEqual(['make w#1']);
    await a.release(); // a second release of one lease does nothing
    expect(log).toEqual(['make w#1']);
    await b.release();
    expect(log).toEqual(['make w#1', 'dispose w#1']);
    expect(shared.size).toBe(0);
    expect(shared.peek('w')).toBeUndefined();
  });

  it('keeps values apart by key', async () => {
    const { shared, log } = tracked();
    const a = await shared.acquire('a');
    const b = await shared.acquire('b');
    expect(a.value).not.toBe(b.value);
    await a.release();
    expect(log).toEqual(['make a#1', 'make b#2', 'dispose a#1']);
    expect(await shared.peek('b')).toBe(b.value);
  });

  it('a value that fails to be made is not kept: the users get the error, the next acquire tries again', async () => {
    let fail = true;
    const { shared, log } = tracked({ failMake: () => fail });
    await expect(Promise.all([shared.acquire('w'), shared.acquire('w')])).rejects.toThrow('cannot make w');
    expect(shared.size).toBe(0);
    fail = false;
    const lease = await shared.acquire('w');
    expect(lease.value.n).toBe(1);
    await lease.release();
    expect(log).toEqual(['make w failed', 'make w#1', 'dispose w#1']);
  });

  it('an acquire while the value is let go waits for it, then gets a new value: never two at once', async () => {
    let finishDispose!: () => void;
    const log: string[] = [];
    let made = 0;
    const shared = new SharedResources<string, number>({
      make: (key) => {
        made += 1;
        log.push(`make ${key}#${made}`);
        return made;
      },
      dispose: (value) => new Promise<void>((resolve) => {
        log.push(`dispose #${value} started`);
        finishDispose = () => {
          log.push(`dispose #${value} done`);
          resolve();
        };
      }),
    });
    const first = await shared.acquire('w');
    const releasing = first.release();
    await Promise.resolve();
    const second = shared.acquire('w');
    await new Promise((resolve) => setImmediate(resolve));
    expect(log).toEqual(['make w#1', 'dispose #1 started']);
    finishDispose();
    await releasing;
    const lease = await second;
    expect(lease.value).toBe(2);
    expect(log).toEqual(['make w#1', 'dispose #1 started', 'dispose #1 done', 'make w#2']);
  });

  it('the last release rejects with the failure of dispose, and the value is gone anyway', async () => {
    const { shared } = tracked({ failDispose: true });
    const lease = await shared.acquire('w');
    await expect(lease.release()).rejects.toThrow('cannot dispose w');
    expect(shared.size).toBe(0);
    expect((await shared.acquire('w')).value.n).toBe(2);
  });

  it('keep: values stay after their last release, until clear()', async () => {
    const { shared, log } = tracked({ keep: true });
    const lease = await shared.acquire('w');
    await lease.release();
    expect(shared.size).toBe(1);
    expect((await shared.acquire('w')).value).toBe(lease.value);
    expect(shared.values()).toHaveLength(1);
    await shared.clear();
    expect(log).toEqual(['make w#1', 'dispose w#1']);
    expect(shared.size).toBe(0);
  });

  it('clear() lets every value go, in use or not; the leases still out then do nothing', async () => {
    const { shared, log } = tracked();
    const a = await shared.acquire('a');
    await shared.acquire('b');
    await shared.clear();
    expect(log.filter((line) => line.startsWith('dispose')).sort()).toEqual(['dispose a#1', 'dispose b#2']);
    await a.release();
    expect(log.filter((line) => line.startsWith('dispose'))).toHaveLength(2);
  });

  it('an acquire may bring its own maker, used only when the key has no value', async () => {
    const shared = new SharedResources<string, string>({});
    await expect(shared.acquire('w')).rejects.toThrow('no maker given');
    const first = await shared.acquire('w', (key) => `${key} as the first user knows it`);
    const second = await shared.acquire('w', () => 'never made');
    expect(second.value).toBe('w as the first user knows it');
    expect(shared.entries()).toHaveLength(1);
    await first.release();
    await second.release();
    expect(shared.size).toBe(0);
  });

  it('forget() hands the value over without dispose; its leases then do nothing, the next acquire makes anew', async () => {
    const { shared, log } = tracked();
    const lease = await shared.acquire('w');
    const taken = shared.forget('w');
    expect(await taken).toBe(lease.value);
    expect(shared.size).toBe(0);
    expect(shared.forget('w')).toBeUndefined();
    await lease.release();
    expect((await shared.acquire('w')).value.n).toBe(2);
    expect(log).toEqual(['make w#1', 'make w#2']);
  });

  it('settled() waits for a dispose in progress; forget() does not take a value being let go', async () => {
    let finish!: () => void;
    const shared = new SharedResources<string, number>({
      make: () => 1,
      dispose: () => new Promise<void>((resolve) => {
        finish = resolve;
      }),
    });
    const lease = await shared.acquire('w');
    const releasing = lease.release();
    await Promise.resolve();
    expect(shared.forget('w')).toBeUndefined();
    expect(shared.entries()).toEqual([]);
    let settled = false;
    const waiting = shared.settled('w').then(() => {
      settled = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    finish();
    await Promise.all([releasing, waiting]);
    expect(settled).toBe(true);
    await shared.settled('nothing');
  });
});
