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
      modelCalls: 3, summaryCalls: 0, compactions: 0, toolCalls: 2, failedToolCalls: 1, tokens: 12_345, cachedTokens: 0,
      costUsd: 0.0042, unpricedCalls: 0, elapsedMs: 14_240,
    };
    expect(describeTaskSummary(summary))
      .toBe('3 model calls · 2 tool calls (1 failed or denied) · 12,345 tokens · cost $0.0042 · 14.2 s');
    const single = {
      modelCalls: 1, summaryCalls: 0, compactions: 0, toolCalls: 1, failedToolCalls: 0, tokens: 1, cachedTokens: 0,
      costUsd: 0,
      unpricedCalls: 1, elapsedMs: 50,
    };
    expect(describeTaskSummary(single)).toBe('1 model call · 1 tool call · 1 token · cost unpriced · 0.1 s');
  });

  it('names the cached part of the tokens when the server read some from its cache (REAL-5)', () => {
    const cached = {
      modelCalls: 4, summaryCalls: 0, compactions: 0, toolCalls: 3, failedToolCalls: 0, tokens: 18_204,
      cachedTokens: 12_800,
      costUsd: 0.0083, unpricedCalls: 0, elapsedMs: 9_000,
    };
    expect(describeTaskSummary(cached))
      .toBe('4 model calls · 3 tool calls · 18,204 tokens (12,800 cached) · cost $0.0083 · 9.0 s');
  });

  it('names the summary calls among the model calls, and the compactions (CMP-6)', () => {
    const compacted = {
      modelCalls: 13, summaryCalls: 1, compactions: 2, toolCalls: 11, failedToolCalls: 0, tokens: 90_000,
      cachedTokens: 0, costUsd: 0.01, unpricedCalls: 0, elapsedMs: 61_000,
    };
    expect(describeTaskSummary(compacted))
      .toBe('13 model calls (1 to summarise) · 11 tool calls · 90,000 tokens · context compacted 2 times · cost $0.01 · 61.0 s');
    expect(describeTaskSummary({ ...compacted, summaryCalls: 0, compactions: 1 }))
      .toBe('13 model calls · 11 tool calls · 90,000 tokens · context compacted once · cost $0.01 · 61.0 s');
  });
});
