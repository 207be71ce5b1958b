import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serverEventSchema, type ServerEvent } from '@claw/channel';
import { defineTool, type RiskLevel, type Tool } from '@claw/core';
import { RuntimeFactory, defaultSettings, type RuntimeFactoryOptions, type Settings } from '@claw/runtime';
import { plainCommandSpawner } from '@claw/sandbox';
import { MemorySessionManager } from '@claw/session-store';
import { ScriptedProvider, type ScriptedStep } from '@claw/testing';
import WebSocket from 'ws';
import { z } from 'zod';
import type { ConnectionLimits } from '../src/connections.js';
import { ClawServer, type ClawServerOptions, type ServerAddress } from '../src/server.js';

const cleanups: Array<() => Promise<void>> = [];

/** Runs every cleanup registered by the helpers (servers, clients, folders), newest first. */
export async function cleanUp(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
}

export async function workspace(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'claw-server-'));
  cleanups.push(() => rm(folder, { recursive: true, force: true }));
  return folder;
}

export const token = 'test-token-0123456789abcdef';

export const settings = (overrides: Partial<Settings> = {}): Settings => ({
  ...defaultSettings,
  apiKey: undefined,
  baseUrl: undefined,
  approval: 'ask',
  ...overrides,
});

/**
 * A tool the test controls: `risk` decides whether the policy asks; each call waits until the
 * test calls `release()` (or its signal aborts), and says when it started.
 */
export class GateTool {
  readonly started: string[] = [];
  readonly canceled: string[] = [];
  private waiters: Array<() => void> = [];
  private startListeners: Array<() => void> = [];
  readonly tool: Tool<{ label: string }>;

  constructor(name = 'wait_here', risk: RiskLevel = 'safe') {
    this.tool = defineTool({
      name,
      description: 'Waits until the test lets it go.',
      risk,
      schema: z.object({ label: z.string() }),
      execute: async ({ label }, context) => {
        this.started.push(label);
        for (const listener of this.startListeners.splice(0)) listener();
        await new Promise<void>((resolve, reject) => {
          const onAbort = (): void => {
            this.canceled.push(label);
            reject(context.signal.reason instanceof Error ? context.signal.reason : new Error('aborted'));
          };
          if (context.signal.aborted) {
            onAbort();
            return;
          }
          context.signal.addEventListener('abort', onAbort, { once: true });
          this.waiters.push(() => {
            context.signal.removeEventListener('abort', onAbort);
            resolve();
          });
        });
        return `done: ${label}`;
      },
    });
  }

  /** Resolves once a call started (now, if one already did and was not awaited yet). */
  whenStarted(count = 1): Promise<void> {
    if (this.started.length >= count) return Promise.resolve();
    return new Promise((resolve) => {
      const check = (): void => {
        if (this.started.length >= count) resolve();
        else this.startListeners.push(check);
      };
      this.startListeners.push(check);
    });
  }

  /** Lets every waiting call finish. */
  release(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }
}

export interface TestServer {
  server: ClawServer;
  address: ServerAddress;
  factory: RuntimeFactory;
  workDir: string;
  provider: ScriptedProvider;
}

/**
 * A real claw-server on 127.0.0.1 (ports the OS picks) on a scripted model, sessions in memory,
 * plain bash. `steps` script the model; `then` answers every later call.
 */
export async function startServer(
  options: {
    steps?: ScriptedStep[];
    then?: ScriptedStep;
    tools?: Tool[];
    limits?: Partial<ConnectionLimits>;
    factory?: Partial<RuntimeFactoryOptions>;
    server?: Partial<ClawServerOptions>;
    settings?: Partial<Settings>;
  } = {},
): Promise<TestServer> {
  const workDir = await workspace();
  const store = new MemorySessionManager();
  const provider = new ScriptedProvider(options.steps ?? [], {
    ...(options.then === undefined ? {} : { then: options.then }),
  });
  const factory = new RuntimeFactory({
    settings: settings(options.settings),
    provider,
    spawner: plainCommandSpawner(),
    sessions: { open: (id, open) => store.open(id, open), list: () => store.list() },
    ...(options.tools === undefined ? {} : { tools: options.tools }),
    ...options.factory,
  });
  const server = new ClawServer({
    factory,
    workspaces: [workDir],
    token,
    tcpPort: 0,
    httpPort: 0,
    version: '0.0.0-test',
    ...(options.limits === undefined ? {} : { limits: options.limits }),
    ...options.server,
  });
  const address = await server.start();
  cleanups.push(() => server.stop({ graceMs: 0 }));
  return { server, address, factory, workDir, provider };
}

/** What every client of the tests does: collects server events and waits for one. */
abstract class EventClient {
  readonly events: ServerEvent[] = [];
  /** Lines that were not protocol events (a broken server would show here). */
  readonly invalid: string[] = [];
  closed = false;
  private readonly listeners = new Set<() => void>();

  protected receive(text: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      this.invalid.push(text);
      this.notify();
      return;
    }
    const event = serverEventSchema.safeParse(parsed);
    if (event.success) this.events.push(event.data);
    else this.invalid.push(text);
    this.notify();
  }

  protected markClosed(): void {
    this.closed = true;
    this.notify();
  }

  abstract send(message: unknown): void;

  /** Sends `hello` with the token and waits for `welcome`. */
  async hello(given = token): Promise<ServerEvent> {
    const from = this.events.length;
    this.send({ type: 'hello', token: given, protocol: 1 });
    return this.next('welcome', () => true, from);
  }

  /** Waits until an event matches (searching from `from`); fails after `ms` showing what came. */
  next<T extends ServerEvent['type']>(
    type: T,
    match: (event: Extract<ServerEvent, { type: T }>) => boolean = () => true,
    from = 0,
    ms = 15_000,
  ): Promise<Extract<ServerEvent, { type: T }>> {
    const find = () =>
      this.events.slice(from).find(
        (event): event is Extract<ServerEvent, { type: T }> =>
          event.type === type && match(event as Extract<ServerEvent, { type: T }>),
      );
    return this.waitFor(() => find(), `a ${type} event`, ms);
  }

  /** Waits until the server closed the connection. */
  whenClosed(ms = 15_000): Promise<true> {
    return this.waitFor(() => (this.closed ? true : undefined), 'the connection to close', ms);
  }

  of<T extends ServerEvent['type']>(type: T): Array<Extract<ServerEvent, { type: T }>> {
    return this.events.filter((event): event is Extract<ServerEvent, { type: T }> => event.type === type);
  }

  /** Resolves with the first truthy result of `check` (re-run on every event and on close). */
  waitFor<T>(check: () => T | undefined, what: string, ms = 15_000): Promise<T> {
    const found = check();
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(listener);
        const seen = this.events.map((event) => (event.type === 'error' ? `error(${event.code})` : event.type));
        reject(new Error(`no ${what} within ${ms} ms; got: ${seen.join(', ')}${this.closed ? ' (closed)' : ''}`));
      }, ms);
      const listener = (): void => {
        const hit = check();
        if (hit === undefined) return;
        clearTimeout(timer);
        this.listeners.delete(listener);
        resolve(hit);
      };
      this.listeners.add(listener);
    });
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

/** A JSON-lines client of the TCP port. */
export class TcpClient extends EventClient {
  readonly socket: net.Socket;
  private buffer = '';

  private constructor(socket: net.Socket) {
    super();
    this.socket = socket;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      for (let newline = this.buffer.indexOf('\n'); newline !== -1; newline = this.buffer.indexOf('\n')) {
        const line = this.buffer.slice(0, newline);
        this.buffer = this.buffer.slice(newline + 1);
        if (line !== '') this.receive(line);
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => this.markClosed());
    cleanups.push(async () => void socket.destroy());
  }

  static connect(port: number): Promise<TcpClient> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.once('connect', () => resolve(new TcpClient(socket)));
      socket.once('error', reject);
    });
  }

  send(message: unknown): void {
    this.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`);
  }

  write(data: string | Buffer): void {
    if (!this.socket.destroyed) this.socket.write(data);
  }
}

/** A `ws` client of the WebSocket endpoint. */
export class WsClient extends EventClient {
  readonly ws: WebSocket;
  closeCode: number | undefined;
  closeReason = '';

  private constructor(ws: WebSocket) {
    super();
    this.ws = ws;
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      this.receive(bytes.toString('utf8'));
    });
    ws.on('close', (code, reason) => {
      this.closeCode = code;
      this.closeReason = reason.toString();
      this.markClosed();
    });
    ws.on('error', () => undefined);
    cleanups.push(async () => void ws.terminate());
  }

  /** Opens `/ws` (or `path`) with the given headers; rejects with the refusal's status. */
  static connect(
    port: number,
    options: { path?: string; headers?: Record<string, string>; origin?: string } = {},
  ): Promise<WsClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}${options.path ?? '/ws'}`, {
        headers: options.headers ?? {},
        ...(options.origin === undefined ? {} : { origin: options.origin }),
      });
      ws.once('open', () => resolve(new WsClient(ws)));
      ws.once('unexpected-response', (_request, response) => {
        reject(new UpgradeRefused(response.statusCode ?? 0));
        ws.terminate();
      });
      ws.once('error', (error) => reject(error));
    });
  }

  send(message: unknown): void {
    if (this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
    }
  }
}

export class UpgradeRefused extends Error {
  constructor(readonly status: number) {
    super(`the WebSocket upgrade was refused with HTTP ${status}`);
  }
}

/** Connects, says hello and opens a session; returns the client and the session's id. */
export async function openSession(
  kind: 'tcp' | 'ws',
  address: ServerAddress,
  open: Record<string, unknown> = {},
): Promise<{ client: TcpClient | WsClient; sessionId: string }> {
  const client = kind === 'tcp' ? await TcpClient.connect(address.tcp) : await WsClient.connect(address.http);
  await client.hello();
  const from = client.events.length;
  client.send({ type: 'open', ...open });
  const opened = await client.next('session_opened', () => true, from);
  return { client, sessionId: opened.session_id };
}

/** A scripted step that calls the gate tool once. */
export const gateCall = (label: string, name = 'wait_here'): ScriptedStep => ({
  toolCalls: [{ name, arguments: { label } }],
});
