import { describe, expect, it, vi } from 'vitest';
import { AbortRace } from '../src/index.js';

const never = (): Promise<never> => new Promise<never>(() => undefined);

describe('AbortRace', () => {
  it('settles each race like its promise, with one listener on the signal for all of them', async () => {
    const controller = new AbortController();
    const added = vi.spyOn(controller.signal, 'addEventListener');
    const races = new AbortRace(controller.signal);
    expect(await races.race(Promise.resolve(1))).toBe(1);
    await expect(races.race(Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect(await races.race(Promise.resolve('three'))).toBe('three');
    expect(added).toHaveBeenCalledTimes(1);
  });

  it('rejects every race under way with the reason as soon as the signal aborts, and later ones at once', async () => {
    const controller = new AbortController();
    const races = new AbortRace(controller.signal);
    const first = races.race(never());
    const second = races.race(never());
    const reason = new Error('canceled');
    controller.abort(reason);
    await expect(first).rejects.toBe(reason);
    await expect(second).rejects.toBe(reason);
    await expect(races.race(Promise.resolve(1))).rejects.toBe(reason);
  });

  it('lets go of each race once it settles: a long stream does not pile up what an abort would reject', async () => {
    const controller = new AbortController();
    const races = new AbortRace(controller.signal);
    const held = () => (races as unknown as { racing: Set<unknown> }).racing.size;
    for (let chunk = 0; chunk < 100; chunk += 1) await races.race(Promise.resolve(chunk));
    await races.race(Promise.reject(new Error('no'))).catch(() => undefined);
    expect(held()).toBe(0);
    const pending = races.race(never());
    expect(held()).toBe(1);
    controller.abort(new Error('canceled'));
    await expect(pending).rejects.toThrow('canceled');
    expect(held()).toBe(0);
  });

  it('takes its listener off on dispose', () => {
    const controller = new AbortController();
    const removed = vi.spyOn(controller.signal, 'removeEventListener');
    new AbortRace(controller.signal).dispose();
    expect(removed).toHaveBeenCalledTimes(1);
  });
});
