import { parseArgs, type ParseArgsConfig } from 'node:util';
import { approvalModes, errorMessage } from '@claw/core';
import type { ApprovalMode, SettingOverrides, Settings } from '@claw/runtime';
import { assertSessionId } from '@claw/session-store';
import { UsageError } from './errors.js';

export type OutputFormat = 'text' | 'stream-json';

export const outputFormats: readonly OutputFormat[] = ['text', 'stream-json'];

type NumericSetting = {
  [K in keyof Settings]: Settings[K] extends number ? K : never;
}[keyof Settings];

/** The number flags of CLI-6, the setting each sets, and the smallest value it takes. */
export const numericOptions: ReadonlyArray<{ flag: string; key: NumericSetting; min: number }> = [
  { flag: 'max-turns', key: 'maxTurns', min: 1 },
  { flag: 'max-session-tokens', key: 'maxSessionTokens', min: 0 },
  { flag: 'max-run-tokens', key: 'maxRunTokens', min: 0 },
  { flag: 'max-subagents', key: 'maxSubagents', min: 0 },
  { flag: 'tool-time-budget-ms', key: 'toolTimeBudgetMs', min: 0 },
  { flag: 'call-timeout-ms', key: 'callTimeoutMs', min: 0 },
  { flag: 'first-token-timeout-ms', key: 'firstTokenTimeoutMs', min: 0 },
  { flag: 'retries', key: 'retries', min: 0 },
];

/** What the options of a run say, checked. */
export interface RunOptions {
  /** As given (relative to the current folder); undefined = the current folder. */
  workdir: string | undefined;
  sessionId: string;
  output: OutputFormat;
  /** Undefined when not given: the config file or the default (ask on a TTY, else deny) decides. */
  approval: ApprovalMode | undefined;
  /** The settings the flags set (`--model`, the number flags, `--approval`). */
  overrides: SettingOverrides;
}

export type Command =
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'repl'; options: RunOptions }
  | { kind: 'prompt'; prompt: string; options: RunOptions }
  | { kind: 'demo'; options: RunOptions };

const parseOptions = {
  prompt: { type: 'string', short: 'p' },
  workdir: { type: 'string' },
  session: { type: 'string' },
  output: { type: 'string' },
  approval: { type: 'string' },
  model: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
  ...Object.fromEntries(numericOptions.map((option) => [option.flag, { type: 'string' as const }])),
} satisfies ParseArgsConfig['options'];

const seeHelp = 'run `claw --help` to see the options';

/**
 * Reads the command line (CLI-6): `claw [options]`, `claw -p <text>`, `claw demo`, `--version`,
 * `--help`.
 *
 * @throws UsageError for an unknown option or command, a missing value, a value that is not one
 *   of the allowed ones, or a number flag that is not a whole number in range.
 */
export function parseCommandLine(argv: readonly string[]): Command {
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: [...argv],
      options: parseOptions,
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw translateParseError(error);
  }
  const values = parsed.values;
  if (values.help === true) return { kind: 'help' };
  if (values.version === true) return { kind: 'version' };

  const positionals = parsed.positionals;
  const [command, ...rest] = positionals;
  if (command !== undefined && command !== 'demo') {
    throw new UsageError(
      `unknown command "${command}": the only command is \`claw demo\`; to run one task, ` +
      `use claw -p "${command}"; ${seeHelp}`,
    );
  }
  if (rest.length > 0) {
    throw new UsageError(`unexpected argument "${rest[0]}" after \`claw demo\`; ${seeHelp}`);
  }

  const options = readRunOptions(values);
  const prompt = stringValue(values, 'prompt');
  if (command === 'demo') {
    if (prompt !== undefined) {
      throw new UsageError('`claw demo` runs its own task: drop -p/--prompt, or drop `demo`');
    }
    if (options.workdir !== undefined) {
      throw new UsageError(
        '`claw demo` always works in a fresh temporary folder (it prints where): drop --workdir',
      );
    }
    return { kind: 'demo', options };
  }
  if (prompt !== undefined) {
    if (prompt.trim() === '') {
      throw new UsageError('-p/--prompt needs the task as text, e.g. claw -p "explain main.ts"');
    }
    return { kind: 'prompt', prompt, options };
  }
  if (options.output === 'stream-json') {
    throw new UsageError(
      '--output stream-json is for one task (-p "...") or `claw demo`; the REPL prints text',
    );
  }
  return { kind: 'repl', options };
}

function readRunOptions(values: Record<string, string | boolean | undefined>): RunOptions {
  const overrides: SettingOverrides = {};
  const output = oneOf(values, 'output', outputFormats) ?? 'text';
  const approval = oneOf(values, 'approval', approvalModes);
  if (approval !== undefined) overrides.approval = approval;

  const model = stringValue(values, 'model');
  if (model !== undefined) {
    if (model.trim() === '') throw new UsageError('--model needs a model name, e.g. gpt-4.1-mini');
    overrides.model = model;
  }
  for (const option of numericOptions) {
    const text = stringValue(values, option.flag);
    if (text !== undefined) overrides[option.key] = wholeNumber(option.flag, text, option.min);
  }

  const workdir = stringValue(values, 'workdir');
  if (workdir !== undefined && workdir.trim() === '') {
    throw new UsageError('--workdir needs a folder, e.g. --workdir . or --workdir ~/project');
  }
  const sessionId = stringValue(values, 'session') ?? 'default';
  checkSessionId(sessionId);
  return { workdir, sessionId, output, approval, overrides };
}

function stringValue(
  values: Record<string, string | boolean | undefined>,
  name: string,
): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

function oneOf<T extends string>(
  values: Record<string, string | boolean | undefined>,
  name: string,
  allowed: readonly T[],
): T | undefined {
  const value = stringValue(values, name);
  if (value === undefined) return undefined;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new UsageError(
    `--${name} must be one of ${allowed.join(', ')}, got "${value}"; e.g. --${name} ${allowed[0]}`,
  );
}

function wholeNumber(flag: string, text: string, min: number): number {
  const value = /^\d+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min) {
    throw new UsageError(
      `--${flag} needs a whole number${min > 0 ? ` of at least ${min}` : ' (0 or more)'}, ` +
      `got "${text}"; e.g. --${flag} ${Math.max(min, 10)}`,
    );
  }
  return value;
}

/** Session ids name files (SES-2): the session store's rules, said as a usage error. */
function checkSessionId(id: string): void {
  try {
    assertSessionId(id);
  } catch (error) {
    throw new UsageError(`--session: ${errorMessage(error)} For example: --session work`);
  }
}

function translateParseError(error: unknown): UsageError {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  const named = /'([^']+)'/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && named !== undefined) {
    return new UsageError(`unknown option ${named}; ${seeHelp}`);
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && named !== undefined) {
    const option = named.replace(/ <value>$/, '').replace(', ', '/');
    if (/does not take an argument/.test(message)) {
      return new UsageError(`option ${option} takes no value; ${seeHelp}`);
    }
    return new UsageError(
      `option ${option} needs a value (a value starting with "-" is written ${
        option.split('/').at(-1) ?? option
      }=-value); ${seeHelp}`,
    );
  }
  return new UsageError(`${message}; ${seeHelp}`);
}
