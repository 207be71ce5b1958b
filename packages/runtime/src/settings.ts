import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  ClawUserError,
  parseClawConfig,
  readOptionalConfig,
  type ApprovalMode,
  type ClawConfig,
} from '@claw/core';
import { defaultContextWindowTokens, defaultMaxTurns } from '@claw/engine';
import { retryingProviderDefaults } from '@claw/provider';

export type { ApprovalMode };

/** Every setting the factory needs, resolved (RT-2, CLI-6). */
export interface Settings {
  /** Absent only when the caller supplies its own provider (demo, eval). */
  apiKey: string | undefined;
  baseUrl: string | undefined;
  model: string;
  maxTurns: number;
  /** ≤ 0 means unlimited (the budgets below too). */
  maxSessionTokens: number;
  maxRunTokens: number;
  maxSubagents: number;
  maxSessionCostUsd: number;
  maxRunCostUsd: number;
  toolTimeBudgetMs: number;
  callTimeoutMs: number;
  firstTokenTimeoutMs: number;
  /** Retries after the first attempt of a model call. */
  retries: number;
  contextWindowTokens: number;
  approval: ApprovalMode;
  prices: NonNullable<ClawConfig['prices']>;
  sandbox: { isolation: 'auto' | 'required' | 'off'; allowNetwork: boolean };
}

/**
 * The defaults of the factory (RT-2, CLI-6). Where a package has its own default, it is taken
 * from there, so the two never drift apart.
 */
export const defaultSettings: Readonly<Omit<Settings, 'apiKey' | 'baseUrl' | 'approval'>> = {
  model: 'gpt-4.1-mini',
  maxTurns: defaultMaxTurns,
  maxSessionTokens: 200_000,
  maxRunTokens: 0,
  maxSubagents: 3,
  maxSessionCostUsd: 0,
  maxRunCostUsd: 0,
  toolTimeBudgetMs: 120_000,
  callTimeoutMs: retryingProviderDefaults.callTimeoutMs,
  firstTokenTimeoutMs: retryingProviderDefaults.firstTokenTimeoutMs,
  // Attempts are the first call plus the retries.
  retries: retryingProviderDefaults.attempts - 1,
  contextWindowTokens: defaultContextWindowTokens,
  prices: {},
  sandbox: { isolation: 'auto', allowNetwork: false },
};

/** Settings given on the command line (or by a program); each wins over everything else. */
export type SettingOverrides = Partial<Omit<Settings, 'sandbox'>> & {
  sandbox?: Partial<Settings['sandbox']>;
};

export interface ResolveSettingsOptions {
  workDir: string;
  overrides?: SettingOverrides;
  /** The process environment (the app edge passes `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Used when neither a flag nor the config file sets it: `ask` on a TTY, else `deny`. */
  defaultApproval?: ApprovalMode;
}

/** Where `.claw/config.json` of a workspace is. */
export function configPath(workDir: string): string {
  return path.join(workDir, '.claw', 'config.json');
}

/**
 * Reads `<workDir>/.claw/config.json`; no file is an empty config.
 *
 * @throws ClawUserError `config_invalid` when the file is not JSON or has a bad or unknown key (the
 *   message names the file and the key).
 */
export async function readConfigFile(workDir: string): Promise<ClawConfig> {
  const file = configPath(workDir);
  const text = await readOptionalConfig(file, {
    read: (name) => readFile(name, 'utf8'),
    fail: (message, cause) => new ClawUserError(message, { code: 'config_unreadable', cause }),
  });
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ClawUserError(
      `invalid configuration in ${file}: not valid JSON (${(error as Error).message}); fix or remove the file`,
      { code: 'config_invalid', cause: error },
    );
  }
  return parseClawConfig(value, file);
}

/**
 * Resolves the settings: flag (override) > environment (`OPENAI_API_KEY`, `OPENAI_BASE_URL`,
 * `OPENAI_MODEL`) > `<workDir>/.claw/config.json` > default.
 *
 * @throws ClawUserError `config_invalid` for a bad config file.
 */
export async function resolveSettings(options: ResolveSettingsOptions): Promise<Settings> {
  const file = await readConfigFile(options.workDir);
  const env = options.env ?? {};
  const overrides = options.overrides ?? {};
  const fromEnv = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value;
  };
  const pick = <K extends keyof typeof defaultSettings>(key: K): Settings[K] =>
    (overrides[key] ?? file[key as keyof ClawConfig] ?? defaultSettings[key]) as Settings[K];
  return {
    apiKey: overrides.apiKey ?? fromEnv('OPENAI_API_KEY'),
    baseUrl: overrides.baseUrl ?? fromEnv('OPENAI_BASE_URL') ?? file.baseUrl,
    model: overrides.model ?? fromEnv('OPENAI_MODEL') ?? file.model ?? defaultSettings.model,
    maxTurns: pick('maxTurns'),
    maxSessionTokens: pick('maxSessionTokens'),
    maxRunTokens: pick('maxRunTokens'),
    maxSubagents: pick('maxSubagents'),
    maxSessionCostUsd: pick('maxSessionCostUsd'),
    maxRunCostUsd: pick('maxRunCostUsd'),
    toolTimeBudgetMs: pick('toolTimeBudgetMs'),
    callTimeoutMs: pick('callTimeoutMs'),
    firstTokenTimeoutMs: pick('firstTokenTimeoutMs'),
    retries: pick('retries'),
    contextWindowTokens: pick('contextWindowTokens'),
    approval: overrides.approval ?? file.approval ?? options.defaultApproval ?? 'deny',
    prices: { ...file.prices, ...overrides.prices },
    sandbox: { ...defaultSettings.sandbox, ...file.sandbox, ...overrides.sandbox },
  };
}

/** The environment variables bash commands may see; no other (no secret) ever reaches them. */
export const commandEnvironmentNames = [
  'PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TERM', 'USER', 'LOGNAME', 'SHELL', 'TZ', 'TMPDIR',
] as const;

/** The allow-listed environment for bash commands, taken from the process environment. */
export function commandEnvironment(
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const result: Record<string, string> = {};
  for (const name of commandEnvironmentNames) {
    const value = env[name];
    if (value !== undefined) result[name] = value;
  }
  return result;
}
