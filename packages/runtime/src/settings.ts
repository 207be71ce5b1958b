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
import { checkWorkspaceTrust, userClawFolder, type WorkspaceTrust } from './trust.js';

type Env = Readonly<Record<string, string | undefined>>;

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
  /**
   * Workspace files the file tools may use although claw guards them as secrets (`.env*`):
   * workspace-relative patterns (`*` within a name, `**` across folders). Only the user's own
   * settings set it (`~/.config/claw/config.json`, a trusted workspace's).
   */
  allowFiles?: readonly string[];
  /**
   * `--trust-workspace` (TRUST-3): every workspace's settings files are used without a record.
   * Absent or false: a workspace's `.claw/mcp.json` and `.claw/a2a.json` are used only when the
   * record of trusted workspaces has them as they are.
   */
  trustWorkspaces?: boolean;
  /** How the workspace these settings were resolved for stands (TRUST-1). */
  workspaceTrust?: WorkspaceTrust;
  /** What of that workspace's `.claw/config.json` was not used because it is not trusted. */
  ignoredSettings?: readonly IgnoredSetting[];
}

/** A setting of an untrusted workspace's `.claw/config.json` that claw did not use (TRUST-2). */
export interface IgnoredSetting {
  /** The key, `sandbox.isolation` for a nested one. */
  key: string;
  value: unknown;
}

/**
 * The defaults of the factory (RT-2, CLI-6). Where a package has its own default, it is taken
 * from there, so the two never drift apart.
 */
export const defaultSettings: Readonly<Omit<
  Settings,
  'apiKey' | 'baseUrl' | 'approval' | 'systemPrompt' | 'systemPromptFile' | 'appendSystemPrompt'
  | 'userConfigDir' | 'allowFiles' | 'trustWorkspaces' | 'workspaceTrust' | 'ignoredSettings'
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
export type SettingOverrides = Partial<Omit<
  Settings,
  'sandbox' | 'systemPrompt' | 'userConfigDir' | 'workspaceTrust' | 'ignoredSettings'
>> & {
  sandbox?: Partial<Settings['sandbox']>;
};

/** The largest system prompt file claw reads, in bytes. */
const maxSystemPromptBytes = 256 * 1024;

/** The inputs `resolveSettings` merges: workspace, flags, environment and config files. */
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
  return readConfigAt(configPath(workDir));
}

/**
 * The user's own settings, `config.json` in their claw folder (`$XDG_CONFIG_HOME/claw`, else
 * `~/.config/claw`): always trusted, under the workspace's (when trusted), the environment and the
 * flags. No file (or no home folder) is an empty config.
 *
 * @throws ClawUserError `config_invalid` as {@link readConfigFile}.
 */
export async function readUserConfigFile(env: Env): Promise<ClawConfig> {
  const folder = userClawFolder(env);
  return folder === undefined ? {} : readConfigAt(path.join(folder, 'config.json'));
}

async function readConfigAt(file: string): Promise<ClawConfig> {
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
 * `OPENAI_MODEL`) > `<workDir>/.claw/config.json` > the user's `config.json` > default.
 *
 * A workspace's `config.json` counts only when the workspace is trusted (TRUST-2: the record has
 * it as it is, or `overrides.trustWorkspaces`); otherwise only what narrows is taken from it (a
 * lower limit, a stricter approval or sandbox) and the rest is listed in `ignoredSettings`.
 *
 * @throws ClawUserError `config_invalid` for a bad config file; `trust_record_invalid` for a bad
 *   record of trusted workspaces.
 */
export async function resolveSettings(options: ResolveSettingsOptions): Promise<Settings> {
  const env = options.env ?? {};
  const overrides = options.overrides ?? {};
  const [workspace, user, trust] = await Promise.all([
    readConfigFile(options.workDir),
    readUserConfigFile(env),
    checkWorkspaceTrust(options.workDir, { env, trustAll: overrides.trustWorkspaces === true }),
  ]);
  const fromEnv = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value;
  };
  const defaultApproval = options.defaultApproval ?? 'deny';
  const model = overrides.model ?? fromEnv('OPENAI_MODEL') ??
    (trust.trusted ? workspace.model : undefined) ?? user.model ?? defaultSettings.model;
  const { taken, ignored } = trust.trusted
    ? { taken: workspace, ignored: [] }
    : narrowingOnly(workspace, user, {
        approval: defaultApproval,
        contextWindowTokens: contextWindowOf(model) ?? defaultSettings.contextWindowTokens,
      });
  // The workspace's over the user's; flags and the environment over both.
  const file: ClawConfig = {
    ...user,
    ...taken,
    prices: { ...user.prices, ...taken.prices },
    sandbox: { ...user.sandbox, ...taken.sandbox },
  };
  const pick = <K extends keyof typeof defaultSettings>(key: K): Settings[K] =>
    (overrides[key] ?? file[key as keyof ClawConfig] ?? defaultSettings[key]) as Settings[K];
  const allowFiles = overrides.allowFiles ?? file.allowFiles;
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
    ...(await systemPromptSettings(options, trust.trusted ? workspace : {}, user, env)),
    appendSystemPrompt: overrides.appendSystemPrompt ?? file.appendSystemPrompt,
    userConfigDir: userClawFolder(env),
    retries: pick('retries'),
    contextWindowTokens: overrides.contextWindowTokens ?? file.contextWindowTokens ??
      contextWindowOf(model) ?? defaultSettings.contextWindowTokens,
    compactAtRatio: pick('compactAtRatio'),
    approval: overrides.approval ?? file.approval ?? defaultApproval,
    prices: { ...file.prices, ...overrides.prices },
    sandbox: { ...defaultSettings.sandbox, ...file.sandbox, ...overrides.sandbox },
    ...(allowFiles === undefined ? {} : { allowFiles }),
    trustWorkspaces: overrides.trustWorkspaces === true,
    workspaceTrust: trust,
    ignoredSettings: ignored,
  };
}

/** Limits where a number ≤ 0 means none (budgets) or 0 means none (timeouts). */
const limitKeys = [
  'maxSessionTokens', 'maxRunTokens', 'maxSubagents', 'maxSessionCostUsd', 'maxRunCostUsd',
  'toolTimeBudgetMs', 'callTimeoutMs', 'firstTokenTimeoutMs', 'streamIdleTimeoutMs',
] as const;

/** Numbers where less is narrower. */
const lowerKeys = ['maxTurns', 'retries', 'compactAtRatio', 'contextWindowTokens'] as const;

/** Text for the model only, like the project's `AGENTS.md`, which claw reads anyway. */
const textKeys = ['appendSystemPrompt'] as const;

const approvalRank: Record<ApprovalMode, number> = { deny: 0, ask: 1, allow: 2 };
const isolationRank = { required: 0, auto: 1, off: 2 } as const;

/**
 * What claw takes from an untrusted workspace's `config.json` (TRUST-2): only what narrows what
 * the model may do or spend, compared with what would hold without the file (the user's settings,
 * else the defaults). Everything else — where the model is (`baseUrl`), which model, prices, a
 * system prompt file, a wider approval or sandbox, a higher or no limit — is ignored and listed.
 */
function narrowingOnly(
  workspace: ClawConfig,
  user: ClawConfig,
  defaults: { approval: ApprovalMode; contextWindowTokens: number },
): { taken: ClawConfig; ignored: IgnoredSetting[] } {
  const taken: Record<string, unknown> = {};
  const ignored: IgnoredSetting[] = [];
  const numeric = (key: keyof typeof defaultSettings): number => {
    if (key === 'contextWindowTokens') return user.contextWindowTokens ?? defaults.contextWindowTokens;
    return (user[key as keyof ClawConfig] ?? defaultSettings[key]) as number;
  };
  for (const [key, value] of Object.entries(workspace) as Array<[keyof ClawConfig, unknown]>) {
    if (value === undefined) continue;
    let narrows: boolean;
    if ((limitKeys as readonly string[]).includes(key)) {
      const base = numeric(key as (typeof limitKeys)[number]);
      narrows = (value as number) > 0 && (base <= 0 || (value as number) <= base);
    } else if ((lowerKeys as readonly string[]).includes(key)) {
      narrows = (value as number) <= numeric(key as (typeof lowerKeys)[number]);
    } else if ((textKeys as readonly string[]).includes(key)) {
      narrows = true;
    } else if (key === 'approval') {
      const base = user.approval ?? defaults.approval;
      narrows = approvalRank[value as ApprovalMode] <= approvalRank[base];
    } else if (key === 'sandbox') {
      const sandbox = value as NonNullable<ClawConfig['sandbox']>;
      const kept: NonNullable<ClawConfig['sandbox']> = {};
      const base = { ...defaultSettings.sandbox, ...user.sandbox };
      if (sandbox.isolation !== undefined) {
        if (isolationRank[sandbox.isolation] <= isolationRank[base.isolation]) {
          kept.isolation = sandbox.isolation;
        } else ignored.push({ key: 'sandbox.isolation', value: sandbox.isolation });
      }
      if (sandbox.allowNetwork !== undefined) {
        if (!sandbox.allowNetwork || base.allowNetwork) kept.allowNetwork = sandbox.allowNetwork;
        else ignored.push({ key: 'sandbox.allowNetwork', value: sandbox.allowNetwork });
      }
      if (Object.keys(kept).length > 0) taken.sandbox = kept;
      continue;
    } else {
      // baseUrl, model, prices, systemPromptFile, allowFiles: they need trust.
      narrows = false;
    }
    if (narrows) taken[key] = value;
    else ignored.push({ key, value });
  }
  return { taken: taken, ignored };
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
  workspace: ClawConfig,
  user: ClawConfig,
  env: Env,
): Promise<Pick<Settings, 'systemPrompt' | 'systemPromptFile'>> {
  const { workDir } = options;
  const flag = options.overrides?.systemPromptFile;
  const userFolder = userClawFolder(env) ?? workDir;
  // Each relative to where it was set: a flag to the current folder, a file to its folder's owner.
  const [given, where, base] =
    flag !== undefined ? [flag, '--system-prompt-file', options.cwd ?? workDir]
      : workspace.systemPromptFile !== undefined
        ? [workspace.systemPromptFile, `systemPromptFile in ${configPath(workDir)}`, workDir]
        : [user.systemPromptFile, `systemPromptFile in ${path.join(userFolder, 'config.json')}`, userFolder];
  if (given === undefined) return { systemPrompt: undefined, systemPromptFile: undefined };
  const resolved = path.resolve(base, given);
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
