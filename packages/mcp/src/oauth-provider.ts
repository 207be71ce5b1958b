import { randomBytes } from 'node:crypto';
import { errorMessage, linkAbortSignal, raceAbort } from '@claw/core';
import {
  refreshAuthorization,
  selectResourceURL,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { McpAuthEntry, McpAuthStore } from './auth-store.js';
import type { McpOAuthConfig } from './config.js';
import { McpAuthError, McpLoginError, McpNeedsLoginError, loginCommand } from './errors.js';
import { RedirectListener } from './redirect-listener.js';
import type { SetTimer } from './timers.js';

/** How long a login waits for the browser to come back (default 5 minutes). */
export const defaultAuthorizationTimeoutMs = 5 * 60_000;

/**
 * How claw logs in to `url` servers with OAuth (MCP-8), for `McpServers`.
 */
export interface McpOAuthOptions {
  /**
   * True: claw may ask the user to log in (a loopback redirect listener on 127.0.0.1, the login
   * page shown with `openUrl`), as `claw mcp login` does. False (default): it never does; a
   * server that needs a login is `needs_login` and its error names `claw mcp login <name>`.
   * Servers, `-p` and the REPL are never interactive.
   */
  interactive?: boolean;
  /**
   * Shows the user the authorization server's login page: opens a browser, or prints the URL.
   * Needed when `interactive`.
   */
  openUrl?: (url: URL, server: string) => Promise<void> | void;
  /**
   * The file tokens are kept in (see `mcpAuthFile`; `openMcpServers` finds it from the
   * environment). Absent: tokens last as long as the process.
   */
  authFile?: string;
  /** How long a login waits for the browser to come back (default 5 minutes). */
  authorizationTimeoutMs?: number;
  /** The clock tokens expire by (default `Date.now`). */
  now?: () => number;
  /**
   * Ignore the token kept for a server and log in anew (what `claw mcp login` does); the kept
   * one is replaced once the new one arrives.
   */
  freshLogin?: boolean;
}

/** An authorization the SDK started: the page to show, and what checks and finishes it. */
export interface PendingAuthorization {
  url: URL;
  state: string;
  codeVerifier: string;
}

export interface ClawOAuthProviderOptions {
  /** The server's name in mcp.json (for messages). */
  server: string;
  serverUrl: string;
  /** `"auth"` of the server; undefined when claw found by itself that it uses OAuth. */
  config: McpOAuthConfig | undefined;
  store: McpAuthStore;
  clientInfo: { name: string; version: string };
  interactive: boolean;
  freshLogin: boolean;
  now: () => number;
}

/** A redirect URI for when no listener runs (never used to log in: claw does not ask then). */
const idleRedirectUrl = 'http://127.0.0.1/callback';

/** Tokens saved this recently are not dropped because an older refresh token failed. */
const freshTokensMs = 10_000;

/** The most before expiry an access token is refreshed (less for short-lived tokens). */
const refreshAheadMs = 60_000;

/**
 * claw's `OAuthClientProvider` for one `url` server (MCP-8). The SDK's `auth()` does the OAuth
 * work (discovery, dynamic registration or the configured client, PKCE, code exchange, refresh)
 * and calls this for what is claw's: where tokens and the client registration are kept (the
 * `McpAuthStore`, per server URL; the PKCE verifier and `state` stay in memory), how the user is
 * asked (interactive only: the loopback redirect; the connection shows the page and waits), and
 * what happens where nobody may be asked (`McpNeedsLoginError` naming `claw mcp login`).
 * Access tokens are refreshed shortly before they expire, and again by the SDK whenever the
 * server turns one down.
 */
export class ClawOAuthProvider implements OAuthClientProvider {
  private readonly options: ClawOAuthProviderOptions;
  private listener: RedirectListener | undefined;
  private listening: Promise<void> | undefined;
  private verifier: string | undefined;
  private pending: PendingAuthorization | undefined;
  private discovered: OAuthDiscoveryState | undefined;
  private refreshing: Promise<OAuthTokens | undefined> | undefined;
  private failedRefreshToken: string | undefined;
  /** Registered anew: the kept registration names another redirect URI. */
  private registerAgain = false;
  /** Tokens were dropped because the authorization server no longer took them. */
  private droppedTokens = false;
  /** Tokens were saved by this provider (a login or a refresh). */
  private savedHere = false;
  /** Tokens of this server were used (kept or got here): the server is known to use OAuth. */
  private usedTokens = false;
  /** Logins finished (a code exchanged for tokens) by this provider. */
  logins = 0;

  constructor(options: ClawOAuthProviderOptions) {
    this.options = options;
  }

  /** True when the server is configured for OAuth or claw used OAuth tokens with it. */
  get usesOAuth(): boolean {
    return this.options.config !== undefined || this.usedTokens;
  }

  get redirectUrl(): string {
    return this.listener?.url ?? idleRedirectUrl;
  }

  get clientMetadataUrl(): string | undefined {
    return this.options.config?.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const scopes = this.options.config?.scopes;
    return {
      client_name: this.options.clientInfo.name,
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      // A native app keeps no secret of its own (RFC 8252): PKCE protects the code.
      token_endpoint_auth_method: 'none',
      software_id: this.options.clientInfo.name,
      software_version: this.options.clientInfo.version,
      ...(scopes === undefined || scopes.length === 0 ? {} : { scope: scopes.join(' ') }),
    };
  }

  state(): string {
    return randomBytes(32).toString('base64url');
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    this.checkOAuthOffered();
    const { config } = this.options;
    if (config?.clientId !== undefined) {
      return {
        client_id: config.clientId,
        ...(config.clientSecret === undefined ? {} : { client_secret: config.clientSecret }),
      };
    }
    const client = this.registerAgain ? undefined : (await this.entry())?.client;
    if (client === undefined && !this.options.interactive) throw await this.needsLogin();
    return client;
  }

  async saveClientInformation(information: OAuthClientInformationMixed): Promise<void> {
    // A configured client stays in mcp.json (its secret in the environment), never in the file.
    if (information.client_id === this.options.config?.clientId) return;
    this.registerAgain = false;
    await this.options.store.update(this.options.serverUrl, (entry) => ({
      ...entry,
      client: information,
    }));
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    if (this.options.freshLogin && !this.savedHere) return undefined;
    // Asked on every request: a token file that cannot be read fails only the servers that are
    // known to use OAuth (the others find out when they ask for a login).
    const entry = await this.entry().catch((error: unknown) => {
      if (this.usesOAuth) throw error;
      return undefined;
    });
    const tokens = entry?.tokens;
    if (entry === undefined || tokens === undefined) return undefined;
    this.usedTokens = true;
    if (!this.dueForRefresh(entry, tokens)) return tokens;
    this.refreshing ??= this.refreshAhead(entry, tokens).finally(() => {
      this.refreshing = undefined;
    });
    return (await this.refreshing) ?? tokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    const now = this.options.now();
    const discovery = this.discovered;
    await this.options.store.update(this.options.serverUrl, (entry) => {
      const { expiresAt: _expiresAt, ...rest } = entry;
      return {
        ...rest,
        tokens,
        savedAt: now,
        ...(tokens.expires_in === undefined ? {} : { expiresAt: now + tokens.expires_in * 1000 }),
        ...(discovery === undefined ? {} : { discovery }),
      };
    });
    this.savedHere = true;
    this.usedTokens = true;
    this.failedRefreshToken = undefined;
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    if (!this.options.interactive) throw await this.needsLogin();
    // Kept with the verifier it goes with: the connection shows the page and waits, and an
    // authorization started meanwhile (in the background) cannot swap the verifier.
    this.pending = {
      url: authorizationUrl,
      state: authorizationUrl.searchParams.get('state') ?? '',
      codeVerifier: this.verifier ?? '',
    };
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.verifier === undefined) {
      throw new Error('no PKCE code verifier: this login was not started by claw');
    }
    return this.verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovered = state;
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    this.discovered ??= (await this.entry())?.discovery;
    return this.discovered;
  }

  async invalidateCredentials(
    scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery',
  ): Promise<void> {
    const { store, serverUrl } = this.options;
    switch (scope) {
      case 'all':
        this.discovered = undefined;
        this.verifier = undefined;
        await store.update(serverUrl, () => undefined);
        return;
      case 'client':
        await store.update(serverUrl, ({ client: _client, ...rest }) => rest);
        return;
      case 'tokens': {
        // Two requests turned down at once both refresh; with rotating refresh tokens the second
        // fails, and must not drop what the first just got.
        const now = this.options.now();
        await store.update(serverUrl, (entry) => {
          if (entry.savedAt !== undefined && now - entry.savedAt < freshTokensMs) return entry;
          this.droppedTokens = entry.tokens !== undefined;
          const { tokens: _tokens, expiresAt: _expiresAt, savedAt: _savedAt, ...rest } = entry;
          return rest;
        });
        return;
      }
      case 'verifier':
        this.verifier = undefined;
        return;
      case 'discovery':
        this.discovered = undefined;
        await store.update(serverUrl, ({ discovery: _discovery, ...rest }) => rest);
        return;
    }
  }

  /**
   * Interactive only: starts the loopback redirect listener (once), on the port the kept
   * registration names when it is free, so that its redirect URI still holds.
   */
  prepare(): Promise<void> {
    if (!this.options.interactive) return Promise.resolve();
    this.listening ??= this.listen();
    return this.listening;
  }

  /** The authorization the SDK started last and nobody took yet, if any. */
  takePending(): PendingAuthorization | undefined {
    const { pending } = this;
    this.pending = undefined;
    return pending;
  }

  /**
   * Has the user log in: shows the page with `openUrl`, waits for the browser to come back to
   * the listener with the right `state`, and has the transport exchange the code for tokens
   * (`finishAuth`: PKCE verifier, token endpoint, saved with `saveTokens`).
   *
   * @throws McpLoginError when the page cannot be shown, nobody comes back within `timeoutMs`,
   *   the authorization server refuses, or the code cannot be exchanged; the signal's reason
   *   when it aborts.
   */
  async finishAuthorization(
    pending: PendingAuthorization,
    transport: StreamableHTTPClientTransport,
    options: {
      openUrl: ((url: URL, server: string) => Promise<void> | void) | undefined;
      timeoutMs: number;
      setTimer: SetTimer;
      signal?: AbortSignal;
    },
  ): Promise<void> {
    const { server } = this.options;
    const { listener } = this;
    const { openUrl } = options;
    if (listener === undefined || openUrl === undefined) {
      throw new McpNeedsLoginError(server);
    }
    const minutes = Math.round(options.timeoutMs / 60_000);
    // Stops the wait when the page cannot be shown (or the caller's signal aborts).
    const stop = new AbortController();
    const waiting = linkAbortSignal(options.signal, stop.signal);
    const answer = listener.wait(pending.state, {
      timeoutMs: options.timeoutMs,
      setTimer: options.setTimer,
      signal: waiting.signal,
      onTimeout: () => new McpLoginError(
        `logging in to MCP server "${server}" did not finish: the browser did not come back ` +
        `within ${minutes >= 1 ? `${minutes} minutes` : `${options.timeoutMs} ms`}; run ` +
        `\`${loginCommand(server)}\` to try again`,
        server,
      ),
    });
    try {
      try {
        await raceAbort(Promise.resolve(openUrl(pending.url, server)), waiting.signal);
      } catch (error) {
        stop.abort(error);
        if (options.signal?.aborted === true) throw error;
        throw new McpLoginError(
          `cannot show the login page of MCP server "${server}" (${errorMessage(error)}); ` +
          `run \`${loginCommand(server)}\` to try again`,
          server,
          error,
        );
      }
      const result = await answer;
      if ('error' in result) {
        throw new McpLoginError(
          `logging in to MCP server "${server}" did not succeed: the authorization server said ` +
          `${result.error}${result.description === undefined ? '' : ` (${result.description})`}; ` +
          `run \`${loginCommand(server)}\` to try again`,
          server,
        );
      }
      this.verifier = pending.codeVerifier;
      try {
        await raceAbort(transport.finishAuth(result.code), options.signal);
      } catch (error) {
        if (options.signal?.aborted === true) throw error;
        throw new McpLoginError(
          `logging in to MCP server "${server}" did not succeed: the authorization server did ` +
          `not give a token for the code (${errorMessage(error)}); run ` +
          `\`${loginCommand(server)}\` to try again`,
          server,
          error,
        );
      }
      this.logins += 1;
    } finally {
      answer.catch(() => undefined);
      waiting.dispose();
    }
  }

  /** Answers the browser brought that claw refused (a wrong or missing `state`). */
  get refusedAnswers(): number {
    return this.listener?.refused ?? 0;
  }

  /** Stops the redirect listener. */
  async close(): Promise<void> {
    const { listening } = this;
    this.listening = undefined;
    await listening?.catch(() => undefined);
    const { listener } = this;
    this.listener = undefined;
    await listener?.close();
  }

  private async listen(): Promise<void> {
    const client = (await this.entry())?.client;
    const registered = client !== undefined && 'redirect_uris' in client
      ? client.redirect_uris
      : [];
    const port = registered.map(loopbackPort).find((found) => found !== undefined);
    this.listener = await RedirectListener.start(port === undefined ? {} : { port });
    // Another port than the registration names: register anew, for authorization servers that
    // match redirect URIs exactly (RFC 8252 asks them to ignore a loopback port; not all do).
    this.registerAgain = registered.length > 0 && !registered.includes(this.listener.url);
  }

  private async entry(): Promise<McpAuthEntry | undefined> {
    return this.options.store.read(this.options.serverUrl);
  }

  /**
   * A server not configured for OAuth is taken for one that uses it only when it publishes OAuth
   * metadata; otherwise its 401 is about the credentials in `headers`, or their absence.
   */
  private checkOAuthOffered(): void {
    if (this.options.config !== undefined) return;
    const found = this.discovered;
    if (found?.resourceMetadata === undefined && found?.authorizationServerMetadata === undefined) {
      throw new McpAuthError(this.options.server, 401);
    }
  }

  private async needsLogin(): Promise<McpNeedsLoginError> {
    const kept = (await this.entry())?.tokens !== undefined;
    const expired = (kept || this.droppedTokens) && !this.options.freshLogin;
    return new McpNeedsLoginError(this.options.server, { expired });
  }

  private dueForRefresh(entry: McpAuthEntry, tokens: OAuthTokens): boolean {
    const { expiresAt, savedAt } = entry;
    if (expiresAt === undefined || tokens.refresh_token === undefined) return false;
    if (tokens.refresh_token === this.failedRefreshToken) return false;
    const lifetime = savedAt === undefined ? Infinity : expiresAt - savedAt;
    return this.options.now() >= expiresAt - Math.min(refreshAheadMs, lifetime / 2);
  }

  /**
   * Refreshes tokens about to expire with the SDK's `refreshAuthorization`, before the server
   * turns the access token down. Undefined when it cannot (the SDK refreshes, or asks for a login,
   * once the server does turn it down).
   */
  private async refreshAhead(
    entry: McpAuthEntry,
    tokens: OAuthTokens,
  ): Promise<OAuthTokens | undefined> {
    const discovery = this.discovered ?? entry.discovery;
    const refreshToken = tokens.refresh_token;
    const { config } = this.options;
    const client = config?.clientId === undefined
      ? entry.client
      : {
          client_id: config.clientId,
          ...(config.clientSecret === undefined ? {} : { client_secret: config.clientSecret }),
        };
    if (discovery === undefined || refreshToken === undefined || client === undefined) {
      return undefined;
    }
    try {
      const { resourceMetadata, authorizationServerMetadata } = discovery;
      const selected = await selectResourceURL(this.options.serverUrl, this, resourceMetadata);
      // As the SDK's auth() does: the metadata's resource as written (a parsed URL adds a "/").
      const resource = selected !== undefined && resourceMetadata !== undefined
        ? resourceMetadata.resource
        : selected;
      const fresh = await refreshAuthorization(discovery.authorizationServerUrl, {
        ...(authorizationServerMetadata === undefined
          ? {}
          : { metadata: authorizationServerMetadata }),
        clientInformation: client,
        refreshToken,
        ...(resource === undefined ? {} : { resource }),
      });
      const saved = { ...fresh, issuer: discovery.authorizationServerUrl };
      await this.saveTokens(saved);
      return saved;
    } catch {
      // Not again with this refresh token; the SDK tries once the server turns the token down.
      this.failedRefreshToken = refreshToken;
      return undefined;
    }
  }
}

function loopbackPort(uri: string): number | undefined {
  try {
    const url = new URL(uri);
    if (url.protocol !== 'http:' || url.hostname !== '127.0.0.1' || url.port === '') {
      return undefined;
    }
    return Number(url.port);
  } catch {
    return undefined;
  }
}
