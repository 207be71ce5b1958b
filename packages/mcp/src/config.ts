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
  /** `"oauth"` or `{"type": "oauth", ...}`; checked in `resolveAuth` for clearer messages. */
  auth: z.unknown().optional(),
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

const oauthSchema = z.strictObject({
  type: z.literal('oauth'),
  clientId: z.string().min(1).optional(),
  clientSecret: z.string().min(1).optional(),
  clientMetadataUrl: z.string().min(1).optional(),
  scopes: z.array(z.string().regex(
    /^[\x21\x23-\x5b\x5d-\x7e]+$/,
    'a scope is one word, without spaces, quotes or backslashes',
  )).optional(),
});

const oauthExample = '"auth": "oauth", or "auth": {"type": "oauth", "clientId": "...", ' +
  '"clientSecret": "${CLIENT_SECRET}", "scopes": ["read"]}';

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

/**
 * How claw logs in to a server with OAuth 2.1 (MCP-8): `"auth": "oauth"` in mcp.json, or an
 * object with the client claw is registered as. Without `clientId` claw registers itself (dynamic
 * client registration) or uses `clientMetadataUrl` where the authorization server takes one.
 */
export interface McpOAuthConfig {
  type: 'oauth';
  /** A client registered with the authorization server beforehand (`${VAR}` expanded). */
  clientId?: string;
  /** That client's secret, if it has one (`${VAR}` expanded; keep it in the environment). */
  clientSecret?: string;
  /**
   * An https URL of a client metadata document (SEP-991) used as the client id where the
   * authorization server supports those, in place of registering.
   */
  clientMetadataUrl?: string;
  /** Scopes asked for when neither the server's 401 nor its metadata names any. */
  scopes?: readonly string[];
}

/** A server reached over Streamable HTTP. */
export interface McpHttpServerConfig extends McpServerCommon {
  transport: 'http';
  url: string;
  /** Sent with every request (`${VAR}` already expanded). */
  headers: Readonly<Record<string, string>>;
  /**
   * OAuth (MCP-8). Absent: claw still logs in with OAuth when the server answers 401 and
   * publishes OAuth metadata, unless `headers` carry an `Authorization` of their own.
   */
  auth?: McpOAuthConfig;
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
      '"headers", "auth"); optional: "risk" (safe, mutating, dangerous), "tools" ({"<tool>": {"risk": ' +
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
  if (hasCommand && raw.auth !== undefined) {
    fail('"auth" is for a "url": a command gets its credentials from "env"');
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
  const headers = expand('headers', raw.headers);
  const auth = resolveAuth(raw, enabled, options.env, fail);
  if (auth !== undefined && Object.keys(raw.headers ?? {}).some(isAuthorizationHeader)) {
    fail('has both "auth" and an "Authorization" header: claw sends the token it gets by ' +
      'logging in (OAuth) as the Authorization header; remove the header, or remove "auth" to ' +
      'send your own token');
  }
  return { ...common, transport: 'http', url, headers, ...(auth === undefined ? {} : { auth }) };
}

/** True for the header that carries credentials (HTTP header names ignore case). */
export function isAuthorizationHeader(name: string): boolean {
  return name.toLowerCase() === 'authorization';
}

function resolveAuth(
  raw: RawServer,
  enabled: boolean,
  env: Readonly<Record<string, string | undefined>>,
  fail: (message: string) => never,
): McpOAuthConfig | undefined {
  if (raw.auth === undefined) return undefined;
  if (raw.auth === 'oauth') return { type: 'oauth' };
  const parsed = oauthSchema.safeParse(raw.auth);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) =>
      `${['auth', ...issue.path.map(String)].join('.')}: ${issue.message}`);
    return fail(`"auth" is not valid (${problems.join('; ')}); write ${oauthExample}`);
  }
  const { clientId, clientSecret, clientMetadataUrl, scopes } = parsed.data;
  if (clientSecret !== undefined && clientId === undefined) {
    fail('"auth" has a "clientSecret" but no "clientId": give the id of the client the secret ' +
      'belongs to, or remove the secret');
  }
  if (clientMetadataUrl !== undefined && !isMetadataDocumentUrl(clientMetadataUrl)) {
    fail('"auth.clientMetadataUrl" must be an https:// address with a path (the client ' +
      `metadata document), got ${JSON.stringify(clientMetadataUrl)}`);
  }
  const credentials = enabled
    ? expandAll(
        {
          ...(clientId === undefined ? {} : { clientId }),
          ...(clientSecret === undefined ? {} : { clientSecret }),
        },
        'auth',
        (variable) => env[variable],
        fail,
      )
    : {};
  return {
    type: 'oauth',
    ...credentials,
    ...(clientMetadataUrl === undefined ? {} : { clientMetadataUrl }),
    ...(scopes === undefined ? {} : { scopes }),
  };
}

function isMetadataDocumentUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && url.pathname !== '/';
  } catch {
    return false;
  }
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
