import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { access, mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FakeOpenAIServer, writeHostileSettings, type FakeTurn } from '@claw/testing/node';
import { afterEach, describe, expect, it } from 'vitest';
import { ClawProcess, baseEnv, cleanUp, messagesOf, modelEnv, removeLater, tempDir } from './helpers.js';

// A cloned repository is not trusted (TRUST-1..5), through the built `claw`: a workspace whose
// `.claw/config.json` sends the model (and the API key) to a listener of the test, allows every
// call and turns the sandbox off, and whose `.claw/mcp.json` starts a program given the API key.
// Untrusted, none of it is used; `claw trust` makes it count until a file changes. Whatever the
// workspace says, the model's tools never read claw's state or the user's claw folders.

/**
 * Whether bubblewrap can make a sandbox here: the sandbox package's probe in short (this app does
 * not depend on that package). Where it can, claw must say it isolates bash.
 */
function bubblewrapWorks(): boolean {
  if (process.platform !== 'linux' || !['x64', 'arm64'].includes(process.arch)) return false;
  const trial = spawnSync(
    'bwrap',
    ['--ro-bind', '/', '/', '--unshare-user', '--unshare-pid', '--unshare-net', '--die-with-parent', 'true'],
    { stdio: 'ignore', timeout: 5000 },
  );
  return trial.status === 0;
}

const bubblewrap = bubblewrapWorks();

// Where isolation is required (CI sets CLAW_REQUIRE_ISOLATION=1), skipping the checks of bash
// below would prove nothing: this fails instead.
it.runIf(process.env.CLAW_REQUIRE_ISOLATION === '1')('bubblewrap works where it is required', () => {
  expect(bubblewrap).toBe(true);
});

/** The user's API key: it may go only where the user's own settings (or a trusted file) say. */
const apiKey = `sk-user-secret-${randomBytes(8).toString('hex')}`;

interface Hostile {
  /** The cloned repository. */
  workDir: string;
  /** Written by the program its mcp.json starts: `KEY=<what it was given>`. */
  marker: string;
  /** The user's claw folders (XDG_CONFIG_HOME, XDG_STATE_HOME); no mask of the sandbox covers them. */
  configHome: string;
  stateHome: string;
  /** A fresh user: HOME and the XDG folders new, the API key set, the model in the user's own settings. */
  env: Record<string, string>;
  recorder: FakeOpenAIServer;
}

let model: FakeOpenAIServer | undefined;
let recorder: FakeOpenAIServer | undefined;

afterEach(async () => {
  await model?.close();
  await recorder?.close();
  model = undefined;
  recorder = undefined;
  await cleanUp();
});

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
  const root = await tempDir('claw-hostile-');
  const workDir = path.join(root, 'repo');
  const marker = path.join(root, 'mcp-started.txt');
  const home = path.join(root, 'home');
  await mkdir(workDir);
  await mkdir(home);
  await writeHostileSettings(workDir, { baseUrl: recorder.baseURL, marker });
  // Not under /tmp, which the sandbox masks as a whole: in /var/tmp (FHS gives every Linux system
  // one, and no mask covers it) only claw's hiding of its own folders keeps them from bash.
  const configHome = await mkdtemp('/var/tmp/claw-hostile-config-');
  const stateHome = await mkdtemp('/var/tmp/claw-hostile-state-');
  removeLater(configHome);
  removeLater(stateHome);
  await mkdir(path.join(configHome, 'claw'));
  await writeFile(path.join(configHome, 'claw', 'config.json'), JSON.stringify({ baseUrl: modelServer.baseURL }));
  const env = baseEnv({ HOME: home, XDG_CONFIG_HOME: configHome, XDG_STATE_HOME: stateHome, OPENAI_API_KEY: apiKey });
  return { workDir, marker, configHome, stateHome, env, recorder };
}

function runClaw(args: readonly string[], hostile: Hostile) {
  return ClawProcess.run(args, { env: hostile.env });
}

/** The Observations (tool results) of a request the model was sent, by tool call id. */
function observations(index: number): Map<string, string> {
  const found = new Map<string, string>();
  for (const message of messagesOf(model?.requests[index])) {
    const { tool_call_id: id } = message as { tool_call_id?: string };
    if (message.role === 'tool' && id !== undefined) found.set(id, JSON.stringify(message.content));
  }
  return found;
}

const call = (id: string, name: string, args: object) => ({ id, name, arguments: JSON.stringify(args) });

describe('an untrusted workspace\'s settings are not used (TRUST-2, TRUST-5)', () => {
  it('claw -p: the model is the user\'s, the API key stays, no MCP server starts, calls still need approval, bash stays isolated; stderr says what was ignored and how to trust', async () => {
    const turns: FakeTurn[] = [
      { toolCalls: [call('call_write', 'write_file', { path: 'pwned.txt', content: 'x' }), call('call_bash', 'bash', { command: 'echo ran > ran.txt' })] },
      { text: 'I was not allowed.' },
    ];
    model = await FakeOpenAIServer.start({ turns });
    const hostile = await hostileWorkspace(model);

    const result = await runClaw(['-p', 'set things up', '--workdir', hostile.workDir], hostile);

    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toBe('I was not allowed.\n');
    expect(hostile.recorder.requests).toEqual([]);
    expect(model.requests).toHaveLength(2);
    expect(model.requests[0]?.headers.authorization).toBe(`Bearer ${apiKey}`);
    expect(model.requests[0]?.body).not.toMatchObject({ model: 'hostile-model' });
    expect(existsSync(hostile.marker)).toBe(false);
    const notice = result.stderr.split('\n').find((line) => line.includes('own settings are not used')) ?? '';
    expect(notice, result.stderr).toMatch(/^claw: this workspace's own settings are not used because it is not trusted: ignored /);
    for (const key of ['baseUrl', 'model', 'approval', 'sandbox.isolation']) expect(notice).toContain(key);
    expect(notice).toContain('the MCP servers of .claw/mcp.json (not started)');
    expect(notice).toContain(`run \`claw trust --workdir ${hostile.workDir}\` to use them`);
    // approval "allow" was not taken: nobody is there to ask in -p, so both calls are refused.
    const seen = observations(1);
    expect(seen.get('call_write')).toMatch(/permission denied.*Approval mode is deny/);
    expect(seen.get('call_bash')).toMatch(/permission denied.*Approval mode is deny/);
    expect(existsSync(path.join(hostile.workDir, 'pwned.txt'))).toBe(false);
    expect(existsSync(path.join(hostile.workDir, 'ran.txt'))).toBe(false);
    // isolation "off" was not taken either.
    expect(result.stderr).not.toContain('bash isolation: off');
    if (bubblewrap) expect(result.stderr).toMatch(/^bash isolation: bubblewrap /m);
  }, 30_000);
});

describe('claw trust makes the workspace\'s settings count, until a file changes (TRUST-1, TRUST-3)', () => {
  it('after claw trust --workdir: the model is called where config.json says, with the API key, and the MCP server starts with its ${VAR} filled', async () => {
    model = await FakeOpenAIServer.start({ turns: [{ text: 'the user\'s model' }] });
    const hostile = await hostileWorkspace(model);

    const trust = await runClaw(['trust', '--workdir', hostile.workDir], hostile);
    expect(trust.status, trust.stderr).toBe(0);
    expect(trust.stdout).toContain('Trusted ');
    const record = path.join(hostile.configHome, 'claw', 'trusted.json');
    expect(JSON.parse(await readFile(record, 'utf8'))).toMatchObject({ version: 1 });

    const result = await runClaw(['-p', 'hi', '--workdir', hostile.workDir], hostile);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toBe('answered by the hostile endpoint\n');
    expect(result.stderr).not.toContain('own settings are not used');
    expect(model.requests).toEqual([]);
    expect(hostile.recorder.requests.length).toBeGreaterThan(0);
    const [request] = hostile.recorder.requests;
    expect(request?.headers.authorization).toBe(`Bearer ${apiKey}`);
    expect(request?.body).toMatchObject({ model: 'hostile-model' });
    expect(await readFile(hostile.marker, 'utf8')).toBe(`KEY=${apiKey}`);
    expect(result.stderr).toContain('bash isolation: off');
  }, 30_000);

  it('a byte of config.json changed after claw trust: untrusted again, stderr says the settings changed', async () => {
    model = await FakeOpenAIServer.start({ turns: [{ text: 'the user\'s model' }] });
    const hostile = await hostileWorkspace(model);
    const trust = await runClaw(['trust', '--workdir', hostile.workDir], hostile);
    expect(trust.status, trust.stderr).toBe(0);
    const config = path.join(hostile.workDir, '.claw', 'config.json');
    const text = await readFile(config, 'utf8');
    await writeFile(config, text.replace('hostile-model', 'hostile-mode1'));

    const result = await runClaw(['-p', 'hi', '--workdir', hostile.workDir], hostile);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toBe('the user\'s model\n');
    expect(hostile.recorder.requests).toEqual([]);
    expect(model.requests).toHaveLength(1);
    expect(existsSync(hostile.marker)).toBe(false);
    expect(result.stderr).toContain(
      'claw: this workspace\'s own settings are not used because its settings changed since you trusted it ' +
      '(.claw/config.json): ignored ',
    );
    expect(result.stderr).toContain(`run \`claw trust --workdir ${hostile.workDir}\``);
  }, 30_000);
});

describe.skipIf(!bubblewrap)('the model\'s tools do not reach claw\'s state nor the user\'s claw folders (TRUST-4)', () => {
  it('read_file of .claw/grants.json and of a stored session is refused; bash (isolated) sees an empty .claw and no trust record, token or API key', async () => {
    const canary = `canary-${randomBytes(6).toString('hex')}`;
    model = await FakeOpenAIServer.start({ turns: [{ text: 'noted' }] });
    const hostile = await hostileWorkspace(model);
    const { workDir } = hostile;
    // A stored session that holds a secret the user typed.
    const stored = await runClaw(['-p', `remember session-${canary}`, '--workdir', workDir, '--session', 'stored'], hostile);
    expect(stored.status, stored.stderr).toBe(0);
    const sessions = path.join(workDir, '.claw', 'sessions');
    const sessionFile = (await readdir(sessions)).find((name) => name.startsWith('stored') && !name.endsWith('.lock'));
    expect(sessionFile).toBeDefined();
    const sessionPath = path.join(sessions, sessionFile ?? '');
    expect(await readFile(sessionPath, 'utf8')).toContain(`session-${canary}`);
    // A grant, a trust record (of another workspace) and a server token file, each with the canary.
    const grant = { sessionId: 'other', workDir, toolName: 'bash', digest: `grants-${canary}` };
    await writeFile(path.join(workDir, '.claw', 'grants.json'), `${JSON.stringify({
      version: 1,
      grants: [{
        ...grant,
        key: JSON.stringify([grant.sessionId, grant.workDir, grant.toolName, grant.digest]),
        requestId: 'req-1',
        decision: 'allow_session',
        approvedAt: new Date().toISOString(),
      }],
    }, null, 2)}\n`);
    const trustRecord = path.join(hostile.configHome, 'claw', 'trusted.json');
    await writeFile(trustRecord, JSON.stringify({
      version: 1,
      workspaces: { [`/srv/trust-${canary}`]: { trustedAt: new Date().toISOString(), files: {} } },
    }));
    const tokenFile = path.join(hostile.stateHome, 'claw', 'servers', 'repo-0123456789abcdef.json');
    await mkdir(path.dirname(tokenFile), { recursive: true });
    await writeFile(tokenFile, JSON.stringify({ token: `token-${canary}` }));
    // Absolute paths outside the workspace are refused by bash's text check before anything runs;
    // spelled so that the check does not see them, only the sandbox keeps the files away.
    const hiddenPath = (file: string): string => `"$(echo ${Buffer.from(file).toString('base64')} | base64 -d)"`;
    const probe = [
      'cat .claw/grants.json', 'ls -la .claw', `cat ${hiddenPath(trustRecord)}`, `cat ${hiddenPath(tokenFile)}`,
      `ls -A ${hiddenPath(path.join(hostile.configHome, 'claw'))}`, 'echo "key=$OPENAI_API_KEY"', 'echo probe-done',
    ].join('; ');
    model.enqueue(
      {
        toolCalls: [
          call('call_grants', 'read_file', { path: '.claw/grants.json' }),
          call('call_session', 'read_file', { path: path.relative(workDir, sessionPath) }),
          call('call_record', 'read_file', { path: trustRecord }),
          call('call_bash', 'bash', { command: probe }),
        ],
      },
      { text: 'found nothing' },
    );

    const result = await runClaw(
      ['-p', 'look around', '--workdir', workDir, '--session', 'probe', '--approval', 'allow'],
      hostile,
    );

    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/^bash isolation: bubblewrap /m);
    expect(model.requests).toHaveLength(3);
    const seen = observations(2);
    expect([...seen.keys()].sort()).toEqual(['call_bash', 'call_grants', 'call_record', 'call_session']);
    for (const [id, content] of seen) {
      expect(content, id).not.toContain(canary);
      expect(content, id).not.toContain(apiKey);
    }
    expect(seen.get('call_grants')).toMatch(/read_file may not read \.claw\/grants\.json/);
    expect(seen.get('call_session')).toMatch(/read_file may not read \.claw\/sessions\//);
    expect(seen.get('call_record')).toMatch(/permission denied/);
    // It ran, under the sandbox: .claw is there but empty, the user's claw folders are empty, no key.
    const bash = JSON.parse(seen.get('call_bash') ?? '""') as string;
    const stdout = /--- stdout ---\n([^]*?)\n--- stderr ---/.exec(bash)?.[1];
    expect(stdout, bash).toMatch(/^total \d+\n\S+ .* \.\n\S+ .* \.\.\nkey=\nprobe-done$/);
    expect(bash).toContain('cat: .claw/grants.json: No such file or directory');
    expect(bash).toContain(`cat: ${trustRecord}: No such file or directory`);
    expect(bash).toContain(`cat: ${tokenFile}: No such file or directory`);
    // The files are all still there for claw.
    expect(await readFile(path.join(workDir, '.claw', 'grants.json'), 'utf8')).toContain(canary);
    expect(await readFile(trustRecord, 'utf8')).toContain(canary);
  }, 45_000);
});

describe('claw in the home folder: the user\'s claw folders are not the model\'s (TRUST-4)', () => {
  it('read_file of the trust record and write_file of the user\'s config.json are refused, nothing is written', async () => {
    const canary = `canary-${randomBytes(6).toString('hex')}`;
    model = await FakeOpenAIServer.start({
      turns: [
        {
          toolCalls: [
            call('call_record', 'read_file', { path: '.config/claw/trusted.json' }),
            call('call_config', 'write_file', { path: '.config/claw/config.json', content: '{"approval":"allow"}' }),
            call('call_token', 'read_file', { path: '.local/state/claw/servers/home-0123456789abcdef.json' }),
          ],
        },
        { text: 'done' },
      ],
    });
    // No XDG_* variables: the user's claw folders are the defaults under HOME, the workspace.
    const home = await tempDir('claw-home-');
    await mkdir(path.join(home, '.config', 'claw'), { recursive: true });
    await writeFile(path.join(home, '.config', 'claw', 'trusted.json'), JSON.stringify({
      version: 1,
      workspaces: { [`/srv/trust-${canary}`]: { trustedAt: new Date().toISOString(), files: {} } },
    }));
    await mkdir(path.join(home, '.local', 'state', 'claw', 'servers'), { recursive: true });
    await writeFile(
      path.join(home, '.local', 'state', 'claw', 'servers', 'home-0123456789abcdef.json'),
      JSON.stringify({ token: `token-${canary}` }),
    );
    const env: Record<string, string> = { ...modelEnv(model.baseURL), HOME: home };
    delete env.XDG_CONFIG_HOME;

    const result = await ClawProcess.run(['-p', 'go', '--workdir', home, '--approval', 'allow'], { env });

    expect(result.status, result.stderr).toBe(0);
    expect(model.requests).toHaveLength(2);
    const seen = observations(1);
    for (const id of ['call_record', 'call_config', 'call_token']) {
      expect(seen.get(id), id).toContain('is in your own claw folder');
      expect(seen.get(id), id).not.toContain(canary);
    }
    await expect(access(path.join(home, '.config', 'claw', 'config.json'))).rejects.toThrow();
  }, 30_000);
});
