// The record of trusted workspaces (TRUST-1): where it is, what it keeps (a digest of each
// settings file), and how a workspace stands against it.
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClawUserError, type ClawError } from '@claw/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  checkWorkspaceTrust,
  revokeWorkspaceTrust,
  trustRecordFile,
  trustWorkspace,
  trustedSettingsFiles,
  trustedWorkspaces,
  userClawFolder,
  type TrustedSettingsFile,
} from '../src/index.js';
import { userClawFolders } from '../src/trust.js';

const folders: string[] = [];

async function tempFolder(prefix: string): Promise<string> {
  // The real path: the record names workspaces by theirs (the temporary folder may be a symlink).
  const folder = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  folders.push(folder);
  return folder;
}

afterEach(async () => {
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

const contents: Record<TrustedSettingsFile, string> = {
  'config.json': JSON.stringify({ baseUrl: 'https://models.example/v1', approval: 'allow' }),
  'mcp.json': JSON.stringify({ mcpServers: { tool: { command: 'some-server', args: ['--flag'] } } }),
  'a2a.json': JSON.stringify({ peers: { helper: { url: 'https://agent.example' } } }),
};

async function writeSettings(workDir: string, files: Partial<Record<TrustedSettingsFile, string>>) {
  await mkdir(join(workDir, '.claw'), { recursive: true });
  for (const [name, text] of Object.entries(files)) await writeFile(join(workDir, '.claw', name), text);
}

/** Any trustedAt (checked on its own where it matters). */
const someTime = expect.any(String) as unknown;

const digest = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;

describe('where the record of trusted workspaces is', () => {
  it('is under an absolute XDG_CONFIG_HOME, else under HOME/.config; nowhere without either', () => {
    expect(trustRecordFile({ XDG_CONFIG_HOME: '/x/conf', HOME: '/home/u' }))
      .toBe(join('/x/conf', 'claw', 'trusted.json'));
    expect(trustRecordFile({ HOME: '/home/u' })).toBe(join('/home/u', '.config', 'claw', 'trusted.json'));
    // A relative XDG_CONFIG_HOME is invalid by the spec (and would follow the current folder): ignored.
    expect(trustRecordFile({ XDG_CONFIG_HOME: 'conf', HOME: '/home/u' }))
      .toBe(join('/home/u', '.config', 'claw', 'trusted.json'));
    expect(trustRecordFile({ XDG_CONFIG_HOME: '', HOME: '/home/u' }))
      .toBe(join('/home/u', '.config', 'claw', 'trusted.json'));
    expect(trustRecordFile({ XDG_CONFIG_HOME: 'conf' })).toBeUndefined();
    expect(trustRecordFile({ HOME: 'relative/home' })).toBeUndefined();
    expect(trustRecordFile({ HOME: '' })).toBeUndefined();
    expect(trustRecordFile({})).toBeUndefined();
    expect(userClawFolder({ XDG_CONFIG_HOME: '/x/conf', HOME: '/home/u' })).toBe(join('/x/conf', 'claw'));
  });

  it('names the user\'s claw folders (absolute XDG_CONFIG_HOME and XDG_STATE_HOME, and under HOME) for the tools and bash to keep out of (TRUST-4)', () => {
    expect(userClawFolders({ XDG_CONFIG_HOME: '/x/conf', XDG_STATE_HOME: '/x/state', HOME: '/home/u' }))
      .toEqual([join('/x/conf', 'claw'), join('/x/state', 'claw'), '/home/u/.config/claw', '/home/u/.local/state/claw']);
    expect(userClawFolders({ XDG_CONFIG_HOME: 'conf', XDG_STATE_HOME: '/x/state' })).toEqual([join('/x/state', 'claw')]);
    expect(userClawFolders({ HOME: '/home/u' })).toEqual(['/home/u/.config/claw', '/home/u/.local/state/claw']);
    expect(userClawFolders({ HOME: '/home/u', XDG_CONFIG_HOME: '/home/u/.config' }))
      .toEqual(['/home/u/.config/claw', '/home/u/.local/state/claw']);
    expect(userClawFolders({ HOME: 'rel' })).toEqual([]);
  });

  it('is written where the rules say: XDG_CONFIG_HOME, else HOME', async () => {
    const workDir = await tempFolder('claw-trust-ws-');
    await writeSettings(workDir, { 'config.json': contents['config.json'] });
    const xdg = await tempFolder('claw-trust-xdg-');
    const home = await tempFolder('claw-trust-home-');

    await trustWorkspace(workDir, { env: { XDG_CONFIG_HOME: xdg, HOME: home } });
    expect(JSON.parse(await readFile(join(xdg, 'claw', 'trusted.json'), 'utf8'))).toHaveProperty(['workspaces', workDir]);
    await expect(stat(join(home, '.config'))).rejects.toMatchObject({ code: 'ENOENT' });

    await trustWorkspace(workDir, { env: { XDG_CONFIG_HOME: 'relative', HOME: home } });
    expect(JSON.parse(await readFile(join(home, '.config', 'claw', 'trusted.json'), 'utf8')))
      .toHaveProperty(['workspaces', workDir]);
    // Each record is its own: trusted under one home is not trusted under another.
    expect((await checkWorkspaceTrust(workDir, { env: { HOME: home } })).reason).toBe('recorded');
    const other = await tempFolder('claw-trust-home-');
    expect((await checkWorkspaceTrust(workDir, { env: { HOME: other } })).reason).toBe('unknown');
  });

  it('cannot be kept without a home: trusting says what to do', async () => {
    const workDir = await tempFolder('claw-trust-ws-');
    await writeSettings(workDir, { 'config.json': contents['config.json'] });
    const error = await trustWorkspace(workDir, { env: { XDG_CONFIG_HOME: 'relative' } })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ClawUserError);
    expect((error as ClawError).code).toBe('trust_record_unavailable');
    expect((error as Error).message).toContain('neither HOME nor XDG_CONFIG_HOME is set');
    expect((error as Error).message).toContain('--trust-workspace');
    await expect(revokeWorkspaceTrust(workDir, { env: {} })).rejects.toMatchObject({ code: 'trust_record_unavailable' });
    // Checking needs no record: without one, nothing is trusted.
    expect(await checkWorkspaceTrust(workDir, { env: {} })).toMatchObject({ trusted: false, reason: 'unknown' });
    expect(await trustedWorkspaces({ env: {} })).toEqual([]);
  });
});

describe('checkWorkspaceTrust, trustWorkspace, revokeWorkspaceTrust', () => {
  let workDir: string;
  let env: { XDG_CONFIG_HOME: string };
  let recordFile: string;
  beforeEach(async () => {
    workDir = await tempFolder('claw-trust-ws-');
    const configHome = await tempFolder('claw-trust-xdg-');
    env = { XDG_CONFIG_HOME: configHome };
    recordFile = join(configHome, 'claw', 'trusted.json');
  });

  it('a workspace without settings files is trusted: there is nothing to trust', async () => {
    expect(await checkWorkspaceTrust(workDir, { env })).toEqual({
      root: workDir,
      trusted: true,
      reason: 'no-settings',
      files: [],
      changed: [],
    });
    // Other things in .claw/ (sessions, grants) take no trust.
    await mkdir(join(workDir, '.claw', 'sessions'), { recursive: true });
    await writeFile(join(workDir, '.claw', 'grants.json'), '{}');
    expect(await checkWorkspaceTrust(workDir, { env })).toMatchObject({ trusted: true, reason: 'no-settings' });
    // Nothing was written.
    await expect(stat(recordFile)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a workspace with settings files that the record does not have is unknown, naming its files', async () => {
    await writeSettings(workDir, contents);
    const trust = await checkWorkspaceTrust(workDir, { env });
    expect(trust).toMatchObject({ root: workDir, trusted: false, reason: 'unknown', changed: [] });
    expect(trust.files).toEqual(trustedSettingsFiles.map((name) => ({
      name,
      path: join(workDir, '.claw', name),
      digest: digest(contents[name]),
    })));
  });

  it('trusting records the files as they are; the record is the user\'s only (0600 in 0700)', async () => {
    await writeSettings(workDir, contents);
    const before = Date.now();
    const given = await trustWorkspace(workDir, { env });
    expect(given).toMatchObject({ root: workDir, trusted: true, reason: 'recorded', changed: [] });
    expect(await checkWorkspaceTrust(workDir, { env })).toMatchObject({
      root: workDir,
      trusted: true,
      reason: 'recorded',
      changed: [],
    });

    expect((await stat(recordFile)).mode & 0o777).toBe(0o600);
    expect((await stat(join(env.XDG_CONFIG_HOME, 'claw'))).mode & 0o777).toBe(0o700);
    const record = JSON.parse(await readFile(recordFile, 'utf8')) as unknown;
    expect(record).toEqual({
      version: 1,
      workspaces: {
        [workDir]: {
          trustedAt: someTime,
          files: {
            'config.json': digest(contents['config.json']),
            'mcp.json': digest(contents['mcp.json']),
            'a2a.json': digest(contents['a2a.json']),
          },
        },
      },
    });
    const { trustedAt } = (record as { workspaces: Record<string, { trustedAt: string }> }).workspaces[workDir] ?? {};
    expect(new Date(trustedAt ?? '').getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(new Date(trustedAt ?? '').toISOString()).toBe(trustedAt);
  });

  it.each(trustedSettingsFiles)('a change to %s after trusting needs a new yes', async (name) => {
    await writeSettings(workDir, contents);
    await trustWorkspace(workDir, { env });
    // One byte more is enough.
    await writeFile(join(workDir, '.claw', name), `${contents[name]} `);
    const trust = await checkWorkspaceTrust(workDir, { env });
    expect(trust).toMatchObject({ trusted: false, reason: 'changed', changed: [name] });
    // Trusting again takes the file as it is now.
    await trustWorkspace(workDir, { env });
    expect(await checkWorkspaceTrust(workDir, { env })).toMatchObject({ trusted: true, reason: 'recorded' });
  });

  it('a settings file added after trusting is a change', async () => {
    await writeSettings(workDir, { 'config.json': contents['config.json'] });
    await trustWorkspace(workDir, { env });
    await writeSettings(workDir, { 'mcp.json': contents['mcp.json'] });
    expect(await checkWorkspaceTrust(workDir, { env }))
      .toMatchObject({ trusted: false, reason: 'changed', changed: ['mcp.json'] });
  });

  it('settings files added to a workspace trusted when it had none are a change', async () => {
    expect(await trustWorkspace(workDir, { env })).toMatchObject({ trusted: true, reason: 'no-settings' });
    expect(await trustedWorkspaces({ env })).toEqual([{ root: workDir, trustedAt: someTime }]);
    await writeSettings(workDir, { 'a2a.json': contents['a2a.json'] });
    expect(await checkWorkspaceTrust(workDir, { env }))
      .toMatchObject({ trusted: false, reason: 'changed', changed: ['a2a.json'] });
  });

  it('a settings file removed after trusting is a change, naming it', async () => {
    await writeSettings(workDir, contents);
    await trustWorkspace(workDir, { env });
    await rm(join(workDir, '.claw', 'config.json'));
    const trust = await checkWorkspaceTrust(workDir, { env });
    expect(trust).toMatchObject({ trusted: false, reason: 'changed', changed: ['config.json'] });
    expect(trust.files.map((file) => file.name)).toEqual(['mcp.json', 'a2a.json']);
  });

  it('names every changed file, in the usual order', async () => {
    await writeSettings(workDir, { 'config.json': contents['config.json'], 'a2a.json': contents['a2a.json'] });
    await trustWorkspace(workDir, { env });
    await rm(join(workDir, '.claw', 'config.json'));
    await writeSettings(workDir, { 'a2a.json': '{"peers":{}}', 'mcp.json': contents['mcp.json'] });
    expect((await checkWorkspaceTrust(workDir, { env })).changed).toEqual(['config.json', 'mcp.json', 'a2a.json']);
  });

  it('a settings file that cannot be read still needs trust', async () => {
    // A folder where a file should be: there, but unreadable as a file.
    await mkdir(join(workDir, '.claw', 'mcp.json'), { recursive: true });
    const trust = await checkWorkspaceTrust(workDir, { env });
    expect(trust).toMatchObject({ trusted: false, reason: 'unknown' });
    expect(trust.files).toEqual([
      { name: 'mcp.json', path: join(workDir, '.claw', 'mcp.json'), digest: expect.stringMatching(/^unreadable:/) as unknown },
    ]);
  });

  it('a workspace reached through a symlink is the same workspace (its real path)', async () => {
    await writeSettings(workDir, contents);
    const links = await tempFolder('claw-trust-link-');
    const link = join(links, 'project');
    await symlink(workDir, link);
    expect(await trustWorkspace(link, { env })).toMatchObject({ root: workDir });
    expect(await checkWorkspaceTrust(workDir, { env })).toMatchObject({ root: workDir, reason: 'recorded' });
    expect(await checkWorkspaceTrust(link, { env })).toMatchObject({ root: workDir, reason: 'recorded' });
    expect(await checkWorkspaceTrust(join(link, '.'), { env })).toMatchObject({ reason: 'recorded' });
    expect(await trustedWorkspaces({ env })).toEqual([{ root: workDir, trustedAt: someTime }]);
    expect(await revokeWorkspaceTrust(link, { env })).toBe(true);
    expect(await checkWorkspaceTrust(workDir, { env })).toMatchObject({ reason: 'unknown' });
  });

  it('revoking makes it untrusted again; revoking what is not trusted is false', async () => {
    await writeSettings(workDir, contents);
    // No record at all yet.
    expect(await revokeWorkspaceTrust(workDir, { env })).toBe(false);
    await trustWorkspace(workDir, { env });
    expect(await revokeWorkspaceTrust(workDir, { env })).toBe(true);
    expect(await checkWorkspaceTrust(workDir, { env })).toMatchObject({ trusted: false, reason: 'unknown' });
    expect(await revokeWorkspaceTrust(workDir, { env })).toBe(false);
    expect(JSON.parse(await readFile(recordFile, 'utf8'))).toEqual({ version: 1, workspaces: {} });
  });

  it('keeps two workspaces apart: each trusted, changed and revoked on its own', async () => {
    const other = await tempFolder('claw-trust-ws-');
    await writeSettings(workDir, contents);
    await writeSettings(other, { 'config.json': '{"maxTurns":3}' });
    await trustWorkspace(workDir, { env });
    expect(await checkWorkspaceTrust(other, { env })).toMatchObject({ reason: 'unknown' });
    await trustWorkspace(other, { env });
    expect((await trustedWorkspaces({ env })).map((each) => each.root).sort()).toEqual([workDir, other].sort());

    await writeFile(join(workDir, '.claw', 'mcp.json'), '{"mcpServers":{}}');
    expect(await checkWorkspaceTrust(workDir, { env })).toMatchObject({ reason: 'changed', changed: ['mcp.json'] });
    expect(await checkWorkspaceTrust(other, { env })).toMatchObject({ trusted: true, reason: 'recorded' });

    expect(await revokeWorkspaceTrust(other, { env })).toBe(true);
    expect(await trustedWorkspaces({ env })).toEqual([{ root: workDir, trustedAt: someTime }]);
    expect(await checkWorkspaceTrust(other, { env })).toMatchObject({ reason: 'unknown' });
  });

  it('lists nothing before anything is trusted', async () => {
    expect(await trustedWorkspaces({ env })).toEqual([]);
  });

  it('trustAll (--trust-workspace) trusts whatever the record says, and records nothing', async () => {
    await writeSettings(workDir, contents);
    expect(await checkWorkspaceTrust(workDir, { env, trustAll: true }))
      .toMatchObject({ root: workDir, trusted: true, reason: 'given', changed: [] });
    await trustWorkspace(workDir, { env });
    await writeFile(join(workDir, '.claw', 'config.json'), '{"approval":"allow"}');
    expect(await checkWorkspaceTrust(workDir, { env, trustAll: true })).toMatchObject({ trusted: true, reason: 'given' });
    await revokeWorkspaceTrust(workDir, { env });
    expect(await trustedWorkspaces({ env })).toEqual([]);
    // Without settings files there is still nothing to trust.
    const empty = await tempFolder('claw-trust-ws-');
    expect(await checkWorkspaceTrust(empty, { env, trustAll: true })).toMatchObject({ reason: 'no-settings' });
  });
});

describe('a record that is not claw\'s', () => {
  let workDir: string;
  let env: { HOME: string };
  let recordFile: string;
  beforeEach(async () => {
    workDir = await tempFolder('claw-trust-ws-');
    await writeSettings(workDir, contents);
    const home = await tempFolder('claw-trust-home-');
    env = { HOME: home };
    recordFile = join(home, '.config', 'claw', 'trusted.json');
    await mkdir(join(home, '.config', 'claw'), { recursive: true });
  });

  async function expectInvalid(promise: Promise<unknown>, problem: string) {
    const error = await promise.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ClawUserError);
    expect((error as ClawError).code).toBe('trust_record_invalid');
    const { message } = error as Error;
    expect(message).toContain(recordFile);
    expect(message).toContain(problem);
    // What to do about it.
    expect(message).toContain('remove it');
    expect(message).toContain('claw trust');
  }

  it('is an error that says what is wrong and what to do, and is never overwritten', async () => {
    await writeFile(recordFile, '{ "version": 1, ');
    await expectInvalid(checkWorkspaceTrust(workDir, { env }), 'is not valid JSON');
    await expectInvalid(trustWorkspace(workDir, { env }), 'is not valid JSON');
    await expectInvalid(revokeWorkspaceTrust(workDir, { env }), 'is not valid JSON');
    await expectInvalid(trustedWorkspaces({ env }), 'is not valid JSON');
    expect(await readFile(recordFile, 'utf8')).toBe('{ "version": 1, ');
  });

  it.each([
    ['another version', { version: 2, workspaces: {} }],
    ['no workspaces', { version: 1 }],
    ['an unknown key', { version: 1, workspaces: {}, extra: true }],
    ['a workspace without digests', { version: 1, workspaces: { '/w': { trustedAt: 'now' } } }],
    ['an array', []],
  ])('is an error with %s', async (_what, value) => {
    await writeFile(recordFile, JSON.stringify(value));
    await expectInvalid(checkWorkspaceTrust(workDir, { env }), 'is not a record claw wrote');
  });

  it('is an error when it cannot be read', async () => {
    await mkdir(recordFile);
    await expectInvalid(checkWorkspaceTrust(workDir, { env }), 'cannot be read');
  });

  it('does not matter for a workspace without settings files', async () => {
    await writeFile(recordFile, 'not json');
    const empty = await tempFolder('claw-trust-ws-');
    expect(await checkWorkspaceTrust(empty, { env })).toMatchObject({ trusted: true, reason: 'no-settings' });
  });
});
