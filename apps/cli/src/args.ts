import { parseArgs, type ParseArgsConfig } from 'node:util';
import { approvalModes, errorMessage } from '@claw/core';
import {
  flagParseError,
  oneOfFlag,
  readSettingFlags,
  settingFlagOptions,
  stringFlag,
  type ApprovalMode,
  type SettingOverrides,
} from '@claw/runtime';
import { assertSessionId } from '@claw/session-store';
import { UsageError } from './errors.js';

export type OutputFormat = 'text' | 'stream-json' | 'json';

export const outputFormats: readonly OutputFormat[] = ['text', 'stream-json', 'json'];

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
  /** Show all of the model's thinking, not only its first lines (text output). */
  verbose: boolean;
}

export type Command =
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'repl'; options: RunOptions }
  | { kind: 'prompt'; prompt: string; options: RunOptions }
  | { kind: 'demo'; options: RunOptions }
  /**
   * `claw mcp list`: the workspace's MCP servers, their state and tools; `claw mcp login <name>`
   * and `claw mcp logout <name>`: log in to a `url` server with OAuth, or remove its token.
   */
  | {
    kind: 'mcp';
    action: 'list' | 'login' | 'logout';
    /** The server (login, logout). */
    server?: string;
    workdir: string | undefined;
    trustWorkspace: boolean;
  }
  /** `claw trust`: trust the workspace's own settings, take the trust back, or list (TRUST-3). */
  | { kind: 'trust'; workdir: string | undefined; action: 'trust' | 'revoke' | 'list' }
  /** `claw sessions`: the workspace's saved sessions (CLI-7). */
  | { kind: 'sessions'; workdir: string | undefined }
  /** `claw acp`: an Agent Client Protocol agent on stdio, for editors (ACP-1). */
  | { kind: 'acp'; overrides: SettingOverrides }
  /** `claw acp --help`. */
  | { kind: 'acp-help' };

const parseOptions = {
  prompt: { type: 'string', short: 'p' },
  workdir: { type: 'string' },
  session: { type: 'string' },
  output: { type: 'string' },
  verbose: { type: 'boolean' },
  revoke: { type: 'boolean' },
  list: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
  ...settingFlagOptions,
} satisfies ParseArgsConfig['options'];

const seeHelp = 'run `claw --help` to see the options';

/**
 * Reads the command line (CLI-6): `claw [options]`, `claw -p <text>`, `claw demo`,
 * `claw mcp list|login <name>|logout <name> [--workdir <dir>]`, `claw sessions [--workdir <dir>]`,
 * `--version`, `--help`.
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
    throw flagParseError(error, seeHelp);
  }
  const values = parsed.values;
  if (parsed.positionals[0] === 'acp') return readAcpCommand(parsed.positionals.slice(1), values);
  if (values.help === true) return { kind: 'help' };
  if (values.version === true) return { kind: 'version' };

  const positionals = parsed.positionals;
  const [command, ...rest] = positionals;
  if (command === 'trust') return readTrustCommand(rest, values);
  for (const flag of ['revoke', 'list'] as const) {
    if (values[flag] !== undefined) {
      throw new UsageError(`--${flag} is an option of \`claw trust\` only; ${seeHelp}`);
    }
  }
  if (command === 'mcp') return readMcpCommand(rest, values);
  if (command === 'sessions') {
    return { kind: 'sessions', workdir: onlyWorkdir('claw sessions', rest, values) };
  }
  if (command !== undefined && command !== 'demo') {
    throw new UsageError(
      `unknown command "${command}": the commands are \`claw demo\`, \`claw sessions\`, ` +
      '`claw mcp list`, `claw trust` and `claw acp`; to run one task, use ' +
      `claw -p "${command}"; ${seeHelp}`,
    );
  }
  if (rest.length > 0) {
    throw new UsageError(`unexpected argument "${rest[0]}" after \`claw demo\`; ${seeHelp}`);
  }

  const options = readRunOptions(values);
  const prompt = stringFlag(values, 'prompt');
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
  if (options.output !== 'text') {
    throw new UsageError(
      `--output ${options.output} is for one task (-p "...") or \`claw demo\`; the REPL prints text`,
    );
  }
  return { kind: 'repl', options };
}

/**
 * `claw acp [setting flags]`: the editor gives each session's folder (`session/new`), so no
 * `--workdir`, `--session`, `--output` or `-p`.
 */
function readAcpCommand(
  rest: readonly string[],
  values: Record<string, string | boolean | undefined>,
): Command {
  if (values.help === true) return { kind: 'acp-help' };
  if (rest.length > 0) {
    throw new UsageError(`unexpected argument "${rest[0]}" after \`claw acp\`; run \`claw acp --help\``);
  }
  for (const flag of ['revoke', 'list'] as const) {
    if (values[flag] !== undefined) {
      throw new UsageError(
        `\`claw acp\` takes no --${flag}: it belongs to \`claw trust\`; run \`claw trust --help\``,
      );
    }
  }
  const refused = ['prompt', 'workdir', 'session', 'output', 'version', 'verbose'] as const;
  for (const flag of refused) {
    if (values[flag] !== undefined) {
      throw new UsageError(
        `\`claw acp\` takes no --${flag}: the editor chooses each session's folder and session; ` +
        'run `claw acp --help`',
      );
    }
  }
  return { kind: 'acp', overrides: readSettingFlags(values) };
}

const mcpSubcommands = '`claw mcp list` shows the MCP servers of the workspace, ' +
  '`claw mcp login <name>` logs in to one (OAuth), `claw mcp logout <name>` removes its token';

/**
 * `claw mcp list [--workdir <dir>]`, `claw mcp login <name> [--workdir <dir>]`,
 * `claw mcp logout <name> [--workdir <dir>]` (each with --trust-workspace): no other option.
 */
function readMcpCommand(
  rest: readonly string[],
  values: Record<string, string | boolean | undefined>,
): Command {
  const [subcommand, ...extra] = rest;
  const trustWorkspace = values['trust-workspace'] === true;
  const others = { ...values, 'trust-workspace': undefined };
  if (subcommand === 'list') {
    const workdir = onlyWorkdir('claw mcp list', extra, others);
    return { kind: 'mcp', action: 'list', workdir, trustWorkspace };
  }
  if (subcommand === 'login' || subcommand === 'logout') {
    const [server, ...more] = extra;
    if (server === undefined || server.trim() === '') {
      throw new UsageError(
        `\`claw mcp ${subcommand}\` needs the name of a server in .claw/mcp.json, e.g. ` +
        `claw mcp ${subcommand} github (\`claw mcp list\` shows them)`,
      );
    }
    const workdir = onlyWorkdir(`claw mcp ${subcommand} ${server}`, more, others);
    return { kind: 'mcp', action: subcommand, server, workdir, trustWorkspace };
  }
  throw new UsageError(
    subcommand === undefined
      ? `\`claw mcp\` needs a subcommand: ${mcpSubcommands}`
      : `unknown subcommand "mcp ${subcommand}": ${mcpSubcommands}; ${seeHelp}`,
  );
}

/** `claw trust [--workdir <dir>] [--revoke | --list]`. */
function readTrustCommand(
  rest: readonly string[],
  values: Record<string, string | boolean | undefined>,
): Command {
  if (values.revoke === true && values.list === true) {
    throw new UsageError('`claw trust` takes --revoke or --list, not both; ' + seeHelp);
  }
  const action = values.revoke === true ? 'revoke' : values.list === true ? 'list' : 'trust';
  const others = { ...values, revoke: undefined, list: undefined };
  const workdir = onlyWorkdir('claw trust', rest, others);
  if (action === 'list' && workdir !== undefined) {
    throw new UsageError('`claw trust --list` lists every trusted workspace: drop --workdir');
  }
  return { kind: 'trust', workdir, action };
}

/** The `--workdir` of a command that takes no other option and no argument (`name`). */
function onlyWorkdir(
  name: string,
  extra: readonly string[],
  values: Record<string, string | boolean | undefined>,
): string | undefined {
  if (extra.length > 0) {
    throw new UsageError(`unexpected argument "${extra[0]}" after \`${name}\`; ${seeHelp}`);
  }
  const other = Object.keys(values).find((flag) => flag !== 'workdir' && values[flag] !== undefined);
  if (other !== undefined) {
    throw new UsageError(`\`${name}\` takes only --workdir, not --${other}; ${seeHelp}`);
  }
  const workdir = stringFlag(values, 'workdir');
  if (workdir !== undefined && workdir.trim() === '') {
    throw new UsageError('--workdir needs a folder, e.g. --workdir . or --workdir ~/project');
  }
  return workdir;
}

function readRunOptions(values: Record<string, string | boolean | undefined>): RunOptions {
  const output = oneOfFlag(values, 'output', outputFormats) ?? 'text';
  const overrides: SettingOverrides = readSettingFlags(values);
  const approval = oneOfFlag(values, 'approval', approvalModes);
  const workdir = stringFlag(values, 'workdir');
  if (workdir !== undefined && workdir.trim() === '') {
    throw new UsageError('--workdir needs a folder, e.g. --workdir . or --workdir ~/project');
  }
  const sessionId = stringFlag(values, 'session') ?? 'default';
  checkSessionId(sessionId);
  return { workdir, sessionId, output, approval, overrides, verbose: values.verbose === true };
}

/** Session ids name files (SES-2): the session store's rules, said as a usage error. */
function checkSessionId(id: string): void {
  try {
    assertSessionId(id);
  } catch (error) {
    throw new UsageError(`--session: ${errorMessage(error)} For example: --session work`);
  }
}
