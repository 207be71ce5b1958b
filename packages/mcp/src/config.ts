import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  expandEnvVariables,
  parseConfigJson,
  readOptionalConfig,
  riskLevels,
  type RiskLevel,
} from '@claw/core';
import { z } from 'zod';
import { McpConfigError } from './errors.js';

/** Where a workspace's MCP servers are configured, relative to the workspace root. */
export const mcpConfigFile = path.join('.claw', 'mcp.json');

/** Default time a server has to start, answer `initialize` and list its tools (30 s). */
export const defaultStartupTimeoutMs = 30_000;

/** Default time one call (a tool, a resource read, a prompt) may take (60 s). */
export const defaultCallTimeoutMs = 60_000;

/** setTimeout's limit: a longer delay fires at once. */
export const maxTimerMs = 2_147_483_647;

const riskSchema = z.enum(riskLevels);
const timeoutSchema = z.number().int().positive().max(maxTimerMs);

const serverSchema = z.strictObject({
  /** Optional, as other clients write it; it must agree with `command` / `url`. */
  type: z.enum(['stdio', 'http', 'streamable-http']).optional(),
  command: z.string().min(1).optional(),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  url: z.string().min(1).optional(),
  headers: z.record(z.string(), z.string()).optional(),
  risk: riskSchema.optional(),
  /** Per-tool settings, by the tool's name on the server. */
  tools: z.record(z.string(), z.strictObject({ risk: riskSchema.optional() })).optional(),
  enabled: z.boolean().optional(),
  roots: z.boolean().optional(),
  startupTimeoutMs: timeoutSchema.optional(),
  callTimeoutMs: timeoutSchema.optional(),
});

const fileSchema = z.strictObject({
  mcpServers: z.record(z.string().min(1), serverSchema),
});

type RawServer = z.output<typeof serverSchema>;

interface McpServerCommon {
  /** The server's name: its key in `mcpServers`. */
  name: string;
  /** False: configured but off (`"enabled": false`); nothing is started. */
  enabled: boolean;
  /** Risk of the server's tools (default `dangerous`: every call is asked about). */
  risk: RiskLevel;
  /** Risk of single tools, by their name on the server; overrides `risk`. */
  toolRisk: Readonly<Record<string, RiskLevel>>;
  /**
   * Whether the server is told the workspace as its root (MCP-9; absent: true). False
   * (`"roots": false`): claw declares no roots to it, so a server that would take the roots in
   * place of the folders on its command line (as the filesystem server does) keeps those.
   */
  roots?: boolean;
  startupTimeoutMs: number;
  callTimeoutMs: number;
}

/** A server started as a child process that speaks MCP on its stdin and stdout. */
export interface McpStdioServerConfig extends McpServerCommon {
  transport: 'stdio';
  command: string;
  args: readonly string[];
  /** Added to the minimal environment the child gets (`${VAR}` already expanded). */
  env: Readonly<Record<string, string>>;
}

/** A server reached over Streamable HTTP. */
export interface McpHttpServerConfig extends McpServerCommon {
  transport: 'http';
  url: string;
  /** Sent with every request (`${VAR}` already expanded). */
  headers: Readonly<Record<string, string>>;
}

export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/** A workspace's MCP configuration (MCP-1), checked and with `${VAR}` expanded. */
export interface McpConfig {
  /** The file it was read from (for messages). */
  file: string;
  /** In the order of the file. */
  servers: readonly McpServerConfig[];
}

export interface LoadMcpConfigOptions {
  workDir: string;
  /** Where `${VAR}` is looked up (the app passes the process environment). */
  env: Readonly<Record<string, string | undefined>>;
  signal?: AbortSignal;
}

/**
 * Reads `<workDir>/.claw/mcp.json` (MCP-1). No file: `undefined` (no MCP servers, no error).
 *
 * @throws McpConfigError when the file is not JSON or breaks a rule (see {@link parseMcpConfig}).
 */
export async function loadMcpConfig(options: LoadMcpConfigOptions): Promise<McpConfig | undefined> {
  const file = path.join(options.workDir, mcpConfigFile);
  const text = await readOptionalConfig(file, {
    read: (name, signal) => readFile(name, { encoding: 'utf8', signal }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    fail: (message, cause) => new McpConfigError(message, { file, cause }),
  });
  return text === undefined ? undefined : parseMcpConfig(text, { file, env: options.env });
}

/**
 * Checks the text of an MCP configuration: `{"mcpServers": {"<name>": {...}}}`, each server with
 * exactly one of `command` (with `args`, `env`) or `url` (with `headers`), unknown keys refused.
 * `${VAR}` in the values of `env` and `headers` is replaced by the variable from `env`; a
 * variable that is missing or empty is an error naming it and the server. Disabled servers are
 * checked but not expanded (their variables need not be set).
 *
 * @throws McpConfigError saying what is wrong, where, and what to write instead.
 */
export function parseMcpConfig(
  text: string,
  options: { file: string; env: Readonly<Record<string, string | undefined>> },
): McpConfig {
  const { file } = options;
  const data = parseConfigJson(text, {
    file,
    schema: fileSchema,
    kind: 'MCP',
    example: '{"mcpServers": {"files": {"command": "npx", "args": ["-y", "some-mcp-server"]}}}',
    rules:
      'Each server needs "command" (with optional "args", "env") or "url" (with optional ' +
      '"headers"); optional: "risk" (safe, mutating, dangerous), "tools" ({"<tool>": {"risk": ' +
      '...}}), "enabled", "roots", "startupTimeoutMs", "callTimeoutMs"',
    fail: (message, cause) => new McpConfigError(message, { file, cause }),
  });
  const servers = Object.entries(data.mcpServers).map(([name, raw]) =>
    resolveServer(name, raw, options));
  return { file, servers };
}

function resolveServer(
  name: string,
  raw: RawServer,
  options: { file: string; env: Readonly<Record<string, string | undefined>> },
): McpServerConfig {
  const { file } = options;
  const fail = (message: string): never => {
    throw new McpConfigError(`${file}: MCP server "${name}": ${message}`, { file, server: name });
  };
  const hasCommand = raw.command !== undefined;
  const hasUrl = raw.url !== undefined;
  if (hasCommand && hasUrl) {
    fail('has both "command" and "url"; a server is either a program claw starts (command) or ' +
      'one it reaches over HTTP (url): keep one');
  }
  if (!hasCommand && !hasUrl) {
    fail('needs "command" (a program claw starts, e.g. "npx") or "url" (a Streamable HTTP ' +
      'endpoint, e.g. "https://example.com/mcp")');
  }
  if (hasCommand && (raw.type === 'http' || raw.type === 'streamable-http')) {
    fail(`"type": "${raw.type}" needs "url", not "command"`);
  }
  if (hasUrl && raw.type === 'stdio') fail('"type": "stdio" needs "command", not "url"');
  if (hasUrl && (raw.args !== undefined || raw.env !== undefined)) {
    fail('"args" and "env" are for a "command"; an HTTP server takes "headers"');
  }
  if (hasCommand && raw.headers !== undefined) {
    fail('"headers" are for a "url"; a command takes "args" and "env"');
  }
  const enabled = raw.enabled ?? true;
  const expand = (where: string, values: Record<string, string> | undefined) =>
    enabled ? expandAll(values ?? {}, where, (variable) => options.env[variable], fail) : {};
  const toolRisk: Record<string, RiskLevel> = {};
  for (const [tool, settings] of Object.entries(raw.tools ?? {})) {
    if (settings.risk !== undefined) toolRisk[tool] = settings.risk;
  }
  const common: McpServerCommon = {
    name,
    enabled,
    risk: raw.risk ?? 'dangerous',
    toolRisk,
    roots: raw.roots ?? true,
    startupTimeoutMs: raw.startupTimeoutMs ?? defaultStartupTimeoutMs,
    callTimeoutMs: raw.callTimeoutMs ?? defaultCallTimeoutMs,
  };
  if (raw.command !== undefined) {
    return {
      ...common,
      transport: 'stdio',
      command: raw.command,
      args: raw.args ?? [],
      env: expand('env', raw.env),
    };
  }
  const url = raw.url ?? '';
  let parsedUrl: URL | undefined;
  try {
    parsedUrl = new URL(url);
  } catch {
    parsedUrl = undefined;
  }
  if (parsedUrl === undefined || !['http:', 'https:'].includes(parsedUrl.protocol)) {
    fail(`"url" must be an http:// or https:// address, got ${JSON.stringify(url)}`);
  }
  return { ...common, transport: 'http', url, headers: expand('headers', raw.headers) };
}

function expandAll(
  values: Record<string, string>,
  where: string,
  lookup: (variable: string) => string | undefined,
  fail: (message: string) => never,
): Record<string, string> {
  return expandEnvVariables(values, lookup, ({ kind, key, variable }) => {
    if (kind === 'invalid_name') {
      fail(`${where}.${key} holds "\${${variable}}", which is not a variable name (use ` +
        'letters, digits and "_", e.g. ${API_TOKEN})');
    }
    return fail(`${where}.${key} uses \${${variable}}, but the environment variable ${variable} is ` +
      `${kind === 'not_set' ? 'not set' : 'empty'}: set it in the environment claw runs ` +
      'in (secrets stay out of mcp.json), or set "enabled": false for this server');
  });
}
