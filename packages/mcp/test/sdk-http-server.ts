// Real SDK servers (the SDK's low-level `Server` and `StreamableHTTPServerTransport`) in the test's
// own process, over Streamable HTTP on 127.0.0.1 (an OS-picked port). Either stateless (no session
// id, a new server per request, GET answered with 404 or 405 as servers without a standalone
// stream do) or with sessions. Tools:
// - `add` {a, b}: "<a + b>";
// - `ask` {message, requestedSchema}: sends elicitation/create (form mode) on the call's own stream
//   with exactly that schema (no validation of its own, so what claw sends is what arrives) and
//   answers with the result as JSON, or {"error", "code"} (isError) when the request failed; a
//   canceled call cancels the request;
// - `roots`: sends roots/list and answers with the result as JSON;
// - `wait`: never answers.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  ListRootsResultSchema,
  ListToolsRequestSchema,
  McpError,
  RootsListChangedNotificationSchema,
  type CallToolResult,
  type ClientCapabilities,
} from '@modelcontextprotocol/sdk/types.js';

export interface SdkHttpServerOptions {
  /** Stateless, answering GET with this status; without it the server keeps sessions. */
  statelessGetStatus?: 404 | 405;
}

export interface SdkHttpServer {
  url: string;
  /** The capabilities of each client that initialized, in order. */
  readonly initializations: ClientCapabilities[];
  /** The status each GET (standalone stream) got, in order. */
  readonly gets: number[];
  /** Resolves on the next notifications/roots/list_changed the server gets. */
  nextRootsChange(): Promise<void>;
  /**
   * The server forgets every session, as one that restarted behind a proxy would: later requests
   * with one get 404 (their streams stay open).
   */
  forgetSessions(): void;
  /** Sessions created so far. */
  readonly sessionsCreated: number;
  close(): Promise<void>;
}

const schema = (properties: Record<string, object>, required: string[] = []) => ({
  type: 'object' as const,
  properties,
  required,
});

const tools = [
  { name: 'add', description: 'Adds two numbers.', inputSchema: schema({ a: { type: 'number' }, b: { type: 'number' } }, ['a', 'b']) },
  { name: 'ask', description: 'Asks the user (elicitation).', inputSchema: schema({ message: { type: 'string' }, requestedSchema: { type: 'object' } }) },
  { name: 'roots', description: 'Lists the client\'s roots.', inputSchema: schema({}) },
  { name: 'wait', description: 'Never answers.', inputSchema: schema({}) },
];

function text(value: unknown, isError = false): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], ...(isError ? { isError } : {}) };
}

function createServer(onRootsChanged: () => void): Server {
  const server = new Server(
    { name: 'claw-sdk-test-server', version: '1.0.0' },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = request.params.arguments ?? {};
    try {
      switch (request.params.name) {
        case 'add':
          return { content: [{ type: 'text', text: String(Number(args.a) + Number(args.b)) }] };
        case 'ask':
          return text(await extra.sendRequest({
            method: 'elicitation/create',
            params: {
              mode: 'form',
              message: String(args.message),
              requestedSchema: args.requestedSchema as never,
            },
          }, ElicitResultSchema, { signal: extra.signal }));
        case 'roots':
          return text(await extra.sendRequest({ method: 'roots/list' }, ListRootsResultSchema));
        case 'wait':
          return await new Promise<never>(() => undefined);
        default:
          return text(`no tool ${request.params.name}`, true);
      }
    } catch (error) {
      const code = error instanceof McpError ? error.code : undefined;
      return text({ error: (error as Error).message, code }, true);
    }
  });
  server.setNotificationHandler(RootsListChangedNotificationSchema, () => onRootsChanged());
  return server;
}

function readBody(request: http.IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      try {
        resolve(body === '' ? undefined : JSON.parse(body));
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
    request.on('error', reject);
  });
}

/** Starts a server; the test closes it (`close()`). */
export async function startSdkHttpServer(options: SdkHttpServerOptions = {}): Promise<SdkHttpServer> {
  const initializations: ClientCapabilities[] = [];
  const gets: number[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const forgotten = new Set<StreamableHTTPServerTransport>();
  let sessionsCreated = 0;
  let rootsWaiters: Array<() => void> = [];
  const rootsChanged = (): void => {
    const waiters = rootsWaiters;
    rootsWaiters = [];
    for (const resolve of waiters) resolve();
  };
  const stateless = options.statelessGetStatus;

  const handle = async (request: http.IncomingMessage, response: http.ServerResponse): Promise<void> => {
    if (stateless !== undefined && request.method !== 'POST') {
      if (request.method === 'GET') gets.push(stateless);
      response.writeHead(request.method === 'GET' ? stateless : 405).end();
      return;
    }
    const body = request.method === 'POST' ? await readBody(request) : undefined;
    const message = body as { method?: string; params?: { capabilities?: ClientCapabilities } } | undefined;
    if (message?.method === 'initialize') initializations.push(message.params?.capabilities ?? {});
    if (stateless !== undefined) {
      const server = createServer(rootsChanged);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      response.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(request, response, body);
      return;
    }
    const sessionId = request.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (transport === undefined) {
      if (sessionId !== undefined) {
        if (request.method === 'GET') gets.push(404);
        response.writeHead(404).end();
        return;
      }
      const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessionsCreated += 1;
          sessions.set(id, created);
        },
        onsessionclosed: (id) => {
          sessions.delete(id);
        },
      });
      transport = created;
      await createServer(rootsChanged).connect(transport);
    }
    if (request.method === 'GET') gets.push(200);
    await transport.handleRequest(request, response, body);
  };

  const httpServer = http.createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const { port } = httpServer.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    initializations,
    gets,
    nextRootsChange: () => new Promise((resolve) => {
      rootsWaiters.push(resolve);
    }),
    forgetSessions: () => {
      // Kept open (closed by close()), so that only the 404 can tell the client.
      for (const transport of sessions.values()) forgotten.add(transport);
      sessions.clear();
    },
    get sessionsCreated() {
      return sessionsCreated;
    },
    close: async () => {
      for (const transport of [...sessions.values(), ...forgotten]) await transport.close();
      sessions.clear();
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}
