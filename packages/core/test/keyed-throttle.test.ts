import { describe, expect, it } from 'vitest';
import { KeyedThrottle } from '../src/index.js';

describe('KeyedThrottle', () => {
  it('lets each key through once every everyMs, keys apart; forgets all at maxKeys, or when cleared', () => {
    const throttle = new KeyedThrottle(1000, 3);
    expect(throttle.allow('a', 0)).toBe(true);
    expect(throttle.allow('a', 999)).toBe(false);
    expect(throttle.allow('b', 999)).toBe(true);
    expect(throttle.allow('a', 1000)).toBe(true);
    expect(throttle.allow('c', 1001)).toBe(true);
    // Three held: the next new key makes room by forgetting them all.
    expect(throttle.allow('d', 1002)).toBe(true);
    expect(throttle.allow('a', 1003)).toBe(true);
    throttle.clear();
    expect(throttle.allow('d', 1004)).toBe(true);
  });
});
