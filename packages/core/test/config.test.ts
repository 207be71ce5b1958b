import { describe, expect, it } from 'vitest';
import { ClawError, parseClawConfig } from '../src/index.js';

describe('parseClawConfig', () => {
  it('accepts a partial config', () => {
    expect(parseClawConfig({ model: 'gpt-4.1-mini', maxTurns: 5, sandbox: { isolation: 'required' } }, 'config.json')).toEqual({
      model: 'gpt-4.1-mini',
      maxTurns: 5,
      sandbox: { isolation: 'required' },
    });
    expect(() => parseClawConfig({ sandbox: { isolation: 'maybe' } }, 'c.json')).toThrow(/"sandbox.isolation"/);
  });

  it('names the file and every bad or unknown key', () => {
    let caught: unknown;
    try {
      parseClawConfig({ maxTurns: 0, approval: 'sometimes', modle: 'x', prices: { m: { inputPerMillion: -1, outputPerMillion: 1 } } }, '/ws/.claw/config.json');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ClawError);
    const error = caught as ClawError;
    expect(error.code).toBe('config_invalid');
    expect(error.message).toContain('/ws/.claw/config.json');
    expect(error.message).toContain('"maxTurns"');
    expect(error.message).toContain('"approval"');
    expect(error.message).toContain('unknown key "modle"');
    expect(error.message).toContain('"prices.m.inputPerMillion"');
  });
});
