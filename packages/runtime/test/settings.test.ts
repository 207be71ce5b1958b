import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClawError } from '@claw/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commandEnvironment, defaultSettings, resolveSettings, trustWorkspace } from '../src/index.js';

describe('resolveSettings (flag > environment > config file > default)', () => {
  let workDir: string;
  let configHome: string;
  beforeEach(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'claw-settings-'));
    configHome = await mkdtemp(join(tmpdir(), 'claw-settings-home-'));
  });
  afterEach(async () => {
    await rm(workDir, { recursive: true, force: true });
    await rm(configHome, { recursive: true, force: true });
  });

  async function config(value: unknown) {
    await mkdir(join(workDir, '.claw'), { recursive: true });
    await writeFile(join(workDir, '.claw/config.json'), typeof value === 'string' ? value : JSON.stringify(value));
  }

  /** An environment whose user claw folder (and record of trusted workspaces) is a temporary one. */
  const userEnv = (extra: Record<string, string> = {}) => ({ XDG_CONFIG_HOME: configHome, ...extra });

  /** Writes the workspace's config.json and trusts it as written (TRUST-2), as `claw trust` does. */
  async function trustedConfig(value: unknown) {
    await config(value);
    await trustWorkspace(workDir, { env: userEnv() });
  }

  it('uses the defaults when nothing is set', async () => {
    const settings = await resolveSettings({ workDir });
    expect(settings).toMatchObject({
      ...defaultSettings,
      // The default model's own window, from the table of well-known models (CMP-1).
      contextWindowTokens: 1_047_576,
      apiKey: undefined,
      baseUrl: undefined,
      approval: 'deny',
    });
    // Defaults for real tasks (REAL-3): no session token or tool time budget, 200 turns, an
    // idle limit on streams instead of a whole-call one, 2 minutes for the first token.
    expect(settings).toMatchObject({
      maxTurns: 200,
      maxSessionTokens: 0,
      toolTimeBudgetMs: 0,
      callTimeoutMs: 0,
      firstTokenTimeoutMs: 120_000,
      streamIdleTimeoutMs: 120_000,
    });
    expect(settings.systemPrompt).toBeUndefined();
    expect(settings.appendSystemPrompt).toBeUndefined();
  });

  it('takes the context window from the flag, the file, the model\'s known window, else 128k (CMP-1)', async () => {
    expect((await resolveSettings({ workDir, env: { OPENAI_MODEL: 'gpt-4o-2024-08-06' } })).contextWindowTokens).toBe(128_000);
    expect((await resolveSettings({ workDir, env: { OPENAI_MODEL: 'qwen2.5-coder:7b' } })).contextWindowTokens).toBe(32_768);
    expect((await resolveSettings({ workDir, env: { OPENAI_MODEL: 'my-local-model' } })).contextWindowTokens).toBe(128_000);
    await config({ contextWindowTokens: 64_000, compactAtRatio: 0.6 });
    expect(await resolveSettings({ workDir, env: { OPENAI_MODEL: 'gpt-4o' } }))
      .toMatchObject({ contextWindowTokens: 64_000, compactAtRatio: 0.6 });
    const fromFlag = await resolveSettings({ workDir, overrides: { contextWindowTokens: 16_000 } });
    expect(fromFlag.contextWindowTokens).toBe(16_000);
    await config({ compactAtRatio: 2 });
    expect(await resolveSettings({ workDir }).catch((error: unknown) => (error as Error).message)).toContain('"compactAtRatio"');
  });

  it('reads the system prompt file: the flag\'s relative to cwd, the config file\'s to the workspace (REAL-1)', async () => {
    await writeFile(join(workDir, 'mine.md'), 'You are my agent.\n');
    await trustedConfig({ systemPromptFile: 'mine.md', appendSystemPrompt: 'Answer in French.' });
    const fromFile = await resolveSettings({ workDir, env: userEnv() });
    expect(fromFile).toMatchObject({
      systemPrompt: 'You are my agent.\n',
      systemPromptFile: join(workDir, 'mine.md'),
      appendSystemPrompt: 'Answer in French.',
    });
    const elsewhere = await mkdtemp(join(tmpdir(), 'claw-settings-cwd-'));
    try {
      await writeFile(join(elsewhere, 'flag.md'), 'From the flag.');
      const fromFlag = await resolveSettings({
        workDir,
        cwd: elsewhere,
        overrides: { systemPromptFile: 'flag.md', appendSystemPrompt: 'Be brief.' },
      });
      expect(fromFlag).toMatchObject({
        systemPrompt: 'From the flag.',
        systemPromptFile: join(elsewhere, 'flag.md'),
        appendSystemPrompt: 'Be brief.',
      });
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });

  it('names a system prompt file that cannot be used, and what to do', async () => {
    await config({ systemPromptFile: 'missing.md' });
    // Used (and so read) only from a trusted workspace: here `--trust-workspace`.
    const missing = await resolveSettings({ workDir, overrides: { trustWorkspaces: true } })
      .catch((caught: unknown) => caught);
    expect((missing as ClawError).code).toBe('config_invalid');
    expect((missing as Error).message).toMatch(/system prompt file .*missing\.md \(systemPromptFile in .*config\.json\) cannot be read \(ENOENT\)/);
    await writeFile(join(workDir, 'empty.md'), '  \n');
    const empty = await resolveSettings({ workDir, overrides: { systemPromptFile: 'empty.md' } })
      .catch((caught: unknown) => caught);
    expect((empty as Error).message).toMatch(/\(--system-prompt-file\) is empty; fix it, or leave the setting out/);
    await writeFile(join(workDir, 'binary.md'), Buffer.from([0xff, 0xfe, 0x00]));
    const binary = await resolveSettings({ workDir, overrides: { systemPromptFile: 'binary.md' } })
      .catch((caught: unknown) => caught);
    expect((binary as Error).message).toContain('is not UTF-8 text');
  });

  it('finds the user\'s claw folder under XDG_CONFIG_HOME, else ~/.config (REAL-2)', async () => {
    expect((await resolveSettings({ workDir, env: { XDG_CONFIG_HOME: '/x/conf', HOME: '/home/u' } })).userConfigDir)
      .toBe(join('/x/conf', 'claw'));
    expect((await resolveSettings({ workDir, env: { HOME: '/home/u' } })).userConfigDir)
      .toBe(join('/home/u', '.config', 'claw'));
    // A relative XDG_CONFIG_HOME is invalid by the spec: ignored.
    expect((await resolveSettings({ workDir, env: { XDG_CONFIG_HOME: 'conf', HOME: '/home/u' } })).userConfigDir)
      .toBe(join('/home/u', '.config', 'claw'));
    expect((await resolveSettings({ workDir, env: {} })).userConfigDir).toBeUndefined();
  });

  it('orders the sources: flag > environment > (trusted) file > default', async () => {
    await trustedConfig({ model: 'from-file', baseUrl: 'http://127.0.0.1:1/v1', maxTurns: 7, approval: 'allow', retries: 5 });
    const env = userEnv({ OPENAI_MODEL: 'from-env', OPENAI_API_KEY: 'sk-env', OPENAI_BASE_URL: '' });
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
