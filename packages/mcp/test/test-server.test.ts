// Against the in-repo SDK test server (fixtures/test-server.mjs): every page of tools/list,
// tools/list_changed, a server that ignores cancellation, one that crashes and comes back, 401
// over HTTP, broken servers next to working ones, timeouts and what close() leaves behind.
import { realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { defaultMaxOutputBytes } from '@claw/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  McpAuthError,
  McpTimeoutError,
  McpUnavailableError,
  defaultCallTimeoutMs,
  defaultStartupTimeoutMs,
} from '../src/index.js';
import { descendantPids, isAlive } from '../src/process-tree.js';
import {
  ManualTimers,
  cleanUp,
  eventually,
  launcher,
  openServers,
  readLog,
  run,
  startHttpFixture,
  tempDir,
  testServer,
} from './helpers.js';

afterEach(cleanUp);

const allTools = [
  'alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'add_tool', 'slow', 'crash', 'fail', 'revoke', 'inspect',
].map((name) => `mcp_test_${name}`);

async function logFile(): Promise<string> {
  return path.join(await tempDir(), 'server.log');
}

function stdio(log: string, ...extra: string[]) {
  return { command: process.execPath, args: [testServer, '--log', log, ...extra] };
}

describe('tools/list', () => {
  it('registers the tools of every page (the server sends 3)', async () => {
    const log = await logFile();
    const { servers } = openServers({ test: stdio(log) });
    await servers.ready();
    expect(servers.names()).toEqual(allTools);
    const lists = (await readLog(log)).filter((event) => event.event === 'list');
    expect(lists.map((event) => event.cursor)).toEqual([null, '4', '8']);
  });

  it('tools/list_changed re-lists every page, and the new tool is there when the call that added it returns', async () => {
    const log = await logFile();
    const changes: string[][] = [];
    const { servers } = openServers({ test: stdio(log) });
    await servers.ready();
    servers.onChange(() => changes.push(servers.names()));
    expect(servers.get('mcp_test_added_tool')).toBeUndefined();
    const result = await run(servers.get('mcp_test_add_tool'), {});
    expect(result.content).toBe('added added_tool');
    // No waiting: the call returns once the new list is in.
    expect(servers.names()).toEqual([...allTools, 'mcp_test_added_tool']);
    expect(changes.at(-1)).toEqual([...allTools, 'mcp_test_added_tool']);
    const lists = (await readLog(log)).filter((event) => event.event === 'list');
    // 12 tools in pages of 4, then 13 in pages of 5.
    expect(lists.map((event) => event.cursor)).toEqual([null, '4', '8', null, '5', '10']);
    expect((await run(servers.get('mcp_test_added_tool'), {})).content).toMatch(/^added_tool from \d+$/);
  });
});

describe('calls', () => {
  it('an isError result is an error result, with its text', async () => {
    const { servers } = openServers({ test: stdio(await logFile()) });
    await servers.ready();
    expect(await run(servers.get('mcp_test_fail'), {})).toEqual({
      content: 'it failed on purpose',
      isError: true,
    });
  });

  it('a canceled call returns at once although the server ignores the cancellation, and the server is told', async () => {
    const log = await logFile();
    const { servers } = openServers({ test: stdio(log) });
    await servers.ready();
    const controller = new AbortController();
    const call = run(servers.get('mcp_test_slow'), {}, { signal: controller.signal });
    await eventually(
      async () => (await readLog(log)).some((event) => event.event === 'call' && event.name === 'slow'),
      'the server got the call',
    );
    const reason = new Error('canceled by the user');
    controller.abort(reason);
    // `slow` never answers: only claw's own cancellation can settle this.
    await expect(call).rejects.toBe(reason);
    await eventually(
      async () => (await readLog(log)).some((event) => event.event === 'cancelled'),
      'the server got notifications/cancelled',
    );
    expect((await run(servers.get('mcp_test_alpha'), {})).content).toMatch(/^alpha from/);
  });

  it('a call that takes longer than callTimeoutMs fails with a timeout error (timer under the test)', async () => {
    const timers = new ManualTimers();
    const { servers } = openServers({ test: stdio(await logFile()) }, { setTimer: timers.setTimer });
    await servers.ready();
    const call = run(servers.get('mcp_test_slow'), {});
    await eventually(() => timers.waiting(defaultCallTimeoutMs).length === 1, 'the call timer started');
    timers.fire(defaultCallTimeoutMs);
    const error = await call.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(McpTimeoutError);
    expect((error as McpTimeoutError).code).toBe('mcp_timeout');
    expect((error as Error).message).toContain('"callTimeoutMs"');
  });
});

describe('stdio servers', () => {
  it('run in the workspace, with a minimal environment plus their configured env', async () => {
    const workDir = await tempDir();
    process.env.CLAW_TEST_NOT_FOR_SERVERS = 'leaked';
    try {
      const { servers } = openServers(
        { test: { ...stdio(await logFile()), env: { GIVEN: '${FROM_CLAW}' } } },
        { workDir, env: { FROM_CLAW: 'given value' } },
      );
      await servers.ready();
      expect((await run(servers.get('mcp_test_inspect'), { what: 'cwd' })).content).toBe(await realpath(workDir));
      const env = JSON.parse((await run(servers.get('mcp_test_inspect'), { what: 'env' })).content) as Record<string, string>;
      expect(env.GIVEN).toBe('given value');
      expect(env.PATH).toBe(process.env.PATH);
      expect(env.CLAW_TEST_NOT_FOR_SERVERS).toBeUndefined();
    } finally {
      delete process.env.CLAW_TEST_NOT_FOR_SERVERS;
    }
  });

  it('a huge result is capped like bash output: start and end kept, the cut said', async () => {
    const { servers } = openServers({ test: stdio(await logFile()) });
    await servers.ready();
    const result = await run(servers.get('mcp_test_inspect'), { what: 'big', bytes: 200_000 });
    expect(result.content.startsWith('<'.repeat(defaultMaxOutputBytes / 2))).toBe(true);
    expect(result.content.endsWith('>'.repeat(defaultMaxOutputBytes / 2))).toBe(true);
    expect(result.content).toContain(`[... ${200_000 - defaultMaxOutputBytes} bytes of output cut;`);
  });
});

describe('resilience', () => {
  it('a crashed server is reconnected with backoff and its tools come back; a call meanwhile gets a clear error', async () => {
    const timers = new ManualTimers();
    const { servers, warnings } = openServers(
      { test: stdio(await logFile()) },
      { setTimer: timers.setTimer, reconnect: { initialDelayMs: 100, maxDelayMs: 400 } },
    );
    await servers.ready();
    const firstPid = servers.status()[0]?.pid;
    const crash = await run(servers.get('mcp_test_crash'), {}).catch((caught: unknown) => caught);
    expect(crash).toBeInstanceOf(McpUnavailableError);
    expect((crash as Error).message).toMatch(/^MCP server "test" lost its connection during the call of crash \(the process exited\)/);
    await eventually(() => servers.status()[0]?.state === 'reconnecting', 'the server is reconnecting');
    expect(warnings.map((warning) => warning.code)).toEqual(['mcp_server_disconnected']);
    // During the outage the tools stay, and answer with what is going on.
    const during = await run(servers.get('mcp_test_alpha'), {}).catch((caught: unknown) => caught);
    expect(during).toBeInstanceOf(McpUnavailableError);
    expect((during as Error).message).toBe(
      'MCP server "test" is not connected (the process exited); claw is reconnecting (attempt 1 ' +
      'of 8). Try again in a moment, or go on without it',
    );
    expect(timers.fire(100)).toBe(1);
    await eventually(() => servers.status()[0]?.state === 'ready', 'the server is back');
    expect(servers.names()).toEqual(allTools);
    expect(servers.status()[0]?.pid).not.toBe(firstPid);
    expect(isAlive(firstPid ?? -1)).toBe(false);
    expect((await run(servers.get('mcp_test_alpha'), {})).content).toBe(`alpha from ${servers.status()[0]?.pid}`);
    expect(warnings.map((warning) => warning.code)).toEqual(['mcp_server_disconnected', 'mcp_server_reconnected']);
  });

  it('backoff doubles up to its limit, and after maxAttempts the server is failed and its tools are gone', async () => {
    const timers = new ManualTimers();
    const folder = await tempDir();
    const refuse = path.join(folder, 'refuse');
    const { servers, warnings } = openServers(
      { test: stdio(path.join(folder, 'log'), '--fail-if', refuse) },
      {
        setTimer: timers.setTimer,
        reconnect: { initialDelayMs: 100, maxDelayMs: 300, maxAttempts: 3 },
      },
    );
    await servers.ready();
    await writeFile(refuse, '');
    await run(servers.get('mcp_test_crash'), {}).catch(() => undefined);
    await eventually(() => servers.status()[0]?.state === 'reconnecting', 'reconnecting');
    for (const delay of [100, 200, 300]) {
      await eventually(() => timers.waiting(delay).length === 1, `a retry in ${delay} ms`);
      timers.fire(delay);
      if (delay !== 300) {
        await eventually(() => servers.status()[0]?.reconnectAttempt === (delay === 100 ? 2 : 3), 'the next attempt');
      }
    }
    await eventually(() => servers.status()[0]?.state === 'failed', 'failed');
    expect(servers.names()).toEqual([]);
    const status = servers.status()[0];
    expect(status?.lastError).toContain('test server: refusing to start on purpose');
    const last = warnings.at(-1);
    expect(last?.code).toBe('mcp_server_failed');
    expect(last?.message).toMatch(/^MCP server "test" could not be reconnected \(3 attempts; last: /);
  });

  it('one broken server does not stop the others: each is skipped with which, why and how to fix', async () => {
    const { servers, warnings } = openServers({
      missing: { command: 'claw-no-such-mcp-server' },
      exits: { command: process.execPath, args: ['-e', 'process.stderr.write("bad config\\n"); process.exit(2)'] },
      test: stdio(await logFile()),
    });
    await servers.ready();
    expect(servers.names()).toEqual(allTools);
    expect(servers.status().map((status) => [status.name, status.state])).toEqual([
      ['missing', 'failed'],
      ['exits', 'failed'],
      ['test', 'ready'],
    ]);
    expect(warnings.map((warning) => [warning.server, warning.code])).toEqual([
      ['missing', 'mcp_server_skipped'],
      ['exits', 'mcp_server_skipped'],
    ]);
    const [missing, exits] = warnings;
    expect(missing?.message).toContain('MCP server "missing" could not be started (claw-no-such-mcp-server): command not found');
    expect(missing?.message).toContain('Check "command" and "args" of "missing" in .claw/mcp.json');
    expect(exits?.message).toContain('the process exited; it wrote to stderr: bad config');
    expect(exits?.message).toContain('claw goes on without this server\'s tools');
  });

  it('servers start in parallel; one that does not start within startupTimeoutMs is skipped, and its process killed', async () => {
    const timers = new ManualTimers();
    const silent = { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'] };
    const { servers, warnings } = openServers({ silent, quiet: silent }, { setTimer: timers.setTimer });
    let started: number[] = [];
    // Both are starting at once: neither waits for the other.
    await eventually(async () => {
      started = await descendantPids(process.pid);
      return started.length === 2 && timers.waiting(defaultStartupTimeoutMs).length === 2;
    }, 'both servers run and their start-up timers started');
    timers.fire(defaultStartupTimeoutMs);
    await servers.ready();
    expect(servers.status().map((status) => status.state)).toEqual(['failed', 'failed']);
    const warning = warnings.find((each) => each.server === 'silent');
    expect(warning?.message).toContain(`MCP server "silent" did not start up within ${defaultStartupTimeoutMs} ms`);
    expect(warning?.message).toContain('raise "startupTimeoutMs" of "silent"');
    await eventually(() => started.every((pid) => !isAlive(pid)), 'the silent server was killed');
  });
});

describe('HTTP', () => {
  it('a 401 is reported as an MCP authentication error naming the server; the other servers work', async () => {
    const log = await logFile();
    const http = await startHttpFixture(testServer, ['--http', '--token', 'right', '--log', log]);
    const { servers, warnings } = openServers(
      {
        remote: { url: http.url, headers: { Authorization: 'Bearer ${REMOTE_TOKEN}' } },
        test: stdio(await logFile()),
      },
      { env: { REMOTE_TOKEN: 'wrong' } },
    );
    await servers.ready();
    expect(servers.status().map((status) => status.state)).toEqual(['failed', 'ready']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.server).toBe('remote');
    expect(warnings[0]?.message).toContain('MCP server "remote" refused claw\'s credentials (HTTP 401 Unauthorized)');
    expect(warnings[0]?.message).toContain('check the "headers" of "remote"');
    expect(servers.status()[0]?.lastError).toContain('HTTP 401');
    expect(servers.names()).toEqual(allTools);
    expect((await readLog(log)).some((event) => event.event === 'unauthorized')).toBe(true);
  });

  it('a 403 is an MCP authentication error too', async () => {
    const http = await startHttpFixture(testServer, ['--http', '--token', 'right', '--deny-status', '403']);
    const { servers, warnings } = openServers({ remote: { url: http.url } });
    await servers.ready();
    expect(servers.status()[0]?.state).toBe('failed');
    expect(warnings[0]?.message).toContain('MCP server "remote" refused claw\'s credentials (HTTP 403 Forbidden)');
  });

  it('with the right token: every page listed, calls made, and close() deletes the session', async () => {
    const log = await logFile();
    const http = await startHttpFixture(testServer, ['--http', '--token', 'right', '--log', log]);
    const { servers } = openServers(
      { remote: { url: http.url, headers: { Authorization: 'Bearer ${REMOTE_TOKEN}' } } },
      { env: { REMOTE_TOKEN: 'right' } },
    );
    await servers.ready();
    expect(servers.names()).toEqual(allTools.map((name) => name.replace('mcp_test_', 'mcp_remote_')));
    expect((await run(servers.get('mcp_remote_beta'), {})).content).toMatch(/^beta from \d+$/);
    await run(servers.get('mcp_remote_add_tool'), {});
    expect(servers.get('mcp_remote_added_tool')).toBeDefined();
    await servers.close();
    expect((await readLog(log)).filter((event) => event.event === 'session_deleted')).toHaveLength(1);
  });

  it('a 401 on a call is an McpAuthError naming the server', async () => {
    const http = await startHttpFixture(testServer, ['--http', '--token', 'right']);
    const { servers } = openServers(
      { remote: { url: http.url, headers: { Authorization: 'Bearer ${REMOTE_TOKEN}' } } },
      { env: { REMOTE_TOKEN: 'right' } },
    );
    await servers.ready();
    expect((await run(servers.get('mcp_remote_revoke'), {})).content).toBe('token revoked');
    const error = await run(servers.get('mcp_remote_alpha'), {}).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(McpAuthError);
    expect((error as McpAuthError).code).toBe('mcp_auth_failed');
    expect((error as McpAuthError).server).toBe('remote');
    expect((error as Error).message).toContain('MCP server "remote" refused claw\'s credentials (HTTP 401');
  });

  it('a server that went away is reconnected (a new session) once it is back', async () => {
    const timers = new ManualTimers();
    const first = await startHttpFixture(testServer, ['--http']);
    const { servers, warnings } = openServers(
      { remote: { url: first.url } },
      { setTimer: timers.setTimer, reconnect: { initialDelayMs: 100 } },
    );
    await servers.ready();
    await first.stop();
    // The end of its event stream may tell first, or this call does.
    const error = await run(servers.get('mcp_remote_alpha'), {}).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(McpUnavailableError);
    expect((error as Error).message).toMatch(/^MCP server "remote" (lost its connection during the call of alpha|is not connected)/);
    await eventually(() => servers.status()[0]?.state === 'reconnecting', 'reconnecting');
    const port = new URL(first.url).port;
    const second = await startHttpFixture(testServer, ['--http', '--port', port]);
    expect(second.url).toBe(first.url);
    timers.fire(100);
    await eventually(() => servers.status()[0]?.state === 'ready', 'reconnected');
    expect((await run(servers.get('mcp_remote_alpha'), {})).content).toBe(`alpha from ${second.child.pid}`);
    expect(warnings.map((warning) => warning.code)).toEqual(['mcp_server_disconnected', 'mcp_server_reconnected']);
  });
});

describe('close()', () => {
  it('kills a launcher and the server it started (as npx does), checked by pid', async () => {
    const log = await logFile();
    const { servers } = openServers({
      launched: { command: process.execPath, args: [launcher, process.execPath, testServer, '--linger', '--log', log] },
    });
    await servers.ready();
    expect(servers.names()).toContain('mcp_launched_alpha');
    const launcherPid = servers.status()[0]?.pid ?? -1;
    const serverPid = (await readLog(log)).find((event) => event.event === 'list')?.pid as number;
    expect(serverPid).not.toBe(launcherPid);
    expect(await descendantPids(launcherPid)).toContain(serverPid);
    await servers.close();
    expect(isAlive(launcherPid)).toBe(false);
    expect(isAlive(serverPid)).toBe(false);
  });
});
