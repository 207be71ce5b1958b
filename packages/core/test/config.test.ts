import { describe, expect, it } from 'vitest';
import { ClawError, parseClawConfig, readOptionalConfig } from '../src/index.js';

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

describe('readOptionalConfig', () => {
  const fail = (message: string, cause: unknown) => new ClawError(message, { code: 'bad_config', cause });
  const failing = (code: string) => () => Promise.reject(Object.assign(new Error(`${code}: no`), { code }));

  it('gives the text, or undefined when there is no such file', async () => {
    expect(await readOptionalConfig('a.json', { read: () => Promise.resolve('{}'), fail })).toBe('{}');
    expect(await readOptionalConfig('a.json', { read: failing('ENOENT'), fail })).toBeUndefined();
  });

  it('fails with the kind\'s error naming the file when it cannot be read, and with the reason when aborted', async () => {
    await expect(readOptionalConfig('/w/.claw/a.json', { read: failing('EACCES'), fail }))
      .rejects.toMatchObject({ code: 'bad_config', message: 'cannot read /w/.claw/a.json: EACCES: no' });
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(readOptionalConfig('a.json', { read: failing('ENOENT'), signal: controller.signal, fail }))
      .rejects.toThrow('stop');
  });
});
