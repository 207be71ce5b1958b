import type { Stats } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import {
  errnoCode,
  errorMessage,
  SerialQueue,
  userStateFolder,
  writeFileAtomically,
  type AtomicWriteFileSystem,
} from '@claw/core';
import type { OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import {
  OAuthClientInformationFullSchema,
  OAuthClientInformationSchema,
  OAuthMetadataSchema,
  OAuthProtectedResourceMetadataSchema,
  OAuthTokensSchema,
  OpenIdProviderDiscoveryMetadataSchema,
  type OAuthClientInformationMixed,
  type OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { z } from 'zod';
import { McpAuthStoreError } from './errors.js';

/** The name of the file OAuth tokens are kept in, in the user's claw state folder. */
export const mcpAuthFileName = 'mcp-auth.json';

/**
 * Where claw keeps MCP servers' OAuth tokens (MCP-8): `$XDG_STATE_HOME/claw/mcp-auth.json` when
 * XDG_STATE_HOME is an absolute path, else `$HOME/.local/state/claw/mcp-auth.json`; undefined
 * without either. Never in a workspace: the folder is the user's own, which the model's tools
 * cannot reach (TRUST-4).
 */
export function mcpAuthFile(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const folder = userStateFolder(env);
  return folder === undefined ? undefined : path.join(folder, mcpAuthFileName);
}

/** What claw keeps for one MCP server (by its URL). */
export interface McpAuthEntry {
  /** The client claw registered as (dynamic registration) or the metadata document URL it used. */
  client?: OAuthClientInformationMixed;
  tokens?: OAuthTokens;
  /** When the access token expires (ms since the epoch), from `expires_in` when it came. */
  expiresAt?: number;
  /** When the tokens were saved (ms since the epoch). */
  savedAt?: number;
  /** What discovery found (the authorization server, its metadata): refreshing needs no more. */
  discovery?: OAuthDiscoveryState;
}

const discoverySchema = z.object({
  authorizationServerUrl: z.string(),
  resourceMetadataUrl: z.string().optional(),
  resourceMetadata: OAuthProtectedResourceMetadataSchema.optional(),
  authorizationServerMetadata: z
    .union([OAuthMetadataSchema, OpenIdProviderDiscoveryMetadataSchema])
    .optional(),
});

const clientSchema = z.union([OAuthClientInformationFullSchema, OAuthClientInformationSchema]);

const fileSchema = z.object({
  version: z.literal(1),
  servers: z.record(z.string(), z.record(z.string(), z.unknown())),
});

type StoreFile = { version: 1; servers: Record<string, McpAuthEntry> };

/** The file operations an `McpAuthStore` does (met by `fs/promises`). */
export type McpAuthFileSystem = AtomicWriteFileSystem & {
  mkdir(folder: string, options: { recursive: true; mode: number }): Promise<unknown>;
  readFile(file: string, encoding: 'utf8'): Promise<string>;
  stat(file: string): Promise<Pick<Stats, 'dev' | 'ino' | 'size' | 'mtimeMs' | 'ctimeMs'>>;
};

/** The key of a server's entry: its URL as the URL parser writes it. */
export function authKey(serverUrl: string | URL): string {
  return new URL(serverUrl).href;
}

/**
 * The OAuth tokens and client registrations of MCP servers, per server URL (MCP-8), in one JSON
 * file only the user may read (0600, in a 0700 folder), replaced atomically on every change. A
 * lookup (the SDK asks for the tokens on every request) costs a `stat`: the file is read and
 * parsed again only when it changed, so a login in another claw process is still seen at once.
 * Without a file (no HOME nor XDG_STATE_HOME) tokens last as long as the process.
 */
export class McpAuthStore {
  /** The file; undefined: kept in memory only. */
  readonly file: string | undefined;
  private readonly fileSystem: McpAuthFileSystem;
  private readonly writes = new SerialQueue();
  private memory: StoreFile = { version: 1, servers: {} };
  /** The file as last read, and which version of it (see `fileVersion`). */
  private cached: { version: string; data: StoreFile } | undefined;

  constructor(options: { file: string | undefined; fileSystem?: McpAuthFileSystem }) {
    this.file = options.file;
    this.fileSystem = options.fileSystem ?? fs;
  }

  /**
   * The entry of the server at `serverUrl`, if any.
   *
   * @throws McpAuthStoreError when the file cannot be read or is not one claw wrote.
   */
  async read(serverUrl: string | URL): Promise<McpAuthEntry | undefined> {
    const data = await this.load();
    return data.servers[authKey(serverUrl)];
  }

  /**
   * Changes the entry of the server at `serverUrl`: `change` gets the current one (empty when
   * there is none) and returns the new one, or undefined to remove it. Changes are made one after
   * the other, each on the file as it is then (another process may have changed other entries).
   *
   * @throws McpAuthStoreError when the file cannot be read or written.
   */
  update(
    serverUrl: string | URL,
    change: (entry: McpAuthEntry) => McpAuthEntry | undefined,
  ): Promise<void> {
    const key = authKey(serverUrl);
    return this.writes.run(async () => {
      const data = await this.load();
      const next = change({ ...data.servers[key] });
      const servers = { ...data.servers };
      if (next === undefined || Object.keys(next).length === 0) delete servers[key];
      else servers[key] = next;
      await this.save({ version: 1, servers });
    });
  }

  /** Removes what is kept for the server at `serverUrl`; true when there was something. */
  async remove(serverUrl: string | URL): Promise<boolean> {
    let found = false;
    await this.update(serverUrl, (entry) => {
      found = Object.keys(entry).length > 0;
      return undefined;
    });
    return found;
  }

  private async load(): Promise<StoreFile> {
    const { file } = this;
    if (file === undefined) return this.memory;
    let version: string;
    let text: string;
    try {
      // A write replaces the file (a new inode), and an edit changes its times or size.
      const info = await this.fileSystem.stat(file);
      version = [info.dev, info.ino, info.size, info.mtimeMs, info.ctimeMs].join(':');
      if (this.cached?.version === version) return this.cached.data;
      text = await this.fileSystem.readFile(file, 'utf8');
    } catch (error) {
      this.cached = undefined;
      if (errnoCode(error) === 'ENOENT') return { version: 1, servers: {} };
      throw new McpAuthStoreError(
        `cannot read the MCP login tokens in ${file} (${errorMessage(error)}); check that ` +
        'you may read it',
        { file, cause: error },
      );
    }
    this.cached = undefined;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw notClaws(file, 'it is not valid JSON', error);
    }
    const parsed = fileSchema.safeParse(json);
    if (!parsed.success) throw notClaws(file, 'it is not a file claw wrote', parsed.error);
    const servers: Record<string, McpAuthEntry> = {};
    for (const [key, raw] of Object.entries(parsed.data.servers)) servers[key] = entryOf(raw);
    const data: StoreFile = { version: 1, servers };
    this.cached = { version, data };
    return data;
  }

  private async save(data: StoreFile): Promise<void> {
    const { file } = this;
    if (file === undefined) {
      this.memory = data;
      return;
    }
    try {
      // Only the user may read the tokens (they act as the user on the servers).
      await this.fileSystem.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
      await writeFileAtomically(this.fileSystem, file, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
    } catch (error) {
      throw new McpAuthStoreError(
        `cannot save the MCP login tokens to ${file} (${errorMessage(error)}); check that ` +
        'the folder can be written, or set XDG_STATE_HOME to one that can',
        { file, cause: error },
      );
    }
  }
}

/** One entry as read: a part that does not parse (a newer claw's) counts as absent. */
function entryOf(raw: Record<string, unknown>): McpAuthEntry {
  const entry: McpAuthEntry = {};
  const client = clientSchema.safeParse(raw.client);
  if (client.success) entry.client = client.data;
  const tokens = OAuthTokensSchema.safeParse(raw.tokens);
  if (tokens.success) entry.tokens = tokens.data;
  if (typeof raw.expiresAt === 'number') entry.expiresAt = raw.expiresAt;
  if (typeof raw.savedAt === 'number') entry.savedAt = raw.savedAt;
  const discovery = discoverySchema.safeParse(raw.discovery);
  if (discovery.success) entry.discovery = discovery.data;
  return entry;
}

function notClaws(file: string, why: string, cause: unknown): McpAuthStoreError {
  return new McpAuthStoreError(
    `${file} holds claw's MCP login tokens, but ${why}: remove it (you then log in to your MCP ` +
    'servers again with `claw mcp login <name>`)',
    { file, cause, userError: true },
  );
}
