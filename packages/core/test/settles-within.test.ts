import { afterEach, describe, expect, it, vi } from 'vitest';
import { settlesWithin } from '../src/index.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('settlesWithin', () => {
  it('is true for a promise that resolves or rejects in time, and clears its timer', async () => {
    vi.useFakeTimers();
    let resolve!: () => void;
    const answer = settlesWithin(new Promise<void>((done) => (resolve = done)), 1000);
    await vi.advanceTimersByTimeAsync(999);
    resolve();
    await expect(answer).resolves.toBe(true);
    expect(vi.getTimerCount()).toBe(0);
    await expect(settlesWithin(Promise.reject(new Error('failed')), 1000)).resolves.toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('is false once the time is up for a promise that has not settled, which goes on', async () => {
    vi.useFakeTimers();
    let resolve!: (value: string) => void;
    const work = new Promise<string>((done) => (resolve = done));
    const answer = settlesWithin(work, 1000);
    let answered = false;
    void answer.then(() => (answered = true));
    await vi.advanceTimersByTimeAsync(999);
    expect(answered).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(answer).resolves.toBe(false);
    resolve('later');
    await expect(work).resolves.toBe('later');
  });
});
