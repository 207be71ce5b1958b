// What claw tells the user about an untrusted workspace (TRUST-2, TRUST-3): the one-line notice
// of what it did not use, and what the settings files would do if trusted.
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  checkWorkspaceTrust,
  describeWorkspaceSettings,
  trustWorkspace,
  untrustedNotice,
  type IgnoredSetting,
  type TrustedSettingsFile,
  type WorkspaceTrust,
} from '../src/index.js';

let workDir: string;
let configHome: string;
let env: { XDG_CONFIG_HOME: string };

beforeEach(async () => {
  workDir = await realpath(await mkdtemp(join(tmpdir(), 'claw-notice-')));
  configHome = await realpath(await mkdtemp(join(tmpdir(), 'claw-notice-home-')));
  env = { XDG_CONFIG_HOME: configHome };
});

afterEach(async () => {
  vi.unstubAllEnvs();
  await rm(workDir, { recursive: true, force: true });
  await rm(configHome, { recursive: true, force: true });
});

async function settingsFiles(files: Partial<Record<TrustedSettingsFile, unknown>>): Promise<WorkspaceTrust> {
  await mkdir(join(workDir, '.claw'), { recursive: true });
  for (const [name, value] of Object.entries(files)) {
    await writeFile(join(workDir, '.claw', name), typeof value === 'string' ? value : JSON.stringify(value));
  }
  return checkWorkspaceTrust(workDir, { env });
}

const howTo = 'run `claw trust` to use them';
const ignored: IgnoredSetting[] = [
  { key: 'baseUrl', value: 'https://models.example/v1' },
  { key: 'sandbox.isolation', value: 'off' },
];

describe('untrustedNotice', () => {
  it('says nothing for a trusted workspace', async () => {
    const files = { 'config.json': { baseUrl: 'https://models.example/v1' }, 'mcp.json': { mcpServers: {} } };
    await settingsFiles(files);
    expect(untrustedNotice(await trustWorkspace(workDir, { env }), [], howTo)).toBeUndefined();
    expect(untrustedNotice(await checkWorkspaceTrust(workDir, { env }), ignored, howTo)).toBeUndefined();
    expect(untrustedNotice(await checkWorkspaceTrust(workDir, { env, trustAll: true }), ignored, howTo))
      .toBeUndefined();
    const empty = await mkdtemp(join(tmpdir(), 'claw-notice-'));
    try {
      expect(untrustedNotice(await checkWorkspaceTrust(empty, { env }), [], howTo)).toBeUndefined();
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it('says nothing when only narrowing settings were there (nothing was left out)', async () => {
    const trust = await settingsFiles({ 'config.json': { maxTurns: 5 } });
    expect(trust.trusted).toBe(false);
    expect(untrustedNotice(trust, [], howTo)).toBeUndefined();
  });

  it('names the ignored settings of config.json and ends with how to trust', async () => {
    const trust = await settingsFiles({ 'config.json': { baseUrl: 'https://models.example/v1' } });
    expect(untrustedNotice(trust, ignored, howTo)).toBe(
      'this workspace\'s own settings are not used because it is not trusted: ignored baseUrl, ' +
      `sandbox.isolation in .claw/config.json; ${howTo}`,
    );
  });

  it('names the MCP servers (not started) and the A2A peers, even with nothing ignored', async () => {
    const trust = await settingsFiles({ 'mcp.json': { mcpServers: {} }, 'a2a.json': { peers: {} } });
    const notice = untrustedNotice(trust, [], howTo);
    expect(notice).toContain('because it is not trusted');
    expect(notice).toContain('the MCP servers of .claw/mcp.json (not started)');
    expect(notice).toContain('the A2A peers of .claw/a2a.json');
    expect(notice).not.toContain('config.json');
    expect(notice?.endsWith(`; ${howTo}`)).toBe(true);
  });

  it('joins all three parts', async () => {
    const trust = await settingsFiles({
      'config.json': { baseUrl: 'https://models.example/v1' },
      'mcp.json': { mcpServers: {} },
      'a2a.json': { peers: {} },
    });
    expect(untrustedNotice(trust, ignored, 'say yes')).toBe(
      'this workspace\'s own settings are not used because it is not trusted: ignored baseUrl, ' +
      'sandbox.isolation in .claw/config.json; the MCP servers of .claw/mcp.json (not started) and ' +
      'the A2A peers of .claw/a2a.json; say yes',
    );
  });

  it('names the files that changed since the workspace was trusted', async () => {
    await settingsFiles({ 'config.json': { maxTurns: 5 }, 'mcp.json': { mcpServers: {} } });
    await trustWorkspace(workDir, { env });
    const trust = await settingsFiles({
      'config.json': { maxTurns: 5, baseUrl: 'https://models.example/v1' },
      'a2a.json': { peers: {} },
    });
    expect(trust.reason).toBe('changed');
    const notice = untrustedNotice(trust, [{ key: 'baseUrl', value: 'https://models.example/v1' }], howTo);
    expect(notice).toContain('because its settings changed since you trusted it (.claw/config.json, .claw/a2a.json)');
    expect(notice).not.toContain('not trusted');
    expect(notice).toContain('ignored baseUrl in .claw/config.json');
    // The unchanged mcp.json is not used either: the workspace as a whole is untrusted.
    expect(notice).toContain('the MCP servers of .claw/mcp.json (not started)');
    expect(notice?.endsWith(howTo)).toBe(true);
  });
});

describe('describeWorkspaceSettings', () => {
  it('says where the model and the key would go, the approval and the sandbox', async () => {
    const trust = await settingsFiles({
      'config.json': {
        baseUrl: 'https://models.example/v1',
        approval: 'allow',
        sandbox: { isolation: 'off', allowNetwork: true },
        prices: { 'their-model': { inputPerMillion: 0, outputPerMillion: 0 } },
        systemPromptFile: 'prompt.md',
        maxTurns: 5,
      },
    });
    const [config, ...rest] = await describeWorkspaceSettings(trust);
    expect(rest).toEqual([]);
    expect(config?.name).toBe('config.json');
    expect(config?.file).toBe(join(workDir, '.claw', 'config.json'));
    expect(config?.lines).toEqual([
      'baseUrl "https://models.example/v1": the model is called there, with your API key',
      'approval "allow": every tool call runs without asking',
      'sandbox.isolation "off": bash runs with all your rights, not isolated',
      'sandbox.allowNetwork true: bash commands may use the network',
      'prices for their-model: what claw counts as spent',
      'systemPromptFile "prompt.md": replaces claw\'s own system prompt',
      'maxTurns 5',
    ]);
  });

  it('explains the stricter modes too', async () => {
    const trust = await settingsFiles({
      'config.json': { approval: 'deny', sandbox: { isolation: 'required', allowNetwork: false } },
    });
    const [config] = await describeWorkspaceSettings(trust);
    expect(config?.lines).toEqual([
      'approval "deny": every call that would ask is refused',
      'sandbox.isolation "required": bash runs only isolated',
      'sandbox.allowNetwork false: no network for bash',
    ]);
  });

  it('shows each MCP server\'s command line or URL and only the NAMES of what it is given', async () => {
    // Values in the environment that must never be shown (the file is described as written).
    vi.stubEnv('SECRET_TOKEN', 'sk-live-never-shown');
    vi.stubEnv('REMOTE_TOKEN', 'remote-never-shown');
    const trust = await settingsFiles({
      'mcp.json': {
        mcpServers: {
          tools: {
            command: 'npx',
            args: ['-y', 'some-mcp-server', '--root', '${HOME}/projects'],
            env: { API_TOKEN: '${SECRET_TOKEN}', PLAIN: 'literal-value' },
            risk: 'safe',
          },
          remote: {
            url: 'https://mcp.example/mcp',
            headers: { Authorization: 'Bearer ${REMOTE_TOKEN}' },
          },
          off: { command: 'old-server', enabled: false },
        },
      },
    });
    const [mcp] = await describeWorkspaceSettings(trust);
    expect(mcp?.name).toBe('mcp.json');
    expect(mcp?.lines).toEqual([
      'MCP server "tools" runs: npx -y some-mcp-server --root ${HOME}/projects; given API_TOKEN, PLAIN; ' +
      'its tools\' risk "safe"',
      'MCP server "remote" at "https://mcp.example/mcp"; given Authorization',
      'MCP server "off" (disabled) runs: old-server',
    ]);
    const text = mcp?.lines.join('\n') ?? '';
    for (const secret of ['sk-live-never-shown', 'remote-never-shown', 'literal-value', 'Bearer', '${SECRET_TOKEN}']) {
      expect(text).not.toContain(secret);
    }
  });

  it('cuts a very long command line', async () => {
    const trust = await settingsFiles({
      'mcp.json': { mcpServers: { long: { command: 'run', args: ['x'.repeat(500)] } } },
    });
    const [mcp] = await describeWorkspaceSettings(trust);
    const line = mcp?.lines[0] ?? '';
    expect(line.startsWith('MCP server "long" runs: run xxx')).toBe(true);
    expect(line.endsWith('…')).toBe(true);
    expect(line.length).toBeLessThan(200);
  });

  it('shows each A2A peer\'s URL and the names of the headers it is sent', async () => {
    vi.stubEnv('PEER_TOKEN', 'peer-never-shown');
    const trust = await settingsFiles({
      'a2a.json': {
        peers: {
          helper: { url: 'https://agent.example', headers: { Authorization: 'Bearer ${PEER_TOKEN}' } },
          plain: { url: 'https://other.example/.well-known/agent-card.json' },
        },
      },
    });
    const [a2a] = await describeWorkspaceSettings(trust);
    expect(a2a?.name).toBe('a2a.json');
    expect(a2a?.lines).toEqual([
      'A2A peer "helper" at "https://agent.example", sent Authorization',
      'A2A peer "plain" at "https://other.example/.well-known/agent-card.json"',
    ]);
    expect(a2a?.lines.join('\n')).not.toContain('peer-never-shown');
  });

  it('describes every file present, in the usual order; one that is not JSON says so', async () => {
    const trust = await settingsFiles({
      'a2a.json': { peers: {} },
      'mcp.json': '{ "mcpServers": ',
      'config.json': {},
    });
    const summaries = await describeWorkspaceSettings(trust);
    expect(summaries.map((summary) => summary.name)).toEqual(['config.json', 'mcp.json', 'a2a.json']);
    const [config, mcp, a2a] = summaries;
    expect(config?.lines).toEqual(['(nothing that needs trust)']);
    expect(mcp?.file).toBe(join(workDir, '.claw', 'mcp.json'));
    expect(mcp?.lines).toHaveLength(1);
    expect(mcp?.lines[0]).toMatch(/^cannot be read as JSON \(.+\)$/);
    expect(a2a?.lines).toEqual(['(nothing that needs trust)']);
  });

  it('describes nothing for a workspace without settings files', async () => {
    expect(await describeWorkspaceSettings(await checkWorkspaceTrust(workDir, { env }))).toEqual([]);
  });
});
