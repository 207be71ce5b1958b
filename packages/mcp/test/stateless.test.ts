// MCP-6: stateless Streamable HTTP servers (no session id) that answer the optional standalone GET
// stream with 404 or 405 work; a 404 still means a lost session when there is one.
import { afterEach, describe, expect, it } from 'vitest';
import { McpUnavailableError } from '../src/index.js';
import { ManualTimers, cleanUp, eventually, openServers, run } from './helpers.js';
import { startSdkHttpServer, type SdkHttpServer } from './sdk-http-server.js';

const started: SdkHttpServer[] = [];

async function sdkServer(options: Parameters<typeof startSdkHttpServer>[0] = {}): Promise<SdkHttpServer> {
  const server = await startSdkHttpServer(options);
  started.push(server);
  return server;
}

afterEach(async () => {
  await cleanUp();
  await Promise.all(started.splice(0).map((server) => server.close()));
});

describe('a stateless server', () => {
  for (const status of [404, 405] as const) {
    it(`that answers GET with ${status}: its tools are listed and callable, and nothing is reported`, async () => {
      const server = await sdkServer({ statelessGetStatus: status });
      const timers = new ManualTimers();
      const { servers, warnings } = openServers({ stateless: { url: server.url } }, { setTimer: timers.setTimer });
      await servers.ready();
      expect(servers.status()[0]?.state).toBe('ready');
      expect(servers.names()).toEqual(['mcp_stateless_add', 'mcp_stateless_ask', 'mcp_stateless_roots', 'mcp_stateless_wait']);
      // The client did ask for the stream, and got the refusal.
      await eventually(() => server.gets.length > 0, 'the client asked for the GET stream');
      expect(server.gets).toEqual([status]);
      expect((await run(servers.get('mcp_stateless_add'), { a: 2, b: 3 })).content).toBe('5');
      expect((await run(servers.get('mcp_stateless_add'), { a: 1, b: 1 })).content).toBe('2');
      expect(servers.status()[0]?.state).toBe('ready');
      expect(warnings).toEqual([]);
      // No reconnect was scheduled.
      expect(timers.timers.filter((timer) => !timer.canceled && !timer.fired)).toEqual([]);
    });
  }
});

describe('a server with sessions', () => {
  it('that forgot the session (404 with a session id) is initialized again, and its tools come back', async () => {
    const server = await sdkServer();
    const timers = new ManualTimers();
    const { servers, warnings } = openServers(
      { remote: { url: server.url } },
      { setTimer: timers.setTimer, reconnect: { initialDelayMs: 100 } },
    );
    await servers.ready();
    expect(server.sessionsCreated).toBe(1);
    server.forgetSessions();
    const error = await run(servers.get('mcp_remote_add'), { a: 1, b: 2 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(McpUnavailableError);
    expect((error as Error).message).toMatch(/^MCP server "remote" lost its connection during the call of add/);
    expect(servers.status()[0]?.state).toBe('reconnecting');
    expect(timers.fire(100)).toBe(1);
    await eventually(() => servers.status()[0]?.state === 'ready', 'the server is connected again');
    expect(server.sessionsCreated).toBe(2);
    expect((await run(servers.get('mcp_remote_add'), { a: 1, b: 2 })).content).toBe('3');
    expect(warnings.map((warning) => warning.code)).toEqual(['mcp_server_disconnected', 'mcp_server_reconnected']);
  });
});
