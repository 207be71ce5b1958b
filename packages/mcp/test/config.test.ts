import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isUserError } from '@claw/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  McpConfigError,
  defaultCallTimeoutMs,
  defaultStartupTimeoutMs,
  loadMcpConfig,
  openMcpServers,
  parseMcpConfig,
} from '../src/index.js';
import { cleanUp, tempDir } from './helpers.js';

afterEach(cleanUp);

const file = '/project/.claw/mcp.json';

function parse(mcpServers: unknown, env: Record<string, string | undefined> = {}) {
  return parseMcpConfig(JSON.stringify({ mcpServers }), { file, env });
}

function failure(run: () => unknown): McpConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof McpConfigError) return error;
    throw error;
  }
  throw new Error('expected an McpConfigError');
}

describe('parseMcpConfig (MCP-1)', () => {
  it('reads stdio and HTTP servers with their defaults: risk dangerous, enabled, the default timeouts', () => {
    const config = parse({
      files: { command: 'npx', args: ['-y', 'some-server'], env: { ROOT: '/data' } },
      remote: { url: 'https://example.com/mcp', headers: { 'X-Team': 'a' } },
    });
    expect(config).toEqual({
      file,
      servers: [
        {
          name: 'files',
          transport: 'stdio',
          command: 'npx',
          args: ['-y', 'some-server'],
          env: { ROOT: '/data' },
          enabled: true,
          risk: 'dangerous',
          toolRisk: {},
          roots: true,
          startupTimeoutMs: defaultStartupTimeoutMs,
          callTimeoutMs: defaultCallTimeoutMs,
        },
        {
          name: 'remote',
          transport: 'http',
          url: 'https://example.com/mcp',
          headers: { 'X-Team': 'a' },
          enabled: true,
          risk: 'dangerous',
          toolRisk: {},
          roots: true,
          startupTimeoutMs: defaultStartupTimeoutMs,
          callTimeoutMs: defaultCallTimeoutMs,
        },
      ],
    });
  });

  it('takes risk per server and per tool, enabled, roots, and the timeouts', () => {
    const [server] = parse({
      docs: {
        url: 'http://127.0.0.1:9/mcp',
        risk: 'mutating',
        tools: { search: { risk: 'safe' }, wipe: { risk: 'dangerous' } },
        enabled: false,
        roots: false,
        startupTimeoutMs: 5000,
        callTimeoutMs: 120_000,
      },
    }).servers;
    expect(server).toMatchObject({
      risk: 'mutating',
      toolRisk: { search: 'safe', wipe: 'dangerous' },
      enabled: false,
      roots: false,
      startupTimeoutMs: 5000,
      callTimeoutMs: 120_000,
    });
  });

  it('expands ${VAR} in headers and env, several times in one value', () => {
    const [http, stdio] = parse(
      {
        http: { url: 'https://example.com/mcp', headers: { Authorization: 'Bearer ${TOKEN}', Pair: '${A}:${B}' } },
        stdio: { command: 'server', env: { KEY: '${TOKEN}', PLAIN: 'no variables' } },
      },
      { TOKEN: 's3cret', A: 'one', B: 'two' },
    ).servers;
    expect(http).toMatchObject({ headers: { Authorization: 'Bearer s3cret', Pair: 'one:two' } });
    expect(stdio).toMatchObject({ env: { KEY: 's3cret', PLAIN: 'no variables' } });
  });

  it('a missing or empty variable fails loading, naming the variable and the server', () => {
    const missing = failure(() => parse(
      { remote: { url: 'https://example.com/mcp', headers: { Authorization: 'Bearer ${REMOTE_TOKEN}' } } },
    ));
    expect(missing.code).toBe('mcp_config_invalid');
    expect(missing.server).toBe('remote');
    expect(isUserError(missing)).toBe(true);
    expect(missing.message).toBe(
      `${file}: MCP server "remote": headers.Authorization uses \${REMOTE_TOKEN}, but the ` +
      'environment variable REMOTE_TOKEN is not set: set it in the environment claw runs in ' +
      '(secrets stay out of mcp.json), or set "enabled": false for this server',
    );
    const empty = failure(() => parse({ local: { command: 'x', env: { KEY: '${KEY}' } } }, { KEY: '' }));
    expect(empty.message).toContain('MCP server "local": env.KEY uses ${KEY}, but the environment variable KEY is empty');
  });

  it('does not expand ${VAR} elsewhere, nor for a disabled server', () => {
    const [server, off] = parse({
      a: { command: 'run-${X}', args: ['${X}'] },
      b: { url: 'https://example.com/mcp', headers: { Authorization: '${NOT_SET}' }, enabled: false },
    }).servers;
    expect(server).toMatchObject({ command: 'run-${X}', args: ['${X}'] });
    expect(off).toMatchObject({ enabled: false, headers: {} });
  });

  it('a ${...} that is not a variable name is an error', () => {
    expect(failure(() => parse({ a: { command: 'x', env: { K: '${not-a-name}' } } }, {})).message)
      .toContain('env.K holds "${not-a-name}", which is not a variable name');
  });

  it('command and url together are rejected; neither is rejected', () => {
    expect(failure(() => parse({ both: { command: 'x', url: 'https://example.com/mcp' } })).message).toBe(
      `${file}: MCP server "both": has both "command" and "url"; a server is either a program claw ` +
      'starts (command) or one it reaches over HTTP (url): keep one',
    );
    expect(failure(() => parse({ none: { risk: 'safe' } })).message).toContain(
      'MCP server "none": needs "command" (a program claw starts, e.g. "npx") or "url"',
    );
  });

  it('rejects keys of the other kind, a type that disagrees, a url that is not http(s)', () => {
    expect(failure(() => parse({ a: { url: 'https://example.com/mcp', env: { A: 'b' } } })).message)
      .toContain('"args" and "env" are for a "command"');
    expect(failure(() => parse({ a: { command: 'x', headers: { A: 'b' } } })).message)
      .toContain('"headers" are for a "url"');
    expect(failure(() => parse({ a: { type: 'http', command: 'x' } })).message)
      .toContain('"type": "http" needs "url"');
    expect(failure(() => parse({ a: { url: 'file:///etc/passwd' } })).message)
      .toContain('"url" must be an http:// or https:// address, got "file:///etc/passwd"');
    expect(parse({ a: { type: 'stdio', command: 'x' }, b: { type: 'http', url: 'http://127.0.0.1/mcp' } })
      .servers.map((server) => server.transport)).toEqual(['stdio', 'http']);
  });

  it('rejects unknown keys, a bad risk, a bad timeout and JSON that is not JSON', () => {
    const unknown = failure(() => parse({ a: { command: 'x', comand: 'y' } }));
    expect(unknown.message).toContain('is not a valid MCP configuration');
    expect(unknown.message).toContain('comand');
    expect(failure(() => parse({ a: { command: 'x', risk: 'harmless' } })).message).toContain('risk');
    expect(failure(() => parse({ a: { command: 'x', callTimeoutMs: 0 } })).message).toContain('callTimeoutMs');
    expect(failure(() => parseMcpConfig('{"mcpServers": {', { file, env: {} })).message)
      .toMatch(/^\/project\/\.claw\/mcp\.json is not valid JSON \(.+\); it should look like \{"mcpServers"/);
    expect(failure(() => parseMcpConfig('{"servers": {}}', { file, env: {} })).message).toContain('mcpServers');
  });
});

describe('"auth" (MCP-8)', () => {
  it('"oauth", or an object with a configured client whose id and secret take ${VAR}', () => {
    const [plain, configured] = parse({
      plain: { url: 'https://example.com/mcp', auth: 'oauth' },
      configured: {
        url: 'https://example.com/other',
        headers: { 'X-Team': 'a' },
        auth: {
          type: 'oauth',
          clientId: 'claw-${TEAM}',
          clientSecret: '${CLIENT_SECRET}',
          clientMetadataUrl: 'https://example.com/claw.json',
          scopes: ['read', 'write:all'],
        },
      },
    }, { TEAM: 'a', CLIENT_SECRET: 's3cret' }).servers;
    expect(plain).toMatchObject({ transport: 'http', auth: { type: 'oauth' } });
    expect(configured).toMatchObject({
      headers: { 'X-Team': 'a' },
      auth: {
        type: 'oauth',
        clientId: 'claw-a',
        clientSecret: 's3cret',
        clientMetadataUrl: 'https://example.com/claw.json',
        scopes: ['read', 'write:all'],
      },
    });
    // Without "auth" there is none (claw may still find that the server uses OAuth).
    expect(parse({ r: { url: 'https://example.com/mcp' } }).servers[0]).not.toHaveProperty('auth');
  });

  it('refuses what cannot work, saying what to write', () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ command: 'x', auth: 'oauth' }, /"auth" is for a "url": a command gets its credentials from "env"/],
      [{ url: 'https://e.com/mcp', auth: 'basic' }, /"auth" is not valid \(auth: .*\); write "auth": "oauth", or "auth": \{"type": "oauth"/],
      [{ url: 'https://e.com/mcp', auth: { type: 'oauth', client: 'x' } }, /"auth" is not valid \(auth: Unrecognized key: "client"/],
      [{ url: 'https://e.com/mcp', auth: { type: 'oauth', clientSecret: 'x' } }, /"auth" has a "clientSecret" but no "clientId"/],
      [{ url: 'https://e.com/mcp', auth: { type: 'oauth', scopes: ['read write'] } }, /auth\.scopes\.0: a scope is one word/],
      [{ url: 'https://e.com/mcp', auth: { type: 'oauth', clientMetadataUrl: 'http://e.com/c.json' } }, /"auth\.clientMetadataUrl" must be an https:\/\/ address with a path/],
      [{ url: 'https://e.com/mcp', auth: 'oauth', headers: { authorization: 'Bearer x' } }, /has both "auth" and an "Authorization" header/],
      [{ url: 'https://e.com/mcp', auth: { type: 'oauth', clientId: 'c', clientSecret: '${SECRET}' } }, /auth\.clientSecret uses \$\{SECRET\}, but the environment variable SECRET is not set/],
    ];
    for (const [server, message] of cases) {
      const error = failure(() => parse({ s: server }));
      expect(error.message).toMatch(message);
      expect(error.server).toBe('s');
      expect(isUserError(error)).toBe(true);
    }
    // A disabled server's variables need not be set.
    expect(parse({ s: { url: 'https://e.com/mcp', enabled: false, auth: { type: 'oauth', clientId: '${ID}' } } }).servers[0])
      .toMatchObject({ enabled: false, auth: { type: 'oauth' } });
  });
});

describe('loadMcpConfig', () => {
  it('no file: no MCP servers and no error', async () => {
    const workDir = await tempDir();
    expect(await loadMcpConfig({ workDir, env: {} })).toBeUndefined();
    expect(await openMcpServers({ workDir, env: {} })).toBeUndefined();
  });

  it('reads <workDir>/.claw/mcp.json with the given environment', async () => {
    const workDir = await tempDir();
    await mkdir(path.join(workDir, '.claw'));
    const target = path.join(workDir, '.claw', 'mcp.json');
    await writeFile(target, JSON.stringify({
      mcpServers: { s: { command: 'server', env: { TOKEN: '${TOKEN}' } } },
    }));
    const config = await loadMcpConfig({ workDir, env: { TOKEN: 'abc' } });
    expect(config?.file).toBe(target);
    expect(config?.servers[0]).toMatchObject({ name: 's', env: { TOKEN: 'abc' } });
    const servers = await openMcpServers({ workDir, env: { TOKEN: 'abc' } });
    expect(servers?.status()).toEqual([{ name: 's', transport: 'stdio', state: 'idle', tools: [] }]);
    await servers?.close();
    await writeFile(target, '{"mcpServers": {"s": {"command": "server", "env": {"TOKEN": "${TOKEN}"}}}}');
    await expect(loadMcpConfig({ workDir, env: {} })).rejects.toThrow(/TOKEN is not set/);
  });
});
