import { describe, expect, it } from 'vitest';
import { runOne, suiteCases } from './helpers.js';

const cases = await suiteCases();

describe('the scripted suite on the real engine', () => {
  it('has the seed\'s six cases, the issue\'s cases, 15+ real cases, and a canary for every scorer', () => {
    const ids = cases.map((evalCase) => evalCase.id);
    expect(cases.filter((evalCase) => evalCase.tags.includes('seed'))).toHaveLength(6);
    for (const id of [
      'task-completed', 'correct-tools', 'denied-write', 'cancel-pairing', 'token-budget',
      'parallel-wave', 'edit-two-matches', 'path-escape', 'crash-repaired', 'subagent-tokens',
      'retry-after-429', 'first-token-timeout',
      // REAL-7: the requests claw sends a model.
      'system-prompt-stable', 'system-prompt-stable-http', 'agents-md-nested', 'reasoning-stream-http',
      'cached-tokens-priced', 'cached-tokens-input-price',
      // CMP-7: compaction.
      'long-task-compacted', 'overflow-compacted', 'context-exhausted', 'summary-fails', 'resume-after-compaction',
    ]) {
      expect(ids).toContain(id);
    }
    expect(cases.filter((evalCase) => evalCase.canary === undefined).length).toBeGreaterThanOrEqual(15);
    const canaries = new Set(cases.map((evalCase) => evalCase.canary).filter((name) => name !== undefined));
    expect([...canaries].sort()).toEqual(['boundary', 'budget', 'compaction', 'pairing', 'reports', 'requests', 'script', 'state', 'trace', 'trajectory']);
  });

  it.each(cases.map((evalCase) => [evalCase.id, evalCase] as const))('%s passes', async (_id, evalCase) => {
    const result = await runOne(evalCase);
    expect(result.verdict, result.reason).toBe('pass');
    const sample = result.samples[0];
    // Every run is scored on its invariants too, and checks something the run did.
    expect(sample?.scores.some((score) => score.kind === 'invariant')).toBe(true);
    if (evalCase.canary === undefined) {
      expect(sample?.scores.some((score) => score.kind === 'positive' && score.pass)).toBe(true);
    } else {
      expect(sample?.scores.some((score) => score.scorer === evalCase.canary && !score.pass)).toBe(true);
    }
  });
});
