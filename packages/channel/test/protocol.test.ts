import { describe, expect, it } from 'vitest';
import { describeCost, describeTaskSummary, describeToolProgress } from '../src/protocol.js';

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

  it('describes what a task did in one line, counting in words and thousands', () => {
    const summary = {
      modelCalls: 3, toolCalls: 2, failedToolCalls: 1, tokens: 12_345,
      costUsd: 0.0042, unpricedCalls: 0, elapsedMs: 14_240,
    };
    expect(describeTaskSummary(summary))
      .toBe('3 model calls · 2 tool calls (1 failed or denied) · 12,345 tokens · cost $0.0042 · 14.2 s');
    const single = {
      modelCalls: 1, toolCalls: 1, failedToolCalls: 0, tokens: 1, costUsd: 0, unpricedCalls: 1, elapsedMs: 50,
    };
    expect(describeTaskSummary(single)).toBe('1 model call · 1 tool call · 1 token · cost unpriced · 0.1 s');
  });
});
