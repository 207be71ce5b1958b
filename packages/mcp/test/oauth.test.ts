// MCP-8: OAuth 2.1 for `url` servers, against a real MCP server behind a real authorization server
// (fixtures/oauth-server.mjs: the SDK's own server-side auth pieces) on 127.0.0.1. The "browser" is
// fetch: it opens the login page, and the authorization server sends it back to claw's loopback
// listener, as a user who is logged in and consents would be.
import fsPromises, { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { isUserError } from '@claw/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  McpAuthError,
  McpAuthStore,
  McpAuthStoreError,
  McpConfigError,
  McpLoginError,
  McpNeedsLoginError,
  loginMcpServer,
  logoutMcpServer,
  mcpAuthFile,
  parseMcpConfig,
  type McpOAuthOptions,
} from '../src/index.js';
import { ManualTimers, cleanUp, eventually, openServers, run, tempDir } from './helpers.js';
import { startOAuthServer, type OAuthServer, type OAuthServerOptions } from './fixtures/oauth-server.mjs';

const started: OAuthServer[] = [];
const closers: Array<() => Promise<void>> = [];

afterEach(async () => {
  await cleanUp();
  await Promise.all(started.splice(0).map((server) => server.close()));
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function oauthServer(options: OAuthServerOptions = {}): Promise<OAuthServer> {
  const server = await startOAuthServer(options);
  started.push(server);
  return server;
}

/** A user folder for claw's state and a workspace, apart; the token file as claw finds it. */
async function folders() {
  const stateHome = await tempDir('claw-mcp-state-');
  const workDir = await tempDir('claw-mcp-work-');
  const authFile = mcpAuthFile({ XDG_STATE_HOME: stateHome, HOME: workDir }) as string;
  return { stateHome, workDir, authFile };
}

/** A browser that follows the login page's redirects; records each page it was asked to open. */
function fetchBrowser() {
  const opened: URL[] = [];
  const openUrl = async (url: URL): Promise<void> => {
    opened.push(url);
    const response = await fetch(url);
    await response.body?.cancel();
  };
  return { opened, openUrl };
}

function interactive(authFile: string, openUrl: McpOAuthOptions['openUrl']): McpOAuthOptions {
  return { interactive: true, authFile, openUrl };
}

async function tokenFile(authFile: string) {
  return JSON.parse(await readFile(authFile, 'utf8')) as {
    version: number;
    servers: Record<string, {
      tokens?: { access_token: string; refresh_token?: string };
      client?: { client_id: string };
    }>;
  };
}

async function filesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
}

describe('logging in (interactive)', () => {
  it('discovers the servers, registers, logs in with PKCE and state, and keeps the token 0600 outside the workspace', async () => {
    const server = await oauthServer();
    const { stateHome, workDir, authFile } = await folders();
    const browser = fetchBrowser();
    const { servers, warnings } = openServers(
      { remote: { url: server.url, auth: 'oauth' } },
      { workDir, oauth: interactive(authFile, browser.openUrl) },
    );
    await servers.ready();
    expect(servers.status()[0]).toMatchObject({ state: 'ready', tools: ['mcp_remote_whoami', 'mcp_remote_echo'] });
    expect(warnings).toEqual([]);

    // Discovery and dynamic client registration, with claw's loopback redirect URI.
    const [registration] = server.log.registrations;
    expect(server.log.registrations).toHaveLength(1);
    expect(registration?.redirect_uris).toEqual([expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/callback$/)]);
    expect(registration?.grant_types).toEqual(['authorization_code', 'refresh_token']);
    // One login page, with PKCE (S256) and a state, for this resource.
    expect(browser.opened).toHaveLength(1);
    const page = browser.opened[0] as URL;
    expect(page.origin + page.pathname).toBe(`${server.issuer}/authorize`);
    expect(page.searchParams.get('code_challenge_method')).toBe('S256');
    expect(page.searchParams.get('state')).toMatch(/^[\w-]{43}$/);
    const [authorization] = server.log.authorizations;
    expect(authorization).toMatchObject({
      clientId: registration?.client_id,
      state: page.searchParams.get('state'),
      resource: server.url,
      redirectUri: registration?.redirect_uris[0],
    });
    // The SDK's token endpoint checked the verifier against the challenge.
    expect(server.log.tokenRequests).toEqual([{ grantType: 'authorization_code', resource: server.url }]);
    // The token is the one the server sees.
    expect(JSON.parse((await run(servers.get('mcp_remote_whoami'), {})).content))
      .toEqual({ clientId: registration?.client_id, scopes: [] });

    // Kept for the server's URL, only the user may read it, in their state folder.
    expect(authFile).toBe(path.join(stateHome, 'claw', 'mcp-auth.json'));
    expect((await stat(authFile)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(authFile))).mode & 0o777).toBe(0o700);
    const kept = await tokenFile(authFile);
    const issued = server.log.issued[0];
    expect(kept.servers[server.url]?.tokens?.access_token).toBe(issued?.access_token);
    expect(kept.servers[server.url]?.tokens?.refresh_token).toBe(issued?.refresh_token);
    // Nothing in the workspace holds it.
    for (const file of await filesUnder(workDir)) {
      expect(await readFile(file, 'utf8')).not.toContain(issued?.access_token);
    }
  });

  it('refuses an answer whose state is not the one it sent, and takes the right one', async () => {
    const server = await oauthServer();
    const { workDir, authFile } = await folders();
    const refusals: number[] = [];
    // A browser that is first sent back with a forged state (and with none), then with the real one.
    const openUrl = async (url: URL): Promise<void> => {
      const answer = await fetch(url, { redirect: 'manual' });
      const back = new URL(answer.headers.get('location') as string);
      const forged = new URL(back);
      forged.searchParams.set('state', 'forged-state');
      forged.searchParams.set('code', 'attacker-code');
      refusals.push((await fetch(forged)).status);
      const stateless = new URL(back);
      stateless.searchParams.delete('state');
      refusals.push((await fetch(stateless)).status);
      const real = await fetch(back);
      expect(real.status).toBe(200);
      expect(await real.text()).toContain('You are logged in');
    };
    const { servers } = openServers(
      { remote: { url: server.url, auth: 'oauth' } },
      { workDir, oauth: interactive(authFile, openUrl) },
    );
    await servers.ready();
    expect(refusals).toEqual([400, 400]);
    expect(servers.status()[0]?.state).toBe('ready');
    expect(servers.connection('remote')?.refusedLoginAnswers).toBe(2);
    // Only the real code was exchanged.
    expect(server.log.tokenRequests).toHaveLength(1);
  });

  it('with only a wrong state coming back, the login ends after its timeout, and says so', async () => {
    const server = await oauthServer();
    const { workDir, authFile } = await folders();
    const timers = new ManualTimers();
    let sentBack = false;
    const openUrl = async (url: URL): Promise<void> => {
      const answer = await fetch(url, { redirect: 'manual' });
      const back = new URL(answer.headers.get('location') as string);
      back.searchParams.set('state', 'forged-state');
      expect((await fetch(back)).status).toBe(400);
      sentBack = true;
    };
    const { servers, warnings } = openServers(
      { remote: { url: server.url, auth: 'oauth' } },
      {
        workDir,
        setTimer: timers.setTimer,
        oauth: { ...interactive(authFile, openUrl), authorizationTimeoutMs: 4321 },
      },
    );
    servers.start();
    await eventually(() => sentBack && timers.waiting(4321).length === 1, 'the login waits for the browser');
    expect(timers.fire(4321)).toBe(1);
    await servers.ready();
    expect(servers.status()[0]?.state).toBe('failed');
    expect(servers.connection('remote')?.lastFailure).toBeInstanceOf(McpLoginError);
    expect(warnings[0]?.message).toMatch(/^logging in to MCP server "remote" did not finish: the browser did not come back within 4321 ms; run `claw mcp login remote` to try again/);
    expect(server.log.tokenRequests).toEqual([]);
    await expect(readFile(authFile, 'utf8').then((text) => text.includes('"tokens"'))).resolves.toBe(false);
  });

  it('a login the user declines fails with what the authorization server said', async () => {
    const server = await oauthServer({ deny: true });
    const { workDir, authFile } = await folders();
    const { servers } = openServers(
      { remote: { url: server.url, auth: 'oauth' } },
      { workDir, oauth: interactive(authFile, fetchBrowser().openUrl) },
    );
    await servers.ready();
    expect(servers.status()[0]?.state).toBe('failed');
    expect(servers.status()[0]?.lastError).toBe('logging in to MCP server "remote" did not succeed: the authorization server said ' +
      'access_denied (the user said no); run `claw mcp login remote` to try again');
  });

  it('a server without "auth" that answers 401 and publishes OAuth metadata is logged in to as well', async () => {
    const server = await oauthServer();
    const { workDir, authFile } = await folders();
    const browser = fetchBrowser();
    const { servers } = openServers(
      { remote: { url: server.url } },
      { workDir, oauth: interactive(authFile, browser.openUrl) },
    );
    await servers.ready();
    expect(servers.status()[0]?.state).toBe('ready');
    expect(browser.opened).toHaveLength(1);
  });

  it('a configured client is used as it is (no registration), and its secret never goes to the file', async () => {
    const server = await oauthServer();
    const { workDir, authFile } = await folders();
    // Registered beforehand, as an administrator would.
    const registered = await fetch(`${server.issuer}/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'team claw',
        redirect_uris: ['http://127.0.0.1/callback'],
        token_endpoint_auth_method: 'client_secret_post',
      }),
    });
    const client = await registered.json() as { client_id: string; client_secret: string };
    expect(client.client_secret).toEqual(expect.any(String));
    const browser = fetchBrowser();
    const { servers } = openServers(
      { remote: { url: server.url, auth: { type: 'oauth', clientId: client.client_id, clientSecret: '${SECRET}' } } },
      { workDir, env: { SECRET: client.client_secret }, oauth: interactive(authFile, browser.openUrl) },
    );
    await servers.ready();
    expect(servers.status()[0]?.state).toBe('ready');
    expect(server.log.registrations).toHaveLength(1);
    expect(server.log.authorizations[0]?.clientId).toBe(client.client_id);
    const text = await readFile(authFile, 'utf8');
    expect(text).not.toContain(client.client_secret);
    expect((await tokenFile(authFile)).servers[server.url]?.client).toBeUndefined();
  });
});

describe('the kept token', () => {
  /** Logs in once (interactive), closes, and returns what the next start needs. */
  async function loggedIn(options: OAuthServerOptions = {}) {
    const server = await oauthServer(options);
    const { workDir, authFile } = await folders();
    const browser = fetchBrowser();
    const first = openServers({ remote: { url: server.url, auth: 'oauth' } }, { workDir, oauth: interactive(authFile, browser.openUrl) });
    await first.servers.ready();
    expect(first.servers.status()[0]?.state).toBe('ready');
    await first.servers.close();
    return { server, workDir, authFile, browser };
  }

  it('is used on the next start: no login, nothing opened, even without anyone to ask', async () => {
    const { server, workDir, authFile, browser } = await loggedIn();
    const { servers, warnings } = openServers({ remote: { url: server.url, auth: 'oauth' } }, { workDir, oauth: { authFile } });
    await servers.ready();
    expect(servers.status()[0]?.state).toBe('ready');
    expect(warnings).toEqual([]);
    expect(browser.opened).toHaveLength(1);
    expect(server.log.authorizations).toHaveLength(1);
    expect(server.log.registrations).toHaveLength(1);
    expect((await run(servers.get('mcp_remote_echo'), { text: 'hi' })).content).toBe('hi');
  });

  it('is refreshed when the server turns it down (it expired), and the new one is kept', async () => {
    const { server, workDir, authFile } = await loggedIn();
    const { servers } = openServers({ remote: { url: server.url, auth: 'oauth' } }, { workDir, oauth: { authFile } });
    await servers.ready();
    const before = (await tokenFile(authFile)).servers[server.url]?.tokens;
    const turnedDown = server.log.unauthorized;
    server.expireAccessTokens();
    expect((await run(servers.get('mcp_remote_echo'), { text: 'still here' })).content).toBe('still here');
    expect(server.log.unauthorized).toBe(turnedDown + 1);
    expect(server.log.tokenRequests.map((request) => request.grantType)).toEqual(['authorization_code', 'refresh_token']);
    const after = (await tokenFile(authFile)).servers[server.url]?.tokens;
    expect(after?.access_token).toBe(server.log.issued[1]?.access_token);
    expect(after?.access_token).not.toBe(before?.access_token);
    // Refresh tokens rotate here: the new one is kept too.
    expect(after?.refresh_token).toBe(server.log.issued[1]?.refresh_token);
  });

  it('is refreshed before it expires, so the server never turns it down', async () => {
    const { server, workDir, authFile } = await loggedIn();
    const turnedDown = server.log.unauthorized;
    // An hour later: the kept access token has expired by claw's clock.
    const later = () => Date.now() + 3600_000;
    const { servers } = openServers({ remote: { url: server.url, auth: 'oauth' } }, { workDir, oauth: { authFile, now: later } });
    await servers.ready();
    expect(servers.status()[0]?.state).toBe('ready');
    expect(server.log.tokenRequests.map((request) => request.grantType)).toEqual(['authorization_code', 'refresh_token']);
    expect(server.log.unauthorized).toBe(turnedDown);
    const kept = (await tokenFile(authFile)).servers[server.url];
    expect(kept?.tokens?.access_token).toBe(server.log.issued[1]?.access_token);
  });

  it('expired and not refreshable: without anyone to ask the server needs a login again, and says how', async () => {
    const { server, workDir, authFile } = await loggedIn();
    server.expireAccessTokens();
    server.revokeRefreshTokens();
    // Later than claw's guard for tokens saved a moment ago (the login just now).
    const later = () => Date.now() + 60_000;
    const { servers, warnings } = openServers({ remote: { url: server.url, auth: 'oauth' } }, { workDir, oauth: { authFile, now: later } });
    await servers.ready();
    expect(servers.status()[0]?.state).toBe('needs_login');
    expect(servers.status()[0]?.lastError).toBe('MCP server "remote" needs you to log in again (the token claw kept for it ' +
      'has expired and could not be refreshed): run `claw mcp login remote` in this workspace, then start claw again');
    expect(warnings.map((warning) => warning.code)).toEqual(['mcp_server_needs_login']);
  });

  it('expiring during a session with nobody to ask: the call says to log in, and the next one works once someone did', async () => {
    const { server, workDir, authFile } = await loggedIn({ refreshTokens: false });
    const { servers } = openServers({ remote: { url: server.url, auth: 'oauth' } }, { workDir, oauth: { authFile } });
    await servers.ready();
    server.expireAccessTokens();
    const error = await run(servers.get('mcp_remote_echo'), { text: 'x' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(McpNeedsLoginError);
    expect((error as Error).message).toMatch(/^MCP server "remote" needs the user to log in again .*: ask them to run `claw mcp login remote` in a terminal in this workspace \(it opens their browser, so do not run it yourself\), then try the call again$/);
    // The user logs in from another terminal; the running client reads the new token.
    const config = parseMcpConfig(JSON.stringify({ mcpServers: { remote: { url: server.url, auth: 'oauth' } } }), { file: 'mcp.json', env: {} });
    const login = await loginMcpServer({ config, server: 'remote', workDir, authFile, openUrl: fetchBrowser().openUrl });
    expect(login.loggedIn).toBe(true);
    expect((await run(servers.get('mcp_remote_echo'), { text: 'back' })).content).toBe('back');
    expect(servers.status()[0]?.state).toBe('ready');
  });

  it('logout removes it: the next start needs a login', async () => {
    const { server, workDir, authFile } = await loggedIn();
    const config = parseMcpConfig(JSON.stringify({ mcpServers: { remote: { url: server.url, auth: 'oauth' } } }), { file: 'mcp.json', env: {} });
    expect(await logoutMcpServer({ config, server: 'remote', authFile })).toEqual({
      server: 'remote',
      url: server.url,
      removed: true,
      authFile,
    });
    expect((await tokenFile(authFile)).servers).toEqual({});
    expect((await logoutMcpServer({ config, server: 'remote', authFile })).removed).toBe(false);
    const { servers } = openServers({ remote: { url: server.url, auth: 'oauth' } }, { workDir, oauth: { authFile } });
    await servers.ready();
    expect(servers.status()[0]?.state).toBe('needs_login');
  });
});

describe('nobody to ask (servers, -p, the REPL)', () => {
  it('a server that wants a login is needs_login, its error names the command, and nothing is opened or registered', async () => {
    const server = await oauthServer();
    const { workDir, authFile } = await folders();
    const { servers, warnings } = openServers({ linear: { url: server.url, auth: 'oauth' } }, { workDir, oauth: { authFile } });
    await servers.ready();
    expect(servers.status()[0]).toEqual({
      name: 'linear',
      transport: 'http',
      state: 'needs_login',
      tools: [],
      lastError: 'MCP server "linear" needs you to log in: run `claw mcp login linear` in this workspace, then start claw again',
    });
    expect(servers.connection('linear')?.lastFailure).toBeInstanceOf(McpNeedsLoginError);
    expect((servers.connection('linear')?.lastFailure as McpNeedsLoginError).command).toBe('claw mcp login linear');
    expect(warnings).toEqual([{
      server: 'linear',
      code: 'mcp_server_needs_login',
      message: 'MCP server "linear" needs you to log in: run `claw mcp login linear` in this workspace, then start ' +
        'claw again (claw goes on without its tools)',
    }]);
    expect(server.log.registrations).toEqual([]);
    expect(server.log.authorizations).toEqual([]);
    await expect(stat(authFile)).rejects.toThrow(/ENOENT/);
  });

  it('interactive without a way to show the page is the same', async () => {
    const server = await oauthServer();
    const { workDir, authFile } = await folders();
    const { servers } = openServers(
      { remote: { url: server.url } },
      { workDir, oauth: { authFile, interactive: true } },
    );
    await servers.ready();
    expect(servers.status()[0]?.state).toBe('needs_login');
  });

  it('a name that is not a shell word is quoted in the command', async () => {
    const server = await oauthServer();
    const { workDir, authFile } = await folders();
    const { servers } = openServers({ "team's docs": { url: server.url, auth: 'oauth' } }, { workDir, oauth: { authFile } });
    await servers.ready();
    expect(servers.status()[0]?.lastError).toContain("run `claw mcp login 'team'\\''s docs'`");
  });

  it('a server without "auth" that answers 401 without OAuth metadata is a credentials problem, not a login', async () => {
    const plain = http.createServer((request, response) => {
      response.writeHead(request.url?.startsWith('/.well-known/') === true ? 404 : 401, {
        'www-authenticate': 'Bearer realm="plain"',
      });
      response.end();
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => plain.close(() => resolve())));
    const url = `http://127.0.0.1:${(plain.address() as AddressInfo).port}/mcp`;
    const { authFile } = await folders();
    const { servers } = openServers(
      { plain: { url } },
      { oauth: { authFile, interactive: true, openUrl: fetchBrowser().openUrl } },
    );
    await servers.ready();
    expect(servers.status()[0]?.state).toBe('failed');
    expect(servers.connection('plain')?.lastFailure).toBeInstanceOf(McpAuthError);
    expect(servers.status()[0]?.lastError).toMatch(/^MCP server "plain" refused claw's credentials \(HTTP 401 Unauthorized\): check the "headers" of "plain"/);
  });
});

describe('loginMcpServer and logoutMcpServer (claw mcp login|logout)', () => {
  it('logs in anew even with a token kept, and says which tools came with it', async () => {
    const server = await oauthServer();
    const { workDir, authFile } = await folders();
    const config = parseMcpConfig(JSON.stringify({ mcpServers: { remote: { url: server.url, auth: 'oauth' } } }), { file: 'mcp.json', env: {} });
    const browser = fetchBrowser();
    const first = await loginMcpServer({ config, server: 'remote', workDir, authFile, openUrl: browser.openUrl });
    expect(first).toEqual({
      server: 'remote',
      url: server.url,
      loggedIn: true,
      tools: ['mcp_remote_whoami', 'mcp_remote_echo'],
      authFile,
    });
    const second = await loginMcpServer({ config, server: 'remote', workDir, authFile, openUrl: browser.openUrl });
    expect(second.loggedIn).toBe(true);
    expect(browser.opened).toHaveLength(2);
    // The registration is reused; the new token replaced the old one.
    expect(server.log.registrations).toHaveLength(1);
    const kept = (await tokenFile(authFile)).servers[server.url];
    expect(kept?.tokens?.access_token).toBe(server.log.issued[1]?.access_token);
  });

  it('a server that does not ask for a login: loggedIn false', async () => {
    const { startSdkHttpServer } = await import('./sdk-http-server.js');
    const open = await startSdkHttpServer({ statelessGetStatus: 405 });
    closers.push(() => open.close());
    const { workDir, authFile } = await folders();
    const config = parseMcpConfig(JSON.stringify({ mcpServers: { open: { url: open.url } } }), { file: 'mcp.json', env: {} });
    const browser = fetchBrowser();
    const result = await loginMcpServer({ config, server: 'open', workDir, authFile, openUrl: browser.openUrl });
    expect(result.loggedIn).toBe(false);
    expect(result.tools).toContain('mcp_open_add');
    expect(browser.opened).toEqual([]);
  });

  it('a failed login is thrown', async () => {
    const server = await oauthServer({ deny: true });
    const { workDir, authFile } = await folders();
    const config = parseMcpConfig(JSON.stringify({ mcpServers: { remote: { url: server.url } } }), { file: 'mcp.json', env: {} });
    await expect(loginMcpServer({ config, server: 'remote', workDir, authFile, openUrl: fetchBrowser().openUrl }))
      .rejects.toThrow(/the authorization server said access_denied/);
  });

  it('refuses a name that is not a url server that can log in, saying why', async () => {
    const { workDir, authFile } = await folders();
    const config = parseMcpConfig(JSON.stringify({
      mcpServers: {
        files: { command: 'npx' },
        off: { url: 'https://example.com/mcp', enabled: false },
      },
    }), { file: 'mcp.json', env: {} });
    const openUrl = () => undefined;
    for (const [server, message] of [
      ['nope', 'there is no MCP server "nope" in mcp.json; its servers are: files, off'],
      ['files', 'MCP server "files" is a command that claw starts, not a "url" server: it takes its credentials from "env", and there is nothing to log in to'],
      ['off', 'MCP server "off" is disabled ("enabled": false) in mcp.json: enable it, then log in to it'],
    ] as const) {
      const error = await loginMcpServer({ config, server, workDir, authFile, openUrl })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(McpConfigError);
      expect((error as Error).message).toBe(message);
      expect(isUserError(error)).toBe(true);
    }
    // Logging out of a disabled server is fine.
    expect((await logoutMcpServer({ config, server: 'off', authFile })).removed).toBe(false);
  });
});

describe('McpAuthStore', () => {
  it('keeps entries per server URL and changes one without touching the others', async () => {
    const { authFile } = await folders();
    const store = new McpAuthStore({ file: authFile });
    await store.update('https://a.example/mcp', () => ({ savedAt: 1 }));
    await store.update('https://b.example/mcp', () => ({ savedAt: 2 }));
    // Another process's store, on the same file.
    await new McpAuthStore({ file: authFile }).update('https://a.example/mcp', (entry) => ({ ...entry, expiresAt: 5 }));
    expect(await store.read('https://a.example/mcp')).toEqual({ savedAt: 1, expiresAt: 5 });
    expect(await store.read('https://b.example/mcp')).toEqual({ savedAt: 2 });
    expect(await store.remove('https://a.example/mcp')).toBe(true);
    expect(Object.keys((await tokenFile(authFile)).servers)).toEqual(['https://b.example/mcp']);
  });

  it('reads the file again only when it changed (the SDK asks for the tokens on every request)', async () => {
    const { authFile } = await folders();
    let reads = 0;
    const fileSystem = {
      ...fsPromises,
      readFile: (file: string, encoding: 'utf8') => {
        reads += 1;
        return fsPromises.readFile(file, encoding);
      },
    };
    const store = new McpAuthStore({ file: authFile, fileSystem });
    await store.update('https://a.example/mcp', () => ({ savedAt: 1 }));
    reads = 0;
    for (let lookup = 0; lookup < 5; lookup += 1) {
      expect(await store.read('https://a.example/mcp')).toEqual({ savedAt: 1 });
    }
    expect(reads).toBe(1);
    // Another process logs in: seen at the next lookup.
    await new McpAuthStore({ file: authFile }).update('https://a.example/mcp', () => ({ savedAt: 2 }));
    expect(await store.read('https://a.example/mcp')).toEqual({ savedAt: 2 });
    expect(reads).toBe(2);
  });

  it('a file that is not claw\'s is an error that says to remove it', async () => {
    const { authFile } = await folders();
    const store = new McpAuthStore({ file: authFile });
    await store.update('https://a.example/mcp', () => ({ savedAt: 1 }));
    for (const text of ['not json', '{"version": 2, "servers": {}}']) {
      await writeFile(authFile, text);
      const error = await store.read('https://a.example/mcp').catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(McpAuthStoreError);
      expect((error as Error).message).toMatch(/holds claw's MCP login tokens, but .*: remove it \(you then log in to your MCP servers again with `claw mcp login <name>`\)$/);
      expect(isUserError(error)).toBe(true);
    }
  });

  it('mcpAuthFile: XDG_STATE_HOME when absolute, else ~/.local/state; never a relative folder', () => {
    expect(mcpAuthFile({ XDG_STATE_HOME: '/state', HOME: '/home/u' })).toBe('/state/claw/mcp-auth.json');
    expect(mcpAuthFile({ XDG_STATE_HOME: 'state', HOME: '/home/u' })).toBe('/home/u/.local/state/claw/mcp-auth.json');
    expect(mcpAuthFile({ HOME: '/home/u' })).toBe('/home/u/.local/state/claw/mcp-auth.json');
    expect(mcpAuthFile({ HOME: 'home' })).toBeUndefined();
    expect(mcpAuthFile({})).toBeUndefined();
  });
});
