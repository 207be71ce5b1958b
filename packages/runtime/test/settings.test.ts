import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClawError } from '@claw/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commandEnvironment, defaultSettings, resolveSettings } from '../src/index.js';

describe('resolveSettings (flag > environment > config file > default)', () => {
  let workDir: string;
  beforeEach(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'claw-settings-'));
  });
  afterEach(async () => {
    await rm(workDir, { recursive: true, force: true });
  });

  async function config(value: unknown) {
    await mkdir(join(workDir, '.claw'), { recursive: true });
    await writeFile(join(workDir, '.claw/config.json'), typeof value === 'string' ? value : JSON.stringify(value));
  }

  it('uses the defaults when nothing is set', async () => {
    const settings = await resolveSettings({ workDir });
    expect(settings).toMatchObject({
      ...defaultSettings,
      apiKey: undefined,
      baseUrl: undefined,
      approval: 'deny',
    });
    expect(settings.maxSessionTokens).toBe(200_000);
    expect(settings.toolTimeBudgetMs).toBe(120_000);
  });

  it('orders the sources: flag > environment > file > default', async () => {
    await config({ model: 'from-file', baseUrl: 'http://127.0.0.1:1/v1', maxTurns: 7, approval: 'allow', retries: 5 });
    const env = { OPENAI_MODEL: 'from-env', OPENAI_API_KEY: 'sk-env', OPENAI_BASE_URL: '' };
    const fromFileAndEnv = await resolveSettings({ workDir, env });
    expect(fromFileAndEnv).toMatchObject({
      model: 'from-env',
      apiKey: 'sk-env',
      baseUrl: 'http://127.0.0.1:1/v1', // an empty variable does not count
      maxTurns: 7,
      approval: 'allow',
      retries: 5,
    });
    const withFlags = await resolveSettings({ workDir, env, overrides: { model: 'from-flag', maxTurns: 3, approval: 'deny' } });
    expect(withFlags).toMatchObject({ model: 'from-flag', maxTurns: 3, approval: 'deny', retries: 5 });
  });

  it('takes the default approval from the caller (a TTY asks) when no flag or file sets it', async () => {
    expect((await resolveSettings({ workDir, defaultApproval: 'ask' })).approval).toBe('ask');
  });

  it('names the file and the key of a bad config', async () => {
    await config({ maxTurns: 'many', colour: true });
    const error = await resolveSettings({ workDir }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ClawError);
    expect((error as ClawError).code).toBe('config_invalid');
    expect((error as Error).message).toContain(join(workDir, '.claw/config.json'));
    expect((error as Error).message).toContain('"maxTurns"');
    expect((error as Error).message).toContain('unknown key "colour"');
  });

  it('says when the config is not JSON', async () => {
    await config('{ "model": ');
    await expect(resolveSettings({ workDir })).rejects.toThrow(/not valid JSON/);
  });
});

describe('commandEnvironment', () => {
  it('keeps only the allow-listed variables: never a secret', () => {
    expect(commandEnvironment({ PATH: '/bin', HOME: '/home/u', OPENAI_API_KEY: 'sk-x', AWS_SECRET_ACCESS_KEY: 'y', LANG: 'C' })).toEqual({
      PATH: '/bin',
      HOME: '/home/u',
      LANG: 'C',
    });
  });
});
