import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findUnpairedCalls, stateFolderIgnore } from '@claw/core';
import { FileSessionManager } from '@claw/session-store';
import { FakeOpenAIServer } from '@claw/testing/node';
import { afterEach, describe, expect, it } from 'vitest';
import { parseServerArgs, serveDefaults } from '../src/args.js';
import { serverFiles } from '../src/server-files.js';
import { WsClient, cleanUp as cleanUpClients } from './helpers.js';
import { ServerProcess, killServers, processesWith, serverEnv } from './process.js';

const folders: string[] = [];
let model: FakeOpenAIServer | undefined;

afterEach(async () => {
  await cleanUpClients();
  await killServers();
  await model?.close();
  model = undefined;
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

async function folder(): Promise<string> {
  const made = await mkdtemp(path.join(tmpdir(), 'claw-server-cli-'));
  folders.push(made);
  return made;
}

describe('the claw-server command line (CH-12)', () => {
  it('--a2a-approval-timeout-ms sets how long an inbound A2A call waits for a console (A2A-2)', () => {
    const timeoutOf = (argv: string[]): number | undefined => {
      const command = parseServerArgs(argv);
      return command.kind === 'serve' ? command.options.a2aApprovalTimeoutMs : undefined;
    };
    expect(timeoutOf([])).toBe(serveDefaults.a2aApprovalTimeoutMs);
    expect(timeoutOf(['--a2a-approval-timeout-ms', '1500'])).toBe(1500);
    expect(timeoutOf(['--a2a-approval-timeout-ms', '0'])).toBe(0);
  });

  it('--help answers the options and --version the version; bad usage exits 2 saying what to do', async () => {
    const help = await ServerProcess.run(['--help']);
    expect(help.status).toBe(0);
    for (const option of ['--workdir', '--port-file', '--token-file', '--allow-remote', '--allow-origin', '--demo', '--idle-timeout-ms', '--a2a-approval-timeout-ms']) {
      expect(help.stdout).toContain(option);
    }
    const version = await ServerProcess.run(['--version']);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const cases: Array<[string[], RegExp]> = [
      [['--nope'], /unknown option --nope; run `claw-server --help`/],
      [['--tcp-port', 'x'], /--tcp-port needs a whole number/],
      [['--a2a-approval-timeout-ms', 'soon'], /--a2a-approval-timeout-ms needs a whole number/],
      [['--allow-origin', 'https://a.example/path'], /--allow-origin takes an origin/],
      [['--workdir', '/definitely/not/here'], /does not exist/],
      [['--host', '0.0.0.0'], /refusing to listen on 0\.0\.0\.0.*--allow-remote/],
      [['--host', '0.0.0.0', '--allow-remote'], /--allow-remote needs a token you set/],
    ];
    for (const [args, message] of cases) {
      const result = await ServerProcess.run(args);
      expect(result.status, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
    }
  });

  it('--demo listens on the ports it reports, keeps the token outside the workspace, and serves a task to a WebSocket client', async () => {
    const cwd = await folder();
    const workDir = await folder();
    const portFile = path.join(cwd, 'ports.json');
    const env = serverEnv();
    const server = new ServerProcess(
      ['--demo', '--workdir', workDir, '--tcp-port', '0', '--http-port', '0', '--port-file', portFile],
      { env, cwd },
    );
    const ports = await server.ports(portFile);
    expect(ports.pid).toBe(server.child.pid);
    await writeFile(path.join(workDir, 'README.md'), '# demo\n');
    const record = JSON.parse(await readFile(path.join(workDir, '.claw', 'server.json'), 'utf8')) as Record<string, unknown>;
    const { tokenFile } = await serverFiles({ workspace: workDir, env });
    expect(record).toEqual({ tcp: ports.tcp, http: ports.http, pid: ports.pid, token_file: tokenFile });
    expect((await stat(path.join(workDir, '.claw', 'server.json'))).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(tokenFile, 'utf8'))).toMatchObject({ token: server.token() });
    // The token stays out of version control (and any other state there).
    expect(await readFile(path.join(workDir, '.claw', '.gitignore'), 'utf8')).toBe(stateFolderIgnore);
    expect(server.stdout).toContain(`console:   http://127.0.0.1:${ports.http}/#token=`);
    const health = await fetch(`http://127.0.0.1:${ports.http}/healthz`);
    expect(await health.json()).toEqual({ status: 'ok' });

    const client = await WsClient.connect(ports.http);
    await client.hello(server.token());
    client.send({ type: 'prompt', content: 'show me' });
    // Every question is put to the client; it denies each (write, then bash).
    const asked: string[] = [];
    const completed = client.waitFor(() => {
      for (const request of client.of('approval_request')) {
        if (asked.includes(request.request_id)) continue;
        asked.push(request.request_id);
        client.send({ type: 'approval_response', request_id: request.request_id, decision: 'deny' });
      }
      return client.of('task_completed')[0];
    }, 'the demo task to complete', 15_000);
    const done = await completed;
    expect(asked.length).toBeGreaterThanOrEqual(2);
    expect(done.content).toContain('denied by the approval gate');
    server.signal('SIGTERM');
    expect(await server.exited).toBe(0);
    // Its record and its token file go with it.
    await expect(stat(path.join(workDir, '.claw', 'server.json'))).rejects.toThrow();
    await expect(stat(tokenFile)).rejects.toThrow();
  });

  it('--demo that cannot start (its port taken) exits 2 and removes the demo workspace it made', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = taken.address() as net.AddressInfo;
      const result = await ServerProcess.run(['--demo', '--tcp-port', String(port), '--http-port', '0']);
      expect(result.status, result.stderr).toBe(2);
      const demo = /a fresh workspace with a small project at (\S+)/.exec(result.stderr)?.[1];
      expect(demo, result.stderr).toBeDefined();
      if (demo !== undefined && existsSync(demo)) folders.push(demo);
      expect(result.stderr).toMatch(new RegExp(`a port is already in use .*:${port}\\b`));
      expect(result.stderr).toContain(`removed the demo workspace ${demo ?? ''}, as the server did not start`);
      expect(existsSync(demo ?? '')).toBe(false);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });

  it('says on stderr which stored session it cannot read, instead of leaving it out unseen', async () => {
    const cwd = await folder();
    const workDir = await folder();
    const damaged = path.join(workDir, '.claw', 'sessions', 'broken.jsonl');
    await mkdir(path.dirname(damaged), { recursive: true });
    await writeFile(damaged, 'scribbled over\n');
    const portFile = path.join(cwd, 'ports.json');
    const server = new ServerProcess(
      ['--workdir', workDir, '--tcp-port', '0', '--http-port', '0', '--port-file', portFile],
      { env: serverEnv({ OPENAI_API_KEY: 'test', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' }), cwd },
    );
    await server.ports(portFile);
    server.signal('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(server.stderr).toContain(
      `claw-server: a stored session cannot be read and is not listed: The session file ${damaged} is corrupt at line 1`,
    );
  });

  it('SIGTERM during a running tool: server_stopping, the task canceled after the grace with paired history, exit 0, no process left', async () => {
    const marker = `31.${process.pid % 1000}${Date.now() % 1000}`;
    model = await FakeOpenAIServer.start({
      turns: [
        { toolCalls: [{ id: 'call-sleep', name: 'bash', arguments: JSON.stringify({ command: `sleep ${marker}` }) }] },
        { text: 'never reached' },
      ],
    });
    const cwd = await folder();
    const workDir = await folder();
    const portFile = path.join(cwd, 'ports.json');
    const server = new ServerProcess(
      ['--workdir', workDir, '--tcp-port', '0', '--http-port', '0', '--port-file', portFile, '--shutdown-grace-ms', '300'],
      { env: serverEnv({ OPENAI_API_KEY: 'test', OPENAI_BASE_URL: model.baseURL }), cwd },
    );
    const ports = await server.ports(portFile);
    const client = await WsClient.connect(ports.http);
    await client.hello(server.token());
    client.send({ type: 'open', session_id: 'long-job' });
    await client.next('session_opened');
    client.send({ type: 'prompt', content: 'run the long job' });
    const request = await client.next('approval_request', () => true, 0, 10_000);
    client.send({ type: 'approval_response', request_id: request.request_id, decision: 'allow_once' });
    // The command runs (as a real child process of the server).
    const deadline = Date.now() + 10_000;
    while ((await processesWith(`sleep ${marker}`)).length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(await processesWith(`sleep ${marker}`)).not.toEqual([]);

    server.signal('SIGTERM');
    expect(await client.next('server_stopping')).toMatchObject({ grace_ms: 300 });
    const canceled = await client.next('task_canceled', () => true, 0, 10_000);
    expect(canceled.task_id).toBe(request.task_id);
    // The tool's call got its result (canceled) before the end: the history is paired.
    const result = await client.next('tool_result', (event) => event.tool_name === 'bash');
    expect(result.is_error).toBe(true);
    await client.whenClosed();
    expect(client.closeCode).toBe(1001);
    expect(await server.exited).toBe(0);
    expect(server.stderr).toContain('SIGTERM: stopping');
    expect(await processesWith(`sleep ${marker}`)).toEqual([]);
    // Stored, and paired, on disk.
    const store = new FileSessionManager({ workDir });
    const lease = await store.open('long-job', { workDir });
    try {
      const history = lease.session.history();
      expect(history.some((message) => message.role === 'tool' && message.toolCallId === 'call-sleep')).toBe(true);
      expect(findUnpairedCalls(history)).toEqual([]);
    } finally {
      await lease.release();
      await store.close();
    }
  });

  it('a second signal cancels at once instead of waiting for the grace', async () => {
    model = await FakeOpenAIServer.start({
      turns: [{ toolCalls: [{ id: 'call-wait', name: 'bash', arguments: JSON.stringify({ command: 'sleep 30' }) }] }],
    });
    const cwd = await folder();
    const workDir = await folder();
    const portFile = path.join(cwd, 'ports.json');
    const server = new ServerProcess(
      ['--workdir', workDir, '--tcp-port', '0', '--http-port', '0', '--port-file', portFile, '--shutdown-grace-ms', '60000'],
      { env: serverEnv({ OPENAI_API_KEY: 'test', OPENAI_BASE_URL: model.baseURL }), cwd },
    );
    const ports = await server.ports(portFile);
    const client = await WsClient.connect(ports.http);
    await client.hello(server.token());
    client.send({ type: 'prompt', content: 'wait' });
    const request = await client.next('approval_request', () => true, 0, 10_000);
    client.send({ type: 'approval_response', request_id: request.request_id, decision: 'allow_once' });
    await client.next('state', (event) => event.state === 'running', client.events.indexOf(request));
    server.signal('SIGTERM');
    await client.next('server_stopping');
    // Without the second signal this would wait the whole minute of grace (the test would time out).
    server.signal('SIGINT');
    expect(await server.exited).toBe(0);
    expect(client.of('task_canceled')).toHaveLength(1);
  });
});
