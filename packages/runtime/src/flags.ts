import type { ParseArgsConfig } from 'node:util';
import { ClawUserError, approvalModes } from '@claw/core';
import { defaultSettings, type SettingOverrides, type Settings } from './settings.js';

// The command-line flags of the settings (CLI-6), shared by the apps (`claw`, `claw-server`) so
// that they read `--model`, `--approval` and the number flags the same way and say the same
// things about bad values. Errors are `ClawUserError`s with code `usage` (exit status 2).

type NumericSetting = {
  [K in keyof Settings]-?: Settings[K] extends number ? K : never;
}[keyof Settings];

/** The number flags, the setting each sets, and the smallest value it takes. */
export const numericSettingFlags: ReadonlyArray<{
  flag: string;
  key: NumericSetting;
  min: number;
}> = [
  { flag: 'max-turns', key: 'maxTurns', min: 1 },
  { flag: 'max-session-tokens', key: 'maxSessionTokens', min: 0 },
  { flag: 'max-run-tokens', key: 'maxRunTokens', min: 0 },
  { flag: 'max-subagents', key: 'maxSubagents', min: 0 },
  { flag: 'tool-time-budget-ms', key: 'toolTimeBudgetMs', min: 0 },
  { flag: 'call-timeout-ms', key: 'callTimeoutMs', min: 0 },
  { flag: 'first-token-timeout-ms', key: 'firstTokenTimeoutMs', min: 0 },
  { flag: 'stream-idle-timeout-ms', key: 'streamIdleTimeoutMs', min: 0 },
  { flag: 'retries', key: 'retries', min: 0 },
  { flag: 'context-window-tokens', key: 'contextWindowTokens', min: 1000 },
];

/** The `node:util` `parseArgs` options of the setting flags, to spread into an app's own. */
export const settingFlagOptions = {
  approval: { type: 'string' },
  model: { type: 'string' },
  'system-prompt-file': { type: 'string' },
  'append-system-prompt': { type: 'string' },
  'trust-workspace': { type: 'boolean' },
  ...Object.fromEntries(
    numericSettingFlags.map((option) => [option.flag, { type: 'string' as const }]),
  ),
} satisfies ParseArgsConfig['options'];

/** What `parseArgs` gives back as values. */
export type FlagValues = Readonly<Record<string, string | boolean | undefined>>;

function usage(message: string): ClawUserError {
  return new ClawUserError(message, { code: 'usage' });
}

/**
 * The settings the flags set (`--approval`, `--model`, the number flags), checked.
 *
 * @throws ClawUserError `usage` for a value that is not allowed.
 */
export function readSettingFlags(values: FlagValues): SettingOverrides {
  const overrides: SettingOverrides = {};
  const approval = oneOfFlag(values, 'approval', approvalModes);
  if (approval !== undefined) overrides.approval = approval;
  const model = stringFlag(values, 'model');
  if (model !== undefined) {
    if (model.trim() === '') throw usage('--model needs a model name, e.g. gpt-4.1-mini');
    overrides.model = model;
  }
  const systemPromptFile = stringFlag(values, 'system-prompt-file');
  if (systemPromptFile !== undefined) {
    if (systemPromptFile.trim() === '') {
      throw usage('--system-prompt-file needs a file whose text replaces claw\'s system prompt, e.g. --system-prompt-file prompt.md');
    }
    overrides.systemPromptFile = systemPromptFile;
  }
  const append = stringFlag(values, 'append-system-prompt');
  if (append !== undefined) {
    if (append.trim() === '') {
      throw usage('--append-system-prompt needs the text to add, e.g. --append-system-prompt "Answer in French."');
    }
    overrides.appendSystemPrompt = append;
  }
  if (values['trust-workspace'] === true) overrides.trustWorkspaces = true;
  for (const option of numericSettingFlags) {
    const text = stringFlag(values, option.flag);
    if (text !== undefined) overrides[option.key] = wholeNumberFlag(option.flag, text, option.min);
  }
  return overrides;
}

/** A string flag's value, if given. */
export function stringFlag(values: FlagValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * A flag that takes one of `allowed`, if given.
 *
 * @throws ClawUserError `usage` for another value.
 */
export function oneOfFlag<T extends string>(
  values: FlagValues,
  name: string,
  allowed: readonly T[],
): T | undefined {
  const value = stringFlag(values, name);
  if (value === undefined) return undefined;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw usage(
    `--${name} must be one of ${allowed.join(', ')}, got "${value}"; e.g. --${name} ${allowed[0]}`,
  );
}

/**
 * A whole number of at least `min`, from a flag's text.
 *
 * @throws ClawUserError `usage` otherwise.
 */
export function wholeNumberFlag(flag: string, text: string, min: number): number {
  const value = /^\d+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min) {
    throw usage(
      `--${flag} needs a whole number${min > 0 ? ` of at least ${min}` : ' (0 or more)'}, ` +
      `got "${text}"; e.g. --${flag} ${Math.max(min, 10)}`,
    );
  }
  return value;
}

/** `parseArgs`'s error, said as a usage error ending with `seeHelp` (e.g. "run `x --help`…"). */
export function flagParseError(error: unknown, seeHelp: string): ClawUserError {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  const named = /'([^']+)'/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && named !== undefined) {
    return usage(`unknown option ${named}; ${seeHelp}`);
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && named !== undefined) {
    const option = named.replace(/ <value>$/, '').replace(', ', '/');
    if (/does not take an argument/.test(message)) {
      return usage(`option ${option} takes no value; ${seeHelp}`);
    }
    return usage(
      `option ${option} needs a value (a value starting with "-" is written ${
        option.split('/').at(-1) ?? option
      }=-value); ${seeHelp}`,
    );
  }
  return usage(`${message}; ${seeHelp}`);
}

/** `0` said as `unlimited` (or `none`), other limits as they are. */
function describeLimit(value: number, zero = 'unlimited'): string {
  return value <= 0 ? zero : String(value);
}

/**
 * The `--help` lines of `--model` and the number flags, with their defaults, two-space indented
 * and aligned at column 35 like the rest of the apps' help (one string, ending in a newline).
 */
export function settingFlagsHelp(): string {
  const d = defaultSettings;
  return `  --model <name>                  overrides OPENAI_MODEL (default: ${d.model})
  --max-turns <n>                 model calls per task (default: ${d.maxTurns})
  --max-session-tokens <n>        tokens over the session's life, 0 = unlimited
                                  (default: ${describeLimit(d.maxSessionTokens)})
  --max-run-tokens <n>            tokens per task, 0 = unlimited (default: ${describeLimit(d.maxRunTokens)})
  --max-subagents <n>             spawn_subagent calls per task (default: ${d.maxSubagents})
  --tool-time-budget-ms <n>       wall time of tools per task, 0 = unlimited
                                  (default: ${describeLimit(d.toolTimeBudgetMs)})
  --call-timeout-ms <n>           limit of one model call attempt as a whole, 0 = none
                                  (default: ${describeLimit(d.callTimeoutMs, 'none')})
  --first-token-timeout-ms <n>    limit until a streamed reply sends anything (reasoning
                                  included), 0 = none (default: ${d.firstTokenTimeoutMs})
  --stream-idle-timeout-ms <n>    limit of a silence once a reply streams, 0 = none
                                  (default: ${d.streamIdleTimeoutMs})
  --retries <n>                   retries of a failed model call (default: ${d.retries})
  --context-window-tokens <n>     the model's context; the conversation is compacted before a
                                  request fills ${Math.round(d.compactAtRatio * 100)}% of it (default: the model's when
                                  claw knows it, else ${d.contextWindowTokens})
  --system-prompt-file <file>     its text replaces claw's own system prompt (the environment
                                  and the AGENTS.md instructions still follow it)
  --append-system-prompt <text>   text added at the end of the system prompt
  --trust-workspace               use the workspace's own .claw/config.json, mcp.json and
                                  a2a.json even though it is not trusted (see \`claw trust\`)
`;
}
