import { describe, expect, it } from 'vitest';
import { askOnce } from '../src/index.js';

describe('askOnce', () => {
  it('calls a function only when first asked, and once', async () => {
    let calls = 0;
    const ask = askOnce(async () => {
      calls += 1;
      return 'probed';
    });
    expect(calls).toBe(0);
    const [first, second] = await Promise.all([ask(), ask()]);
    expect([first, second, calls]).toEqual(['probed', 'probed', 1]);
    expect(ask()).toBe(ask());
  });

  it('takes a value or a promise as it is', async () => {
    expect(await askOnce(false)()).toBe(false);
    expect(await askOnce(Promise.resolve(3))()).toBe(3);
  });

  it('gives a failure to whoever asks, never as an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const listener = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', listener);
    try {
      const ask = askOnce(Promise.reject(new Error('no bubblewrap')));
      await new Promise((resolve) => setImmediate(resolve));
      await expect(ask()).rejects.toThrow('no bubblewrap');
      const lazy = askOnce(() => Promise.reject(new Error('probe failed')));
      await expect(lazy()).rejects.toThrow('probe failed');
      await expect(lazy()).rejects.toThrow('probe failed');
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', listener);
    }
  });
});
