import { existsSync } from 'node:fs';
import { mkdir, rm, symlink } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { runServerCli } from '../src/cli.js';
import type { ServerAddress } from '../src/server.js';
import {
  TcpClient,
  UpgradeRefused,
  WsClient,
  cleanUp,
  openSession,
  startServer,
  token,
  workspace,
} from './helpers.js';

// SEC-1 to SEC-7 (and CH-8) over real sockets: who may connect, what a web page or another local
// program can and cannot make the server do, and the limits that keep one client from hurting the
// others.

afterEach(cleanUp);

/** Raw sockets, folders and the like this file makes itself (the helpers clean up their own). */
const ownCleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of ownCleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

type Kind = 'tcp' | 'ws';
const kinds = ['tcp', 'ws'] as const;

async function connect(kind: Kind, address: ServerAddress): Promise<TcpClient | WsClient> {
  return kind === 'tcp' ? TcpClient.connect(address.tcp) : WsClient.connect(address.http);
}

const codes = (client: TcpClient | WsClient): string[] =>
  client.events.map((event) => (event.type === 'error' ? `error(${event.code})` : event.type));

/** The sessions a new, good client is told about. */
async function welcomeSessions(address: ServerAddress): Promise<string[]> {
  const client = await TcpClient.connect(address.tcp);
  const welcome = await client.hello();
  client.socket.destroy();
  return welcome.type === 'welcome' ? welcome.sessions.map((session) => session.session_id) : ['(no welcome)'];
}

async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not ${what} within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The status of a refused WebSocket upgrade; fails when the upgrade went through. */
async function refusedWith(opening: Promise<WsClient>): Promise<number> {
  try {
    const client = await opening;
    client.ws.terminate();
  } catch (error) {
    expect(error).toBeInstanceOf(UpgradeRefused);
    return (error as UpgradeRefused).status;
  }
  throw new Error('the WebSocket upgrade was accepted');
}

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One HTTP request on its own connection; `headers` may set Host. */
function request(
  port: number,
  target: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const outgoing = http.request(
      { host: '127.0.0.1', port, path: target, method: options.method ?? 'GET', headers: options.headers ?? {}, agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}

/** A WebSocket upgrade request sent by hand, to read the refusal's body and headers. */
function upgradeRequest(port: number, target: string, headers: Record<string, string> = {}): Promise<Reply> {
  return request(port, target, {
    headers: {
      Connection: 'Upgrade',
      Upgrade: 'websocket',
      'Sec-WebSocket-Version': '13',
      'Sec-WebSocket-Key': Buffer.from('0123456789abcdef').toString('base64'),
      ...headers,
    },
  });
}

function errorCode(reply: Reply): unknown {
  return (JSON.parse(reply.body) as { error?: { code?: unknown } }).error?.code;
}

/** A plain TCP socket that records every byte it gets. */
async function rawTcp(port: number): Promise<{ socket: net.Socket; received: () => Buffer; closed: Promise<void> }> {
  const socket = net.connect({ host: '127.0.0.1', port });
  socket.setNoDelay(true);
  ownCleanups.push(async () => void socket.destroy());
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  return { socket, received: () => Buffer.concat(chunks), closed };
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`not ${what} within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

describe('authentication first (CH-8, SEC-2)', () => {
  it.each(kinds)('%s: no hello at all → unauthorized, then closed after the hello timeout; no session', async (kind) => {
    const helloTimeoutMs = 200;
    const { address, server } = await startServer({ limits: { helloTimeoutMs } });
    const good = await connect(kind, address);
    await good.hello();
    const started = Date.now();
    const silent = await connect(kind, address);
    // Closed by the hello timer (its error names it), not before it ran out; the bound above is
    // generous so that a busy machine cannot fail it.
    await silent.whenClosed(helloTimeoutMs + 10_000);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(helloTimeoutMs - 50);
    expect(elapsed).toBeLessThan(helloTimeoutMs + 10_000);
    expect(codes(silent)).toEqual(['error(unauthorized)']);
    expect(silent.of('error')[0]?.message).toMatch(new RegExp(`no hello within ${helloTimeoutMs} ms`));
    expect(silent.invalid).toEqual([]);
    if (silent instanceof WsClient) expect(silent.closeCode).toBe(4001);
    // The client that said hello in time is past the timeout and still served.
    expect(good.closed).toBe(false);
    const from = good.events.length;
    good.send({ type: 'ping' });
    await good.next('pong', () => true, from);
    expect(server.loadedSessions).toBe(0);
    expect(await welcomeSessions(address)).toEqual([]);
  });

  it.each(kinds)('%s: a wrong token → unauthorized and closed (WebSocket 4001); no session', async (kind) => {
    const { address, server, provider } = await startServer({ steps: [{ text: 'must not run' }] });
    const wrong = ['', 'x', `${token}x`, token.slice(0, -1), token.toUpperCase(), ` ${token}`, `${token}\n`];
    for (const given of wrong) {
      const client = await connect(kind, address);
      client.send({ type: 'hello', token: given, protocol: 1 });
      // Sent at once behind it: never read.
      client.send({ type: 'open', session_id: 'sneaky' });
      client.send({ type: 'prompt', content: 'hi' });
      await client.whenClosed();
      expect(codes(client), JSON.stringify(given)).toEqual(['error(unauthorized)']);
      if (client instanceof WsClient) expect(client.closeCode).toBe(4001);
    }
    expect(provider.calls).toHaveLength(0);
    expect(server.loadedSessions).toBe(0);
    expect(await welcomeSessions(address)).toEqual([]);
  });

  it('tcp: a wrong hello and a right one in one write: closed after the first, the second never read', async () => {
    const { address, server, provider } = await startServer({ steps: [{ text: 'must not run' }] });
    const client = await TcpClient.connect(address.tcp);
    client.write(
      [
        JSON.stringify({ type: 'hello', token: 'wrong-token-0123456789', protocol: 1 }),
        JSON.stringify({ type: 'hello', token, protocol: 1 }),
        JSON.stringify({ type: 'prompt', content: 'hi' }),
        '',
      ].join('\n'),
    );
    await client.whenClosed();
    expect(codes(client)).toEqual(['error(unauthorized)']);
    expect(provider.calls).toHaveLength(0);
    expect(server.loadedSessions).toBe(0);
  });

  it.each(kinds)('%s: the right token with another protocol → unsupported_protocol and closed; no session', async (kind) => {
    const { address, server } = await startServer();
    for (const protocol of [2, 0, 999]) {
      const client = await connect(kind, address);
      client.send({ type: 'hello', token, protocol });
      client.send({ type: 'open', session_id: 'sneaky' });
      await client.whenClosed();
      expect(codes(client), String(protocol)).toEqual(['error(unsupported_protocol)']);
      if (client instanceof WsClient) expect(client.closeCode).toBe(4002);
    }
    expect(server.loadedSessions).toBe(0);
    expect(await welcomeSessions(address)).toEqual([]);
  });
});

describe('WebSocket upgrades (SEC-2, SEC-3)', () => {
  type Asked = { path?: string; headers?: Record<string, string>; origin?: string };
  type Case = [name: string, asked: (address: ServerAddress) => Asked, status: number, code: string];
  const refusals: Case[] = [
    ['the token in the query', () => ({ path: `/ws?token=${token}` }), 400, 'token_in_url'],
    ['a token parameter with any value', () => ({ path: '/ws?token=x' }), 400, 'token_in_url'],
    ['the token as the value of another parameter', () => ({ path: `/ws?t=${token}` }), 400, 'token_in_url'],
    ['an access_token parameter', () => ({ path: '/ws?access_token=x' }), 400, 'token_in_url'],
    ['Origin of another site', () => ({ origin: 'https://evil.example' }), 403, 'forbidden_origin'],
    ['Origin null', () => ({ origin: 'null' }), 403, 'forbidden_origin'],
    ['Origin of another local port', (a) => ({ origin: `http://localhost:${a.tcp}` }), 403, 'forbidden_origin'],
    ['Origin of 127.0.0.1 on another port', (a) => ({ origin: `http://127.0.0.1:${a.http + 1}` }), 403, 'forbidden_origin'],
    ['Origin of the right host over https', (a) => ({ origin: `https://127.0.0.1:${a.http}` }), 403, 'forbidden_origin'],
    ['Origin that only starts like the console\'s', (a) => ({ origin: `http://127.0.0.1:${a.http}.evil.example` }), 403, 'forbidden_origin'],
    ['Host of another name (DNS rebinding)', () => ({ headers: { Host: 'attacker.example' } }), 403, 'forbidden_host'],
    ['Host of another name with the right port', (a) => ({ headers: { Host: `attacker.example:${a.http}` } }), 403, 'forbidden_host'],
    ['Host of a loopback address on another port', (a) => ({ headers: { Host: `127.0.0.1:${a.tcp}` } }), 403, 'forbidden_host'],
    ['a path other than /ws', () => ({ path: '/socket' }), 404, 'not_found'],
    ['the root path', () => ({ path: '/' }), 404, 'not_found'],
    ['a path below /ws', () => ({ path: '/ws/extra' }), 404, 'not_found'],
  ];

  it.each(refusals)('%s → HTTP %i before any handshake; no connection, no session', async (_name, options, status, code) => {
    const { address, server } = await startServer();
    const asked = options(address);
    expect(await refusedWith(WsClient.connect(address.http, asked))).toBe(status);
    const headers = { ...asked.headers, ...(asked.origin === undefined ? {} : { Origin: asked.origin }) };
    const reply = await upgradeRequest(address.http, asked.path ?? '/ws', headers);
    expect(reply.status).toBe(status);
    expect(errorCode(reply)).toBe(code);
    expect(reply.headers['access-control-allow-origin']).toBeUndefined();
    expect(reply.body).not.toContain(token);
    expect(server.connections).toBe(0);
    expect(server.loadedSessions).toBe(0);
  });

  it('the console\'s own origins and clients without an Origin are let through to the token check', async () => {
    const { address, server } = await startServer();
    const origins = [`http://127.0.0.1:${address.http}`, `http://localhost:${address.http}`, `HTTP://LOCALHOST:${address.http}`];
    for (const origin of [...origins, undefined]) {
      const client = await WsClient.connect(address.http, origin === undefined ? {} : { origin });
      expect(await client.hello(), String(origin)).toMatchObject({ type: 'welcome' });
      client.ws.terminate();
      await client.whenClosed();
    }
    // Let through to the token check, not past it.
    const unchecked = await WsClient.connect(address.http, { origin: origins[0] });
    unchecked.send({ type: 'hello', token: 'not-the-token-0123456789', protocol: 1 });
    await unchecked.whenClosed();
    expect(unchecked.closeCode).toBe(4001);
    expect(server.loadedSessions).toBe(0);
  });

  it('an --allow-origin origin is accepted; a longer name that starts with it is not', async () => {
    const { address, server } = await startServer({ server: { allowOrigins: ['https://console.example.com'] } });
    const allowed = await WsClient.connect(address.http, { origin: 'https://console.example.com' });
    expect(await allowed.hello()).toMatchObject({ type: 'welcome' });
    for (const origin of ['https://console.example.com.evil.example', 'http://console.example.com', 'https://evil.console.example.com']) {
      expect(await refusedWith(WsClient.connect(address.http, { origin })), origin).toBe(403);
    }
    expect(server.connections).toBe(1);
    expect(server.loadedSessions).toBe(0);
  });
});

describe('HTTP endpoints (SEC-4, CH-7)', () => {
  const bearer = { Authorization: `Bearer ${token}` };

  it('health and readiness answer without a token and reveal no session data', async () => {
    const { address } = await startServer();
    const { sessionId } = await openSession('tcp', address, { session_id: 'secret-session-name' });
    const health = await request(address.http, '/healthz');
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toEqual({ status: 'ok' });
    expect(health.headers['content-type']).toMatch(/^application\/json/);
    const ready = await request(address.http, '/readyz');
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body)).toEqual({ status: 'ready' });
    for (const reply of [health, ready]) {
      expect(reply.body).not.toContain(sessionId);
      expect(reply.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('the API needs the bearer token, refuses cross-site requests and non-JSON bodies; no CORS header anywhere', async () => {
    const { address } = await startServer();
    const { sessionId } = await openSession('tcp', address, { session_id: 'listed-session' });
    const port = address.http;
    const replies: Array<[string, Reply]> = [];
    const ask = async (name: string, target: string, options: Parameters<typeof request>[2] = {}): Promise<Reply> => {
      const reply = await request(port, target, options);
      replies.push([name, reply]);
      return reply;
    };

    const anonymous = await ask('no token', '/api/sessions');
    expect(anonymous.status).toBe(401);
    expect(errorCode(anonymous)).toBe('unauthorized');
    expect(anonymous.headers['www-authenticate']).toBe('Bearer');
    expect(anonymous.body).not.toContain(sessionId);
    for (const authorization of [`Bearer ${token}x`, `Basic ${token}`, token, 'Bearer ', `Bearer  ${token}`]) {
      const reply = await ask(authorization, '/api/sessions', { headers: { Authorization: authorization } });
      expect(reply.status, authorization).toBe(401);
    }

    const listed = await ask('the token', '/api/sessions', { headers: bearer });
    expect(listed.status).toBe(200);
    expect(listed.headers['content-type']).toMatch(/^application\/json/);
    const body = JSON.parse(listed.body) as { sessions: Array<{ session_id: string }> };
    expect(body.sessions.map((session) => session.session_id)).toEqual([sessionId]);

    const crossSite = await ask('cross-site', '/api/sessions', { headers: { ...bearer, 'Sec-Fetch-Site': 'cross-site' } });
    expect(crossSite.status).toBe(403);
    expect(errorCode(crossSite)).toBe('cross_site');
    expect(crossSite.body).not.toContain(sessionId);
    const sameOrigin = await ask('same-origin', '/api/sessions', { headers: { ...bearer, 'Sec-Fetch-Site': 'same-origin' } });
    expect(sameOrigin.status).toBe(200);

    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const reply = await ask(type, '/api/sessions', {
        method: 'POST',
        headers: { ...bearer, 'Content-Type': type },
        body: '{"type":"prompt","content":"hi"}',
      });
      expect(reply.status, type).toBe(415);
      expect(errorCode(reply)).toBe('unsupported_media_type');
    }
    const untyped = await ask('no content type', '/api/sessions', { method: 'POST', headers: bearer, body: '{}' });
    expect(untyped.status).toBe(415);

    const formToRoot = await ask('POST /', '/', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'x=1' });
    expect(formToRoot.status).toBe(405);
    expect(formToRoot.headers.allow).toBe('GET');
    const postHealth = await ask('POST /healthz', '/healthz', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'x' });
    expect(postHealth.status).toBe(405);

    for (const target of ['/healthz', '/api/sessions', '/']) {
      for (const host of ['attacker.example', `attacker.example:${port}`]) {
        const reply = await ask(`${host} ${target}`, target, { headers: { ...bearer, Host: host } });
        expect(reply.status, `${host} ${target}`).toBe(403);
        expect(errorCode(reply)).toBe('forbidden_host');
        expect(reply.body).not.toContain(sessionId);
      }
    }

    for (const target of [`/api/sessions?token=${token}`, '/api/sessions?token=x', `/api/sessions?s=${token}`, '/healthz?access_token=x']) {
      const reply = await ask(target, target, { headers: bearer });
      expect(reply.status, target).toBe(400);
      expect(errorCode(reply)).toBe('token_in_url');
    }

    const preflight = await ask('preflight', '/api/sessions', {
      method: 'OPTIONS',
      headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization' },
    });
    expect(preflight.status).toBeGreaterThanOrEqual(400);

    for (const [name, reply] of replies) {
      const cors = Object.keys(reply.headers).filter((header) => header.startsWith('access-control-'));
      expect(cors, name).toEqual([]);
    }
  });
});

describe('the TCP port is not HTTP (SEC-5)', () => {
  const formPost =
    'POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n\r\n' +
    `{"type":"hello","token":"${token}","protocol":1}\n{"type":"prompt","content":"hi"}\n`;

  async function expectHungUp(address: ServerAddress, writes: string[]): Promise<Buffer> {
    const { socket, received, closed } = await rawTcp(address.tcp);
    for (const [index, chunk] of writes.entries()) {
      if (index > 0) await new Promise((resolve) => setTimeout(resolve, 30));
      if (!socket.destroyed) socket.write(chunk);
    }
    // Under the hello timeout (10 s, which would send an error first): every caller checks
    // that nothing came back, so this bound only has to end a hung test.
    await within(closed, 8000, 'hung up on');
    return received();
  }

  it('a browser-style form post in one write: hung up on, nothing sent back, nothing run', async () => {
    const { address, server, provider } = await startServer({ steps: [{ text: 'must not run' }] });
    const received = await expectHungUp(address, [formPost]);
    expect(received.toString('utf8')).toBe('');
    expect(provider.calls).toHaveLength(0);
    expect(server.loadedSessions).toBe(0);
    await until(() => server.connections === 0, 'disconnected');
    expect(await welcomeSessions(address)).toEqual([]);
  });

  it.each([
    ['PO', 2],
    ['P', 1],
    ['POST', 4],
    ['POST / H', 8],
  ] as const)('the same form post split after %j is hung up on too', async (_head, at) => {
    const { address, server, provider } = await startServer({ steps: [{ text: 'must not run' }] });
    const received = await expectHungUp(address, [formPost.slice(0, at), formPost.slice(at)]);
    expect(received.toString('utf8')).toBe('');
    expect(provider.calls).toHaveLength(0);
    expect(server.loadedSessions).toBe(0);
  });

  it.each([
    ['GET /', 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'],
    ['GET with a query', `GET /?q={"type":"hello","token":"${token}","protocol":1} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`],
    ['OPTIONS (a preflight)', 'OPTIONS / HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: https://evil.example\r\n\r\n'],
    ['HEAD', 'HEAD / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'],
    ['PUT', `PUT / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n{"type":"hello","token":"${token}","protocol":1}\n`],
    ['a Host header first', `Host: 127.0.0.1\r\n\r\n{"type":"hello","token":"${token}","protocol":1}\n{"type":"prompt","content":"hi"}\n`],
  ])('%s is hung up on the same way', async (_name, text) => {
    const { address, server, provider } = await startServer({ steps: [{ text: 'must not run' }] });
    expect((await expectHungUp(address, [text])).toString('utf8')).toBe('');
    expect(provider.calls).toHaveLength(0);
    expect(server.loadedSessions).toBe(0);
  });

  it('a real client whose first line is JSON is not mistaken for HTTP', async () => {
    const { address } = await startServer({ steps: [{ text: 'ran' }] });
    const client = await TcpClient.connect(address.tcp);
    client.write(`{"type":"hello","token":"${token}","protocol":1}\n{"type":"prompt","content":"POST / HTTP/1.1"}\n`);
    expect((await client.next('task_completed')).content).toBe('ran');
  });
});

describe('the command line refuses a reachable address (SEC-1, CH-12)', () => {
  async function run(argv: string[], cwd: string): Promise<{ status: number; out: string[]; err: string[] }> {
    const out: string[] = [];
    const err: string[] = [];
    const status = await runServerCli({
      argv,
      version: '0.0.0-test',
      env: {},
      cwd,
      out: (line) => out.push(line),
      err: (line) => err.push(line),
      stopRequested: new Promise<string>(() => undefined),
      stopNow: new AbortController().signal,
    });
    return { status, out, err };
  }

  it.each(['0.0.0.0', '::'])('--host %s without --allow-remote: exit 2, says why, names --allow-remote; nothing listens', async (host) => {
    const dir = await workspace();
    const result = await within(run(['--host', host, '--workdir', dir], dir), 10_000, 'exited');
    expect(result.status).toBe(2);
    const said = result.err.join('\n');
    expect(said).toContain(`refusing to listen on ${host}`);
    expect(said).toContain('--allow-remote');
    expect(result.out).toEqual([]);
    expect(existsSync(path.join(dir, '.claw', 'server.json'))).toBe(false);
  });

  it('--allow-remote without a token: exit 2 naming --token-file; nothing listens', async () => {
    const dir = await workspace();
    const result = await within(run(['--host', '0.0.0.0', '--allow-remote', '--workdir', dir], dir), 10_000, 'exited');
    expect(result.status).toBe(2);
    expect(result.err.join('\n')).toContain('--token-file');
    expect(result.out).toEqual([]);
    expect(existsSync(path.join(dir, '.claw', 'server.json'))).toBe(false);
  });
});

describe('sessions only inside the workspace (SEC-7)', () => {
  it.each(kinds)('%s: open with a workdir outside the workspace → workdir_not_allowed, no session', async (kind) => {
    const { address, server, workDir } = await startServer();
    const sibling = `${workDir}-evil`;
    await mkdir(sibling);
    ownCleanups.push(() => rm(sibling, { recursive: true, force: true }));
    await symlink(sibling, path.join(workDir, 'escape'));
    const outside = [
      path.dirname(workDir),
      '..',
      sibling,
      `../${path.basename(sibling)}`,
      path.join(workDir, '..', path.basename(sibling)),
      '/',
      'escape',
      path.join(workDir, 'escape'),
    ];
    const client = await connect(kind, address);
    await client.hello();
    for (const [index, workdir] of outside.entries()) {
      const from = client.events.length;
      client.send({ type: 'open', session_id: `outside-${index}`, workdir });
      const error = await client.next('error', () => true, from);
      expect(error.code, workdir).toBe('workdir_not_allowed');
    }
    expect(client.of('session_opened')).toEqual([]);
    expect(server.loadedSessions).toBe(0);
    expect(await welcomeSessions(address)).toEqual([]);
    // A folder inside is fine (the refusals above are about where, not about open itself).
    await mkdir(path.join(workDir, 'inside'));
    const from = client.events.length;
    client.send({ type: 'open', session_id: 'inside', workdir: 'inside' });
    const opened = await client.next('session_opened', () => true, from);
    expect(opened.workdir).toBe(path.join(workDir, 'inside'));
  });
});

describe('sessions inside the workspace are allowed (SEC-7)', () => {
  it.each(kinds)('%s: a folder inside whose name starts with two dots is inside the workspace', async (kind) => {
    const { address, workDir } = await startServer();
    for (const name of ['..data', '...']) await mkdir(path.join(workDir, name));
    const client = await connect(kind, address);
    await client.hello();
    for (const name of ['..data', '...']) {
      const from = client.events.length;
      client.send({ type: 'open', session_id: `dots-${name.length}`, workdir: name });
      const answer = await client.waitFor(
        () => client.events.slice(from).find((event) => event.type === 'session_opened' || event.type === 'error'),
        'an answer to open',
      );
      expect(answer.type === 'error' ? `error(${answer.code})` : answer.type, name).toBe('session_opened');
      expect(answer.type === 'session_opened' ? answer.workdir : undefined).toBe(path.join(workDir, name));
    }
  });
});

describe('limits (SEC-6)', () => {
  it('maxConnections: a third TCP client gets too_many_connections and is closed; a third WebSocket gets 503', async () => {
    const { address, server } = await startServer({ limits: { maxConnections: 2 } });
    const tcp = await TcpClient.connect(address.tcp);
    await tcp.hello();
    const ws = await WsClient.connect(address.http);
    await ws.hello();
    const third = await TcpClient.connect(address.tcp);
    await third.whenClosed();
    expect(codes(third)).toEqual(['error(too_many_connections)']);
    expect(await refusedWith(WsClient.connect(address.http))).toBe(503);
    expect(server.connections).toBe(2);
    for (const client of [tcp, ws]) {
      const from = client.events.length;
      client.send({ type: 'ping' });
      await client.next('pong', () => true, from);
    }
    // A place that frees up is taken again.
    tcp.socket.destroy();
    await until(() => server.connections === 1, 'down to one connection');
    const next = await WsClient.connect(address.http);
    expect(await next.hello()).toMatchObject({ type: 'welcome' });
  });

  it.each(kinds)('%s: maxSessionsPerConnection: the third open gets too_many_sessions; other connections are not limited by it', async (kind) => {
    const { address, server } = await startServer({ limits: { maxSessionsPerConnection: 2 } });
    const client = await connect(kind, address);
    await client.hello();
    for (const id of ['one', 'two']) {
      const from = client.events.length;
      client.send({ type: 'open', session_id: id });
      await client.next('session_opened', () => true, from);
    }
    const from = client.events.length;
    client.send({ type: 'open', session_id: 'three' });
    const error = await client.next('error', () => true, from);
    expect(error).toMatchObject({ code: 'too_many_sessions', session_id: 'three' });
    expect(server.loadedSessions).toBe(2);
    // Opening one of its own again (a resync) is not a new session.
    const again = client.events.length;
    client.send({ type: 'open', session_id: 'one', after: 0 });
    await client.next('session_opened', (event) => event.session_id === 'one', again);
    const neighbour = await connect(kind, address);
    await neighbour.hello();
    for (const id of ['three', 'four']) {
      const start = neighbour.events.length;
      neighbour.send({ type: 'open', session_id: id });
      await neighbour.next('session_opened', () => true, start);
    }
    // Closing one makes room.
    const closing = client.events.length;
    client.send({ type: 'close', session_id: 'two' });
    await client.next('session_closed', () => true, closing);
    client.send({ type: 'open', session_id: 'five' });
    await client.next('session_opened', (event) => event.session_id === 'five', closing);
  });
});

describe('heartbeat (SEC-6)', () => {
  it('a WebSocket peer that does not answer pings is terminated; one that does stays', async () => {
    const heartbeatMs = 100;
    const { address, server } = await startServer({ limits: { heartbeatMs } });
    const normal = await WsClient.connect(address.http);
    let normalPings = 0;
    let onNormalPing = (): void => undefined;
    normal.ws.on('ping', () => {
      normalPings += 1;
      onNormalPing();
    });
    await normal.hello();
    const silent = new WebSocket(`ws://127.0.0.1:${address.http}/ws`, { autoPong: false });
    ownCleanups.push(async () => void silent.terminate());
    silent.on('error', () => undefined);
    let pings = 0;
    silent.on('ping', () => {
      pings += 1;
    });
    const welcomed = new Promise<void>((resolve) => {
      silent.on('message', (data: Buffer) => {
        if ((JSON.parse(data.toString('utf8')) as { type?: string }).type === 'welcome') resolve();
      });
    });
    const closed = new Promise<number>((resolve) => silent.once('close', (code) => resolve(code)));
    silent.once('open', () => silent.send(JSON.stringify({ type: 'hello', token, protocol: 1 })));
    // Bounds far above the beats, so that a busy machine cannot fail them: how soon the peer
    // goes is pinned by the pings it got instead.
    await within(welcomed, 10_000, 'welcomed');
    const code = await within(closed, 2 * heartbeatMs + 10_000, 'terminated');
    expect(code).toBe(1006);
    // Terminated at the first beat after a ping it did not answer: exactly one ping, not more.
    expect(pings).toBe(1);
    // The answering client lived through more beats than that and is still served.
    const threeMore = normalPings + 3;
    const pinged = new Promise<void>((resolve) => {
      onNormalPing = () => {
        if (normalPings >= threeMore) resolve();
      };
    });
    await within(pinged, 3 * heartbeatMs + 10_000, 'pinged three more times');
    expect(normal.closed).toBe(false);
    const from = normal.events.length;
    normal.send({ type: 'ping' });
    await normal.next('pong', () => true, from);
    await until(() => server.connections === 1, 'the silent peer dropped');
  });
});
