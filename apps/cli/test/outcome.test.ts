import { ClawError } from '@claw/core';
import type { RunResult } from '@claw/engine';
import { describe, expect, it } from 'vitest';
import { endLines } from '../src/outcome.js';
import { createStyle } from '../src/style.js';

const style = createStyle(false);
const result = (overrides: Partial<RunResult> = {}): RunResult => ({
  status: 'completed',
  finalText: 'done',
  turns: 3,
  usage: { promptTokens: 12_000, completionTokens: 345, totalTokens: 12_345 },
  cost: { usd: 0.0042, unpricedCalls: 0 },
  toolWallMs: 100,
  subagents: 0,
  ...overrides,
});
const figures = { toolCalls: 2, failedToolCalls: 1, elapsedMs: 14_230 };

describe('how the end of a task is told', () => {
  it('a completed task: what it did, in one line', () => {
    expect(endLines(result(), figures, style)).toEqual([
      '3 model calls · 2 tool calls (1 failed or denied) · 12,345 tokens · cost $0.0042 · 14.2 s',
    ]);
    const one = { toolCalls: 1, failedToolCalls: 0, elapsedMs: 800 };
    expect(endLines(result({ turns: 1, cost: { usd: 1.5, unpricedCalls: 0 } }), one, style))
      .toEqual(['1 model call · 1 tool call · 12,345 tokens · cost $1.50 · 0.8 s']);
    expect(endLines(result({ cost: { usd: 0, unpricedCalls: 3 } }), figures, style)[0]).toContain('· cost unpriced ·');
  });

  it('a task that failed or was canceled after some work: what it did, then how it ended (the last word)', () => {
    const failed = result({ status: 'failed', error: new ClawError('the model API returned HTTP 500', { code: 'model_error' }) });
    expect(endLines(failed, figures, style)).toEqual([
      '3 model calls · 2 tool calls (1 failed or denied) · 12,345 tokens · cost $0.0042 · 14.2 s',
      '✗ failed: the model API returned HTTP 500',
    ]);
    expect(endLines(result({ status: 'canceled' }), figures, style).at(-1)).toBe('✗ canceled');
  });

  it('a task that failed before any work is told by its error alone; without figures, no summary', () => {
    const nothing = result({
      status: 'failed',
      turns: 1,
      usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      error: new ClawError('could not reach the model API', { code: 'model_unreachable' }),
    });
    expect(endLines(nothing, { toolCalls: 0, failedToolCalls: 0, elapsedMs: 300 }, style)).toEqual([
      '✗ failed: could not reach the model API',
    ]);
    expect(endLines(result(), undefined, style)).toEqual([]);
  });
});
