import { describe, expect, it } from 'vitest';
import { describeCost, describeToolProgress } from '../src/protocol.js';

describe('the wording every client shares', () => {
  it('describes progress with and without a message or a total', () => {
    expect(describeToolProgress({ progress: 30, total: 100, message: 'Downloading' })).toBe('Downloading (30 of 100)');
    expect(describeToolProgress({ progress: 30, message: ' Downloading ' })).toBe('Downloading');
    expect(describeToolProgress({ progress: 30, total: 100 })).toBe('30 of 100');
    expect(describeToolProgress({ progress: 30, message: '' })).toBe('30');
  });

  it('describes money: cents, fractions of a cent, and calls without a price', () => {
    expect(describeCost(1.25, 0)).toBe('$1.25');
    expect(describeCost(0.0042, 0)).toBe('$0.0042');
    expect(describeCost(0, 0)).toBe('$0.00');
    expect(describeCost(0, 3)).toBe('unpriced');
    expect(describeCost(0.12, 2)).toBe('$0.12 + 2 unpriced');
  });
});
