import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  ClawUserError,
  parseClawConfig,
  readOptionalConfig,
  type ApprovalMode,
  type ClawConfig,
} from '@claw/core';
import {
  contextWindowOf,
  defaultCompactAtRatio,
  defaultContextWindowTokens,
  defaultMaxTurns,
} from '@claw/engine';
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
  /** Limit of one model call attempt as a whole; 0 = none (REAL-3). */
  callTimeoutMs: number;
  /** Limit until a streamed reply sends anything (reasoning included); 0 = none. */
  firstTokenTimeoutMs: number;
  /** Limit of a silence in a streamed reply once it started; 0 = none (REAL-3). */
  streamIdleTimeoutMs: number;
  /**
   * Replaces claw's own part of the system prompt (REAL-1): the text of `systemPromptFile`.
   * Absent: claw's own.
   */
  systemPrompt?: string | undefined;
  /** Where `systemPrompt` was read from (an absolute path), for messages. */
  systemPromptFile?: string | undefined;
  /** Added at the end of the system prompt (REAL-1). */
  appendSystemPrompt?: string | undefined;
  /**
   * The user's own claw folder (`$XDG_CONFIG_HOME/claw`, else `~/.config/claw`), whose
   * `AGENTS.md` the model is given first (REAL-2); undefined when there is no home folder.
   */
  userConfigDir?: string | undefined;
  /** Retries after the first attempt of a model call. */
  retries: number;
  /**
   * The model's context in tokens (CMP-1): the setting, else the model's from the table of
   * well-known ones (`contextWindowOf`), else 128,000.
   */
  contextWindowTokens: number;
  /** Compact before a request would fill this share of the window (CMP-1). Default 0.8. */
  compactAtRatio: number;
  approval: ApprovalMode;
  prices: NonNullable<ClawConfig['prices']>;
  sandbox: { isolation: 'auto' | 'required' | 'off'; allowNetwork: boolean };
}

/**
 * The defaults of the factory (RT-2, CLI-6). Where a package has its own default, it is taken
 * from there, so the two never drift apart.
 */
export const defaultSettings: Readonly<Omit<
  Settings,
  'apiKey' | 'baseUrl' | 'approval' | 'systemPrompt' | 'systemPromptFile' | 'appendSystemPrompt'
  | 'userConfigDir'
>> = {
  model: 'gpt-4.1-mini',
  maxTurns: defaultMaxTurns,
  // Budgets for real tasks (REAL-3): none unless set. A session's tokens grow with every turn's
  // whole context, so a fixed limit stopped ordinary tasks after a few turns.
  maxSessionTokens: 0,
  maxRunTokens: 0,
  maxSubagents: 3,
  maxSessionCostUsd: 0,
  maxRunCostUsd: 0,
  toolTimeBudgetMs: 0,
  callTimeoutMs: retryingProviderDefaults.callTimeoutMs,
  firstTokenTimeoutMs: retryingProviderDefaults.firstTokenTimeoutMs,
  streamIdleTimeoutMs: retryingProviderDefaults.streamIdleTimeoutMs,
  // Attempts are the first call plus the retries.
  retries: retryingProviderDefaults.attempts - 1,
  contextWindowTokens: defaultContextWindowTokens,
  compactAtRatio: defaultCompactAtRatio,
  prices: {},
  sandbox: { isolation: 'auto', allowNetwork: false },
};

/** Settings given on the command line (or by a program); each wins over everything else. */
export type SettingOverrides = Partial<Omit<Settings, 'sandbox' | 'systemPrompt' | 'userConfigDir'>> & {
  sandbox?: Partial<Settings['sandbox']>;
};

/** The largest system prompt file claw reads, in bytes. */
const maxSystemPromptBytes = 256 * 1024;

export interface ResolveSettingsOptions {
  workDir: string;
  overrides?: SettingOverrides;
  /** The process environment (the app edge passes `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Used when neither a flag nor the config file sets it: `ask` on a TTY, else `deny`. */
  defaultApproval?: ApprovalMode;
  /** The folder paths given as overrides (flags) are relative to. Default: the workspace. */
  cwd?: string;
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
  const model = overrides.model ?? fromEnv('OPENAI_MODEL') ?? file.model ?? defaultSettings.model;
  return {
    apiKey: overrides.apiKey ?? fromEnv('OPENAI_API_KEY'),
    baseUrl: overrides.baseUrl ?? fromEnv('OPENAI_BASE_URL') ?? file.baseUrl,
    model,
    maxTurns: pick('maxTurns'),
    maxSessionTokens: pick('maxSessionTokens'),
    maxRunTokens: pick('maxRunTokens'),
    maxSubagents: pick('maxSubagents'),
    maxSessionCostUsd: pick('maxSessionCostUsd'),
    maxRunCostUsd: pick('maxRunCostUsd'),
    toolTimeBudgetMs: pick('toolTimeBudgetMs'),
    callTimeoutMs: pick('callTimeoutMs'),
    firstTokenTimeoutMs: pick('firstTokenTimeoutMs'),
    streamIdleTimeoutMs: pick('streamIdleTimeoutMs'),
    ...(await systemPromptSettings(options, file)),
    appendSystemPrompt: overrides.appendSystemPrompt ?? file.appendSystemPrompt,
    userConfigDir: userConfigDir(env),
    retries: pick('retries'),
    contextWindowTokens: overrides.contextWindowTokens ?? file.contextWindowTokens ??
      contextWindowOf(model) ?? defaultSettings.contextWindowTokens,
    compactAtRatio: pick('compactAtRatio'),
    approval: overrides.approval ?? file.approval ?? options.defaultApproval ?? 'deny',
    prices: { ...file.prices, ...overrides.prices },
    sandbox: { ...defaultSettings.sandbox, ...file.sandbox, ...overrides.sandbox },
  };
}

/**
 * The system prompt that replaces claw's own (REAL-1): the file `--system-prompt-file` names
 * (relative to `options.cwd`), else the one `systemPromptFile` of the config file names (relative
 * to the workspace).
 *
 * @throws ClawUserError `config_invalid` when the file cannot be read, is empty, too large or not
 *   UTF-8 text.
 */
async function systemPromptSettings(
  options: ResolveSettingsOptions,
  file: ClawConfig,
): Promise<Pick<Settings, 'systemPrompt' | 'systemPromptFile'>> {
  const { workDir } = options;
  const flag = options.overrides?.systemPromptFile;
  const given = flag ?? file.systemPromptFile;
  if (given === undefined) return { systemPrompt: undefined, systemPromptFile: undefined };
  const where = flag === undefined ? `systemPromptFile in ${configPath(workDir)}` : '--system-prompt-file';
  const resolved = path.resolve(flag === undefined ? workDir : options.cwd ?? workDir, given);
  const fail = (problem: string, cause?: unknown): never => {
    throw new ClawUserError(
      `the system prompt file ${resolved} (${where}) ${problem}; fix it, or leave the setting out ` +
      "to use claw's own",
      { code: 'config_invalid', cause },
    );
  };
  let bytes: Buffer;
  try {
    bytes = await readFile(resolved);
  } catch (error) {
    return fail(`cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`, error);
  }
  if (bytes.length > maxSystemPromptBytes) {
    return fail(`is ${bytes.length} bytes, more than the ${maxSystemPromptBytes} allowed`);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (error) {
    return fail('is not UTF-8 text', error);
  }
  if (text.trim() === '') return fail('is empty');
  return { systemPrompt: text, systemPromptFile: resolved };
}

/** `$XDG_CONFIG_HOME/claw`, else `$HOME/.config/claw`; undefined without either. */
function userConfigDir(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg !== undefined && path.isAbsolute(xdg)) return path.join(xdg, 'claw');
  const home = env.HOME;
  if (home === undefined || home === '') return undefined;
  return path.join(home, '.config', 'claw');
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
