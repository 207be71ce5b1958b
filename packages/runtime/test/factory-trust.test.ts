// A workspace's settings files through the factory (TRUST-2): the servers of an untrusted
// .claw/mcp.json are never started and its .claw/a2a.json is not read (no delegate_agent); a
// workspace is trusted by the record in the user's claw folder (of the factory's env) or by
// `settings.trustWorkspaces` (--trust-workspace). The settings' allowFiles reach the policy.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Message, ModelRequest } from '@claw/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveSettings, trustWorkspace } from '../src/index.js';
import { cleanUp, scriptedFactory, settings, tempWorkspace } from './helpers.js';

// The in-repo SDK test server of @claw/mcp's tests.
const testServer = fileURLToPath(new URL('../../mcp/test/fixtures/test-server.mjs', import.meta.url));
const builtins = ['read_file', 'write_file', 'edit_file', 'bash', 'spawn_subagent'];

let configHome: string;
/** The factory's environment: a user whose claw folder (and record) is a temporary one. */
let env: { XDG_CONFIG_HOME: string };

beforeEach(async () => {
  configHome = await realpath(await mkdtemp(path.join(tmpdir(), 'claw-factory-trust-home-')));
  env = { XDG_CONFIG_HOME: configHome };
});

afterEach(async () => {
  await cleanUp();
  await rm(configHome, { recursive: true, force: true });
});

async function settingsFile(workDir: string, name: string, value: unknown): Promise<void> {
  await mkdir(path.join(workDir, '.claw'), { recursive: true });
  await writeFile(path.join(workDir, '.claw', name), JSON.stringify(value));
}

/**
 * A workspace whose .claw/mcp.json has one stdio server, "marker": a node process that first
 * writes `marker` (so a start leaves a trace whatever happens next), then serves the test server.
 */
async function markerWorkspace(): Promise<{ workDir: string; marker: string }> {
  const workDir = await tempWorkspace('claw-factory-trust-');
  const marker = path.join(await tempWorkspace('claw-factory-trust-marker-'), 'started');
  const code = `require('node:fs').writeFileSync(${JSON.stringify(marker)}, String(process.pid));` +
    `import(${JSON.stringify(pathToFileURL(testServer).href)});`;
  await settingsFile(workDir, 'mcp.json', { mcpServers: { marker: { command: process.execPath, args: ['-e', code] } } });
  return { workDir, marker };
}

function toolNames(request: ModelRequest | undefined): string[] {
  return (request?.tools ?? []).map((tool) => tool.name);
}

function observations(history: readonly Message[]) {
  return history.flatMap((message) => message.role === 'tool'
    ? [{ content: message.content, isError: message.isError === true }]
    : []);
}

describe('the MCP servers of a workspace', () => {
  it('are not started when it is not trusted: no process, no MCP tools', async () => {
    const { workDir, marker } = await markerWorkspace();
    const { factory, provider } = scriptedFactory([{ text: 'hi' }], { env });
    expect(await factory.workspaceTrust(workDir)).toMatchObject({ trusted: false, reason: 'unknown' });
    const runtime = await factory.createRuntime({ workDir });
    expect((await runtime.start('hello').wait()).status).toBe('completed');
    expect(toolNames(provider.calls[0]?.request)).toEqual(builtins);
    expect(await factory.mcpServers(workDir)).toBeUndefined();
    // Give a started process time to leave its trace: there is none.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(existsSync(marker)).toBe(false);
  });

  it('are started once the record trusts the workspace as it is', async () => {
    const { workDir, marker } = await markerWorkspace();
    await trustWorkspace(workDir, { env });
    const { factory, provider } = scriptedFactory([{ text: 'hi' }], { env });
    expect(await factory.workspaceTrust(workDir)).toMatchObject({ trusted: true, reason: 'recorded' });
    const runtime = await factory.createRuntime({ workDir });
    expect((await runtime.start('hello').wait()).status).toBe('completed');
    expect(existsSync(marker)).toBe(true);
    expect(toolNames(provider.calls[0]?.request)).toEqual(expect.arrayContaining([...builtins, 'mcp_marker_alpha']));
  });

  it('are started with settings.trustWorkspaces (--trust-workspace), without a record', async () => {
    const { workDir, marker } = await markerWorkspace();
    const { factory, provider } = scriptedFactory([{ text: 'hi' }], {
      env,
      settings: settings({ trustWorkspaces: true }),
    });
    expect(await factory.workspaceTrust(workDir)).toMatchObject({ trusted: true, reason: 'given' });
    const runtime = await factory.createRuntime({ workDir });
    await runtime.start('hello').wait();
    expect(existsSync(marker)).toBe(true);
    expect(toolNames(provider.calls[0]?.request)).toContain('mcp_marker_alpha');
  });

  it('are not started when the file changed since it was trusted', async () => {
    const { workDir, marker } = await markerWorkspace();
    await trustWorkspace(workDir, { env });
    const file = path.join(workDir, '.claw', 'mcp.json');
    await writeFile(file, `${JSON.stringify(JSON.parse(await readFile(file, 'utf8')), null, 2)}\n`);
    const { factory, provider } = scriptedFactory([{ text: 'hi' }], { env });
    expect(await factory.workspaceTrust(workDir))
      .toMatchObject({ trusted: false, reason: 'changed', changed: ['mcp.json'] });
    const runtime = await factory.createRuntime({ workDir });
    await runtime.start('hello').wait();
    expect(toolNames(provider.calls[0]?.request)).toEqual(builtins);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(existsSync(marker)).toBe(false);
  });

  it('of an untrusted workspace are not even read: no ${VAR} is filled, nothing fails', async () => {
    const workDir = await tempWorkspace('claw-factory-trust-');
    await settingsFile(workDir, 'mcp.json', {
      mcpServers: { remote: { url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer ${NO_SUCH_TOKEN}' } } },
    });
    const untrusted = scriptedFactory([{ text: 'hi' }], { env }).factory;
    const runtime = await untrusted.createRuntime({ workDir });
    expect((await runtime.start('hello').wait()).status).toBe('completed');
    // The same file, trusted, is read (and its missing variable named).
    await trustWorkspace(workDir, { env });
    const trusted = scriptedFactory([], { env }).factory;
    await expect(trusted.createRuntime({ workDir })).rejects.toThrow('${NO_SUCH_TOKEN}');
  });
});

describe('delegate_agent of a workspace\'s .claw/a2a.json', () => {
  const peers = { peers: { helper: { url: 'http://127.0.0.1:9', headers: { Authorization: 'Bearer ${NO_SUCH_TOKEN}' } } } };

  it('is not offered when the workspace is not trusted', async () => {
    const workDir = await tempWorkspace('claw-factory-trust-');
    await settingsFile(workDir, 'a2a.json', peers);
    const { factory, provider } = scriptedFactory([{ text: 'hi' }], { env });
    const runtime = await factory.createRuntime({ workDir });
    expect((await runtime.start('hello').wait()).status).toBe('completed');
    expect(toolNames(provider.calls[0]?.request)).toEqual(builtins);
  });

  it('is offered when trusted, and no longer once the file changed', async () => {
    const workDir = await tempWorkspace('claw-factory-trust-');
    await settingsFile(workDir, 'a2a.json', { peers: {} });
    await trustWorkspace(workDir, { env });
    const { factory, provider } = scriptedFactory([
      { text: 'hi' },
      // After the change, in the session that was offered the tool: no delegation at all (neither
      // the file's peers nor a URL) until it is trusted again.
      { toolCalls: [{ id: 'd1', name: 'delegate_agent', arguments: { message: 'do it', peer: 'helper' } }] },
      { text: 'could not' },
      { text: 'next session' },
    ], { env });
    const runtime = await factory.createRuntime({ workDir });
    await runtime.start('hello').wait();
    expect(toolNames(provider.calls[0]?.request)).toContain('delegate_agent');

    await settingsFile(workDir, 'a2a.json', peers);
    expect(await factory.workspaceTrust(workDir))
      .toMatchObject({ trusted: false, reason: 'changed', changed: ['a2a.json'] });
    expect((await runtime.start('delegate').wait()).status).toBe('completed');
    const [refused] = observations(runtime.session.history());
    expect(refused?.isError).toBe(true);
    expect(refused?.content).toContain('changed since this workspace was trusted');
    expect(refused?.content).not.toContain('NO_SUCH_TOKEN');

    // The next session of the same factory is not offered it.
    const next = await factory.createRuntime({ workDir, sessionId: 'next' });
    await next.start('hello again').wait();
    expect(toolNames(provider.calls[3]?.request)).toEqual(builtins);
    // Nor is a new factory (the next start of claw).
    const restarted = scriptedFactory([{ text: 'hi' }], { env });
    await (await restarted.factory.createRuntime({ workDir, sessionId: 'later' })).start('hi').wait();
    expect(toolNames(restarted.provider.calls[0]?.request)).toEqual(builtins);
  });

  it('is offered with settings.trustWorkspaces, without a record', async () => {
    const workDir = await tempWorkspace('claw-factory-trust-');
    await settingsFile(workDir, 'a2a.json', { peers: {} });
    const { factory, provider } = scriptedFactory([{ text: 'hi' }], {
      env,
      settings: settings({ trustWorkspaces: true }),
    });
    await (await factory.createRuntime({ workDir })).start('hello').wait();
    expect(toolNames(provider.calls[0]?.request)).toContain('delegate_agent');
  });
});

describe('allowFiles from the settings', () => {
  async function readEnvFile(trust: boolean) {
    const workDir = await tempWorkspace('claw-factory-trust-');
    await writeFile(path.join(workDir, '.env'), 'API_KEY=sk-in-dotenv\n');
    await settingsFile(workDir, 'config.json', { allowFiles: ['.env'] });
    if (trust) await trustWorkspace(workDir, { env });
    const resolved = await resolveSettings({ workDir, env });
    const { factory } = scriptedFactory([
      { toolCalls: [{ id: 'r', name: 'read_file', arguments: { path: '.env' } }] },
      { text: 'done' },
    ], { env, settings: resolved });
    const runtime = await factory.createRuntime({ workDir, approval: 'allow' });
    await runtime.start('read it').wait();
    return observations(runtime.session.history())[0];
  }

  it('of a trusted workspace let the file tools read a .env file', async () => {
    const read = await readEnvFile(true);
    expect(read?.isError).toBe(false);
    expect(read?.content).toContain('sk-in-dotenv');
  });

  it('of an untrusted workspace are not used: the policy still guards the .env file', async () => {
    const read = await readEnvFile(false);
    expect(read?.isError).toBe(true);
    expect(read?.content).not.toContain('sk-in-dotenv');
    expect(read?.content).toContain('.env files hold secrets');
  });
});
