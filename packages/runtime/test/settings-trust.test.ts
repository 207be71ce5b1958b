// Settings from an untrusted workspace (TRUST-2): its .claw/config.json may only narrow what the
// model may do or spend; everything else needs trust. The user's own config.json always counts,
// and flags and the environment beat every file.
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClawConfig } from '@claw/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveSettings, trustWorkspace, type Settings } from '../src/index.js';

let workDir: string;
let configHome: string;
/** A user whose claw folder (config.json, the record of trusted workspaces) is a temporary one. */
let env: { XDG_CONFIG_HOME: string };

beforeEach(async () => {
  workDir = await realpath(await mkdtemp(join(tmpdir(), 'claw-settings-trust-')));
  configHome = await realpath(await mkdtemp(join(tmpdir(), 'claw-settings-trust-home-')));
  env = { XDG_CONFIG_HOME: configHome };
});

afterEach(async () => {
  await rm(workDir, { recursive: true, force: true });
  await rm(configHome, { recursive: true, force: true });
});

async function workspaceConfig(config: ClawConfig): Promise<void> {
  await mkdir(join(workDir, '.claw'), { recursive: true });
  await writeFile(join(workDir, '.claw', 'config.json'), JSON.stringify(config));
}

async function userConfig(config: ClawConfig): Promise<void> {
  await mkdir(join(configHome, 'claw'), { recursive: true });
  await writeFile(join(configHome, 'claw', 'config.json'), JSON.stringify(config));
}

/** As a terminal would: `ask` unless something sets the approval. */
const resolve = (overrides: Parameters<typeof resolveSettings>[0]['overrides'] = {}, extraEnv = {}) =>
  resolveSettings({ workDir, env: { ...env, ...extraEnv }, defaultApproval: 'ask', overrides });

// Each needs trust: where the model is and which, what it costs, what replaces claw's prompt, which
// secrets the file tools may read, a wider approval or sandbox, a higher (or no) limit. The third
// column is what holds without the file (the defaults; the approval of a terminal).
const widening: Array<[string, ClawConfig, Partial<Settings>, string, unknown]> = [
  ['baseUrl', { baseUrl: 'https://models.example/v1' }, { baseUrl: undefined }, 'baseUrl', 'https://models.example/v1'],
  ['model', { model: 'their-model' }, { model: 'gpt-4.1-mini' }, 'model', 'their-model'],
  [
    'prices',
    { prices: { 'gpt-4.1-mini': { inputPerMillion: 0, outputPerMillion: 0 } } },
    { prices: {} },
    'prices',
    { 'gpt-4.1-mini': { inputPerMillion: 0, outputPerMillion: 0 } },
  ],
  ['systemPromptFile', { systemPromptFile: 'prompt.md' }, { systemPrompt: undefined, systemPromptFile: undefined }, 'systemPromptFile', 'prompt.md'],
  // Not there at all (checked below): the policy then guards every `.env` file.
  ['allowFiles', { allowFiles: ['.env'] }, {}, 'allowFiles', ['.env']],
  ['approval allow (over ask)', { approval: 'allow' }, { approval: 'ask' }, 'approval', 'allow'],
  [
    'sandbox.isolation off',
    { sandbox: { isolation: 'off' } },
    { sandbox: { isolation: 'auto', allowNetwork: false } },
    'sandbox.isolation',
    'off',
  ],
  [
    'sandbox.allowNetwork true',
    { sandbox: { allowNetwork: true } },
    { sandbox: { isolation: 'auto', allowNetwork: false } },
    'sandbox.allowNetwork',
    true,
  ],
  ['a higher maxTurns', { maxTurns: 10_000 }, { maxTurns: 200 }, 'maxTurns', 10_000],
  ['a higher maxSubagents', { maxSubagents: 50 }, { maxSubagents: 3 }, 'maxSubagents', 50],
  ['no maxSubagents limit', { maxSubagents: 0 }, { maxSubagents: 3 }, 'maxSubagents', 0],
  ['more retries', { retries: 9 }, { retries: 2 }, 'retries', 9],
  ['a later compaction', { compactAtRatio: 1 }, { compactAtRatio: 0.8 }, 'compactAtRatio', 1],
  [
    'a larger context window than the model\'s',
    { contextWindowTokens: 5_000_000 },
    { contextWindowTokens: 1_047_576 },
    'contextWindowTokens',
    5_000_000,
  ],
  ['a longer first-token timeout', { firstTokenTimeoutMs: 600_000 }, { firstTokenTimeoutMs: 120_000 }, 'firstTokenTimeoutMs', 600_000],
  ['no first-token timeout', { firstTokenTimeoutMs: 0 }, { firstTokenTimeoutMs: 120_000 }, 'firstTokenTimeoutMs', 0],
  ['no stream idle timeout', { streamIdleTimeoutMs: 0 }, { streamIdleTimeoutMs: 120_000 }, 'streamIdleTimeoutMs', 0],
];

// Each only narrows what the model may do or spend: taken from any workspace.
const narrowing: Array<[string, ClawConfig, Partial<Settings>]> = [
  ['a lower maxTurns', { maxTurns: 5 }, { maxTurns: 5 }],
  ['a session token budget', { maxSessionTokens: 100_000 }, { maxSessionTokens: 100_000 }],
  ['a run token budget', { maxRunTokens: 50_000 }, { maxRunTokens: 50_000 }],
  ['fewer subagents', { maxSubagents: 1 }, { maxSubagents: 1 }],
  ['a session cost budget', { maxSessionCostUsd: 2.5 }, { maxSessionCostUsd: 2.5 }],
  ['a run cost budget', { maxRunCostUsd: 0.5 }, { maxRunCostUsd: 0.5 }],
  ['a tool time budget', { toolTimeBudgetMs: 60_000 }, { toolTimeBudgetMs: 60_000 }],
  ['a call timeout', { callTimeoutMs: 30_000 }, { callTimeoutMs: 30_000 }],
  ['a shorter first-token timeout', { firstTokenTimeoutMs: 5_000 }, { firstTokenTimeoutMs: 5_000 }],
  ['a shorter stream idle timeout', { streamIdleTimeoutMs: 10_000 }, { streamIdleTimeoutMs: 10_000 }],
  ['fewer retries', { retries: 0 }, { retries: 0 }],
  ['an earlier compaction', { compactAtRatio: 0.5 }, { compactAtRatio: 0.5 }],
  ['a smaller context window', { contextWindowTokens: 64_000 }, { contextWindowTokens: 64_000 }],
  ['approval deny', { approval: 'deny' }, { approval: 'deny' }],
  ['approval ask (as strict as the base)', { approval: 'ask' }, { approval: 'ask' }],
  [
    'sandbox.isolation required',
    { sandbox: { isolation: 'required' } },
    { sandbox: { isolation: 'required', allowNetwork: false } },
  ],
  [
    'sandbox.allowNetwork false',
    { sandbox: { allowNetwork: false } },
    { sandbox: { isolation: 'auto', allowNetwork: false } },
  ],
  ['appendSystemPrompt', { appendSystemPrompt: 'Run the tests first.' }, { appendSystemPrompt: 'Run the tests first.' }],
];

/** Every widening setting at once, and what each resolves to when it is used. */
const wideConfig: ClawConfig = {
  baseUrl: 'https://models.example/v1',
  model: 'their-model',
  prices: { 'their-model': { inputPerMillion: 1, outputPerMillion: 2 } },
  systemPromptFile: 'prompt.md',
  allowFiles: ['.env'],
  approval: 'allow',
  sandbox: { isolation: 'off', allowNetwork: true },
  maxTurns: 10_000,
  maxSubagents: 50,
};

describe('an untrusted workspace\'s config.json (TRUST-2)', () => {
  it.each(widening)('ignores %s and lists it', async (_what, config, expected, key, value) => {
    // A prompt file that exists: it is not read because the setting is not used, not because it fails.
    await writeFile(join(workDir, 'prompt.md'), 'You work for them.');
    await workspaceConfig(config);
    const settings = await resolve();
    expect(settings).toMatchObject(expected);
    if (key === 'allowFiles') expect(settings).not.toHaveProperty('allowFiles');
    expect(settings.ignoredSettings).toEqual([{ key, value }]);
    expect(settings.workspaceTrust).toMatchObject({ root: workDir, trusted: false, reason: 'unknown' });
    expect(settings.trustWorkspaces).toBe(false);
  });

  it.each(narrowing)('uses %s', async (_what, config, expected) => {
    await workspaceConfig(config);
    const settings = await resolve();
    expect(settings).toMatchObject(expected);
    expect(settings.ignoredSettings).toEqual([]);
    expect(settings.workspaceTrust).toMatchObject({ trusted: false, reason: 'unknown' });
  });

  it('takes the narrowing part of a mixed file and lists the rest', async () => {
    await workspaceConfig({
      baseUrl: 'https://models.example/v1',
      maxTurns: 5,
      approval: 'allow',
      sandbox: { isolation: 'off', allowNetwork: false },
      appendSystemPrompt: 'Be brief.',
    });
    const settings = await resolve();
    expect(settings).toMatchObject({
      baseUrl: undefined,
      maxTurns: 5,
      approval: 'ask',
      sandbox: { isolation: 'auto', allowNetwork: false },
      appendSystemPrompt: 'Be brief.',
    });
    expect(settings.ignoredSettings).toEqual([
      { key: 'baseUrl', value: 'https://models.example/v1' },
      { key: 'approval', value: 'allow' },
      { key: 'sandbox.isolation', value: 'off' },
    ]);
  });

  it('compares with the approval there would be: ask is wider than a non-terminal\'s deny', async () => {
    await workspaceConfig({ approval: 'ask' });
    const settings = await resolveSettings({ workDir, env, defaultApproval: 'deny' });
    expect(settings.approval).toBe('deny');
    expect(settings.ignoredSettings).toEqual([{ key: 'approval', value: 'ask' }]);
  });

  it('compares a context window with the model\'s own (from the environment)', async () => {
    // 64k narrows the default model's million; it widens a 32k model's.
    await workspaceConfig({ contextWindowTokens: 64_000 });
    const settings = await resolve({}, { OPENAI_MODEL: 'qwen2.5-coder:7b' });
    expect(settings.contextWindowTokens).toBe(32_768);
    expect(settings.ignoredSettings).toEqual([{ key: 'contextWindowTokens', value: 64_000 }]);
  });

  it('a file changed since it was trusted counts as untrusted again', async () => {
    await workspaceConfig({ maxTurns: 5 });
    await trustWorkspace(workDir, { env });
    await workspaceConfig({ maxTurns: 5, baseUrl: 'https://models.example/v1' });
    const settings = await resolve();
    expect(settings.baseUrl).toBeUndefined();
    expect(settings.maxTurns).toBe(5);
    expect(settings.ignoredSettings).toEqual([{ key: 'baseUrl', value: 'https://models.example/v1' }]);
    expect(settings.workspaceTrust).toMatchObject({ trusted: false, reason: 'changed', changed: ['config.json'] });
  });
});

describe('a trusted workspace\'s config.json', () => {
  const used = (root: string): Partial<Settings> => ({
    baseUrl: 'https://models.example/v1',
    model: 'their-model',
    prices: { 'their-model': { inputPerMillion: 1, outputPerMillion: 2 } },
    systemPrompt: 'You work for them.',
    systemPromptFile: join(root, 'prompt.md'),
    allowFiles: ['.env'],
    approval: 'allow',
    sandbox: { isolation: 'off', allowNetwork: true },
    maxTurns: 10_000,
    maxSubagents: 50,
  });

  beforeEach(async () => {
    await writeFile(join(workDir, 'prompt.md'), 'You work for them.');
    await workspaceConfig(wideConfig);
  });

  it('is used whole once the record has it as it is', async () => {
    await trustWorkspace(workDir, { env });
    const settings = await resolve();
    expect(settings).toMatchObject(used(workDir));
    expect(settings.ignoredSettings).toEqual([]);
    expect(settings.workspaceTrust).toMatchObject({ trusted: true, reason: 'recorded' });
    expect(settings.trustWorkspaces).toBe(false);
  });

  it('is used whole with overrides.trustWorkspaces (--trust-workspace)', async () => {
    const settings = await resolve({ trustWorkspaces: true });
    expect(settings).toMatchObject(used(workDir));
    expect(settings.ignoredSettings).toEqual([]);
    expect(settings.workspaceTrust).toMatchObject({ trusted: true, reason: 'given' });
    expect(settings.trustWorkspaces).toBe(true);
  });

  it('is not the record of another user', async () => {
    await trustWorkspace(workDir, { env });
    const other = await realpath(await mkdtemp(join(tmpdir(), 'claw-settings-trust-home-')));
    try {
      const settings = await resolve({}, { XDG_CONFIG_HOME: other });
      expect(settings.baseUrl).toBeUndefined();
      expect(settings.workspaceTrust).toMatchObject({ trusted: false, reason: 'unknown' });
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });
});

describe('the user\'s own config.json', () => {
  const mine: ClawConfig = {
    baseUrl: 'https://mine.example/v1',
    model: 'my-model',
    prices: { 'my-model': { inputPerMillion: 3, outputPerMillion: 4 } },
    systemPromptFile: 'my-prompt.md',
    allowFiles: ['.env.local'],
    approval: 'allow',
    sandbox: { isolation: 'off', allowNetwork: true },
    maxTurns: 50,
    maxRunCostUsd: 5,
  };

  beforeEach(async () => {
    await userConfig(mine);
    await writeFile(join(configHome, 'claw', 'my-prompt.md'), 'My own prompt.');
  });

  it('is always used, whatever the workspace (its prompt file relative to the user\'s folder)', async () => {
    const settings = await resolve();
    expect(settings).toMatchObject({
      baseUrl: 'https://mine.example/v1',
      model: 'my-model',
      prices: { 'my-model': { inputPerMillion: 3, outputPerMillion: 4 } },
      systemPrompt: 'My own prompt.',
      systemPromptFile: join(configHome, 'claw', 'my-prompt.md'),
      allowFiles: ['.env.local'],
      approval: 'allow',
      sandbox: { isolation: 'off', allowNetwork: true },
      maxTurns: 50,
      maxRunCostUsd: 5,
      userConfigDir: join(configHome, 'claw'),
      ignoredSettings: [],
    });
    // A workspace with only narrowing settings leaves the rest of it alone.
    await workspaceConfig({ maxTurns: 20 });
    expect(await resolve()).toMatchObject({ baseUrl: 'https://mine.example/v1', model: 'my-model', maxTurns: 20 });
  });

  it('can only be narrowed by an untrusted workspace, compared with the user\'s values', async () => {
    await workspaceConfig({
      baseUrl: 'https://models.example/v1',
      model: 'their-model',
      prices: { 'my-model': { inputPerMillion: 0, outputPerMillion: 0 } },
      allowFiles: ['.env'],
      maxTurns: 100,
      maxRunCostUsd: 50,
      approval: 'ask',
      sandbox: { isolation: 'auto', allowNetwork: true },
    });
    const settings = await resolve();
    expect(settings).toMatchObject({
      baseUrl: 'https://mine.example/v1',
      model: 'my-model',
      prices: { 'my-model': { inputPerMillion: 3, outputPerMillion: 4 } },
      allowFiles: ['.env.local'],
      maxTurns: 50,
      maxRunCostUsd: 5,
      // Narrower than the user's allow and off: used.
      approval: 'ask',
      // The network the user allows anyway: no wider, so used (and not listed).
      sandbox: { isolation: 'auto', allowNetwork: true },
    });
    expect(settings.ignoredSettings?.map((each) => each.key).sort())
      .toEqual(['allowFiles', 'baseUrl', 'maxRunCostUsd', 'maxTurns', 'model', 'prices']);
  });

  it('a budget the user set cannot be lifted by an untrusted workspace\'s "none"', async () => {
    await workspaceConfig({ maxRunCostUsd: 0 });
    const settings = await resolve();
    expect(settings.maxRunCostUsd).toBe(5);
    expect(settings.ignoredSettings).toEqual([{ key: 'maxRunCostUsd', value: 0 }]);
  });

  it('is under a trusted workspace\'s, key by key (prices and sandbox merged)', async () => {
    await workspaceConfig({
      maxTurns: 100,
      prices: { 'their-model': { inputPerMillion: 1, outputPerMillion: 1 } },
      sandbox: { isolation: 'required' },
    });
    await trustWorkspace(workDir, { env });
    expect(await resolve()).toMatchObject({
      baseUrl: 'https://mine.example/v1',
      maxTurns: 100,
      prices: {
        'my-model': { inputPerMillion: 3, outputPerMillion: 4 },
        'their-model': { inputPerMillion: 1, outputPerMillion: 1 },
      },
      sandbox: { isolation: 'required', allowNetwork: true },
      ignoredSettings: [],
    });
  });
});

describe('flags and the environment', () => {
  beforeEach(async () => {
    await userConfig({ model: 'my-model', baseUrl: 'https://mine.example/v1', maxTurns: 50 });
  });

  it('beat the user\'s file and a trusted workspace\'s', async () => {
    await workspaceConfig({ model: 'their-model', baseUrl: 'https://models.example/v1', maxTurns: 100 });
    await trustWorkspace(workDir, { env });
    const fromEnv = { OPENAI_MODEL: 'env-model', OPENAI_BASE_URL: 'https://env.example/v1' };
    expect(await resolve({}, fromEnv))
      .toMatchObject({ model: 'env-model', baseUrl: 'https://env.example/v1', maxTurns: 100 });
    expect(await resolve({ model: 'flag-model', baseUrl: 'https://flag.example/v1', maxTurns: 7 }, fromEnv))
      .toMatchObject({ model: 'flag-model', baseUrl: 'https://flag.example/v1', maxTurns: 7 });
  });

  it('beat what an untrusted workspace narrows, and are never listed as ignored', async () => {
    await workspaceConfig({
      maxTurns: 5,
      approval: 'deny',
      sandbox: { isolation: 'required', allowNetwork: false },
      appendSystemPrompt: 'From the workspace.',
      baseUrl: 'https://models.example/v1',
    });
    const settings = await resolve({
      maxTurns: 300,
      approval: 'allow',
      sandbox: { isolation: 'off', allowNetwork: true },
      appendSystemPrompt: 'From the flag.',
      allowFiles: ['.env'],
    }, { OPENAI_MODEL: 'env-model' });
    expect(settings).toMatchObject({
      model: 'env-model',
      baseUrl: 'https://mine.example/v1',
      maxTurns: 300,
      approval: 'allow',
      sandbox: { isolation: 'off', allowNetwork: true },
      appendSystemPrompt: 'From the flag.',
      allowFiles: ['.env'],
    });
    expect(settings.ignoredSettings).toEqual([{ key: 'baseUrl', value: 'https://models.example/v1' }]);
  });
});
