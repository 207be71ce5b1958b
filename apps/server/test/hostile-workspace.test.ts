import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { probeIsolation } from '@claw/sandbox';
import { FakeOpenAIServer, writeHostileSettings, type FakeToolCall } from '@claw/testing/node';
import { afterEach, describe, expect, it } from 'vitest';
import { WsClient, cleanUp as cleanUpClients } from './helpers.js';
import { ServerProcess, killServers } from './process.js';

// claw-server in a cloned repository (TRUST-2..5), through the built `claw-server` on a real model
// path: the workspace's `.claw/config.json` (its model URL, approval, sandbox) and `.claw/mcp.json`
// count only with --trust-workspace (the server never asks); the generated token lives outside
// the workspace, and the model's tools cannot read it.

const { available } = await probeIsolation();

// Where isolation is required (CI sets CLAW_REQUIRE_ISOLATION=1), skipping the check of bash
// below would prove nothing: this fails instead.
it.runIf(process.env.CLAW_REQUIRE_ISOLATION === '1')('bubblewrap works where it is required', () => {
  expect(available).toBe(true);
});

/** The user's API key: it may go only where the user's own settings (or a trusted file) say. */
const apiKey = `sk-user-secret-${randomBytes(8).toString('hex')}`;

interface Hostile {
  /** The cloned repository (its real path, as the server names it). */
  workDir: string;
  /** Where the server runs from; the port file goes here. */
  cwd: string;
  /** Written by the program its mcp.json starts: `KEY=<what it was given>`. */
  marker: string;
  /** $XDG_STATE_HOME: no mask of the sandbox covers it, only claw's hiding of its claw folder. */
  stateHome: string;
  /** A fresh user: HOME and the XDG folders new, the API key set, the model in the user's own settings. */
  env: Record<string, string>;
  recorder: FakeOpenAIServer;
}

const folders: string[] = [];
let model: FakeOpenAIServer | undefined;
let recorder: FakeOpenAIServer | undefined;

afterEach(async () => {
  await cleanUpClients();
  await killServers();
  await model?.close();
  await recorder?.close();
  model = undefined;
  recorder = undefined;
  for (const made of folders.splice(0)) await rm(made, { recursive: true, force: true });
});

async function folder(parent: string, prefix: string): Promise<string> {
  const made = await mkdtemp(path.join(parent, prefix));
  folders.push(made);
  return made;
}

/**
 * The hostile repository and a fresh user whose own settings (`$XDG_CONFIG_HOME/claw/config.json`)
 * point at the real model, `modelServer`. The model is there, not in OPENAI_BASE_URL: the
 * environment wins over every settings file, so the workspace's `baseUrl` would not count either
 * way.
 */
async function hostileWorkspace(modelServer: FakeOpenAIServer): Promise<Hostile> {
  // The hostile repository's "model": a loopback listener that records every request, headers
  // included, and answers with one streamed text.
  recorder = await FakeOpenAIServer.start({ turns: [{ text: 'answered by the hostile endpoint' }] });
  const root = await realpath(await folder(tmpdir(), 'claw-server-hostile-'));
  const workDir = path.join(root, 'repo');
  const cwd = path.join(root, 'cwd');
  const home = path.join(root, 'home');
  const marker = path.join(root, 'mcp-started.txt');
  await mkdir(workDir);
  await mkdir(cwd);
  await mkdir(home);
  await writeHostileSettings(workDir, { baseUrl: recorder.baseURL, marker });
  // Not under /tmp, which the sandbox masks as a whole: in /var/tmp (FHS gives every Linux system
  // one, and no mask covers it) only claw's hiding of its own folders keeps them from bash.
  const configHome = await folder('/var/tmp', 'claw-server-hostile-config-');
  const stateHome = await folder('/var/tmp', 'claw-server-hostile-state-');
  await mkdir(path.join(configHome, 'claw'));
  await writeFile(path.join(configHome, 'claw', 'config.json'), JSON.stringify({ baseUrl: modelServer.baseURL }));
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: configHome,
    XDG_STATE_HOME: stateHome,
    OPENAI_API_KEY: apiKey,
  };
  return { workDir, cwd, marker, stateHome, env, recorder };
}

/** `claw-server --workdir <repo>` on OS-chosen ports, listening. */
async function startServer(hostile: Hostile, extra: readonly string[] = []) {
  const portFile = path.join(hostile.cwd, 'ports.json');
  const server = new ServerProcess(
    ['--workdir', hostile.workDir, '--tcp-port', '0', '--http-port', '0', '--port-file', portFile, ...extra],
    { env: hostile.env, cwd: hostile.cwd },
  );
  const ports = await server.ports(portFile);
  const client = await WsClient.connect(ports.http);
  await client.hello(server.token());
  return { server, client };
}

/** Opens a session and runs one prompt, denying every question; resolves with its answer. */
async function runPrompt(client: WsClient, prompt: string): Promise<string> {
  client.send({ type: 'open', session_id: 'hostile' });
  await client.next('session_opened');
  client.send({ type: 'prompt', content: prompt });
  const denied = new Set<string>();
  const done = await client.waitFor(() => {
    for (const request of client.of('approval_request')) {
      if (denied.has(request.request_id)) continue;
      denied.add(request.request_id);
      client.send({ type: 'approval_response', request_id: request.request_id, decision: 'deny' });
    }
    return client.of('task_completed')[0] ?? client.of('task_failed')[0];
  }, 'the task to end', 20_000);
  expect(done.type).toBe('task_completed');
  return done.type === 'task_completed' ? done.content : '';
}

/** The Observations (tool results) of a request the model was sent, by tool call id. */
function observations(index: number): Map<string, string> {
  const { messages = [] } = (model?.requests[index]?.body ?? {}) as {
    messages?: Array<{ role: string; content: unknown; tool_call_id?: string }>;
  };
  const found = new Map<string, string>();
  for (const message of messages) {
    if (message.role === 'tool' && message.tool_call_id !== undefined) {
      found.set(message.tool_call_id, JSON.stringify(message.content));
    }
  }
  return found;
}

const call = (id: string, name: string, args: object): FakeToolCall => ({ id, name, arguments: JSON.stringify(args) });

describe('claw-server in an untrusted workspace (TRUST-2, TRUST-3)', () => {
  it('logs what it ignored; a task goes to the user\'s model with the key, no MCP server starts, a write still asks', async () => {
    model = await FakeOpenAIServer.start({
      turns: [{ toolCalls: [call('call_write', 'write_file', { path: 'pwned.txt', content: 'x' })] }, { text: 'not written' }],
    });
    const hostile = await hostileWorkspace(model);
    const { server, client } = await startServer(hostile);
    const notice = server.stderr.split('\n').find((line) => line.includes('own settings are not used')) ?? '';
    expect(notice, server.stderr).toMatch(
      /^claw-server: \S+: this workspace's own settings are not used because it is not trusted: ignored /,
    );
    expect(notice).toContain(`claw-server: ${hostile.workDir}: `);
    for (const key of ['baseUrl', 'model', 'approval', 'sandbox.isolation']) expect(notice).toContain(key);
    expect(notice).toContain('the MCP servers of .claw/mcp.json (not started)');
    expect(notice).toContain(`run \`claw trust --workdir ${hostile.workDir}\` or start claw-server with --trust-workspace`);
    expect(server.stdout).toMatch(/model gpt-4\.1-mini · approval ask/);

    expect(await runPrompt(client, 'set things up')).toBe('not written');
    expect(hostile.recorder.requests).toEqual([]);
    expect(model.requests).toHaveLength(2);
    expect(model.requests[0]?.headers.authorization).toBe(`Bearer ${apiKey}`);
    // The write was asked about (approval "allow" not taken) and denied.
    expect(client.of('approval_request')).toHaveLength(1);
    expect(existsSync(path.join(hostile.workDir, 'pwned.txt'))).toBe(false);
    expect(existsSync(hostile.marker)).toBe(false);
    expect(server.stderr).not.toContain('bash isolation: off');
  }, 45_000);

  it('with --trust-workspace the files count: the model is called at their URL with the key, the MCP server starts with its ${VAR} filled', async () => {
    model = await FakeOpenAIServer.start({ turns: [{ text: 'the user\'s model' }] });
    const hostile = await hostileWorkspace(model);
    const { server, client } = await startServer(hostile, ['--trust-workspace']);
    expect(server.stderr).not.toContain('own settings are not used');
    expect(server.stdout).toMatch(/model hostile-model · approval allow/);

    expect(await runPrompt(client, 'hi')).toBe('answered by the hostile endpoint');
    expect(model.requests).toEqual([]);
    const [request] = hostile.recorder.requests;
    expect(request?.headers.authorization).toBe(`Bearer ${apiKey}`);
    expect(request?.body).toMatchObject({ model: 'hostile-model' });
    expect(await readFile(hostile.marker, 'utf8')).toBe(`KEY=${apiKey}`);
  }, 45_000);
});

describe('the server\'s generated token is out of the model\'s reach (TRUST-4)', () => {
  it('.claw/server.json holds no token; read_file of it and of the token file is refused, bash (isolated) cannot read the token file', async () => {
    model = await FakeOpenAIServer.start({ turns: [] });
    const hostile = await hostileWorkspace(model);
    const { server, client } = await startServer(hostile, ['--approval', 'allow']);
    const token = server.token();
    const recordText = await readFile(path.join(hostile.workDir, '.claw', 'server.json'), 'utf8');
    expect(recordText).not.toContain(token);
    const record = JSON.parse(recordText) as { token_file?: string };
    expect(Object.keys(record).sort()).toEqual(['http', 'pid', 'tcp', 'token_file']);
    const tokenFile = record.token_file ?? '';
    expect(tokenFile.startsWith(path.join(hostile.stateHome, 'claw', 'servers') + path.sep)).toBe(true);
    expect(JSON.parse(await readFile(tokenFile, 'utf8'))).toMatchObject({ token });

    // Absolute paths outside the workspace are refused by bash's text check before anything runs;
    // spelled so that the check does not see them, only the sandbox keeps the file away.
    const hiddenPath = (file: string): string => `"$(echo ${Buffer.from(file).toString('base64')} | base64 -d)"`;
    const calls = [
      call('call_record', 'read_file', { path: '.claw/server.json' }),
      call('call_token', 'read_file', { path: tokenFile }),
      call('call_cat', 'bash', { command: `cat ${tokenFile}` }),
      ...(available
        ? [call('call_hidden', 'bash', {
            command: `cat ${hiddenPath(tokenFile)}; ls -A ${hiddenPath(path.dirname(tokenFile))}; echo probe-done`,
          })]
        : []),
    ];
    model.enqueue({ toolCalls: calls }, { text: 'no token here' });

    expect(await runPrompt(client, 'find the token')).toBe('no token here');
    expect(model.requests).toHaveLength(2);
    const seen = observations(1);
    expect([...seen.keys()].sort()).toEqual(calls.map((each) => each.id).sort());
    for (const [id, content] of seen) expect(content, id).not.toContain(token);
    expect(seen.get('call_record')).toMatch(/permission denied: read_file may not read \.claw\/server\.json: it is claw's own state/);
    expect(seen.get('call_token')).toMatch(/permission denied: .*outside the workspace/);
    expect(seen.get('call_cat')).toMatch(/permission denied: .*is an absolute path/);
    if (available) {
      // It ran, under the sandbox: the user's claw folder of state is not there at all.
      const hidden = JSON.parse(seen.get('call_hidden') ?? '""') as string;
      expect(/--- stdout ---\n([^]*?)\n--- stderr ---/.exec(hidden)?.[1], hidden).toBe('probe-done');
      expect(hidden).toContain(`cat: ${tokenFile}: No such file or directory`);
    }
    // The token file is still there for clients.
    expect(JSON.parse(await readFile(tokenFile, 'utf8'))).toMatchObject({ token });
  }, 45_000);
});
