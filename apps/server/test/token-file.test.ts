import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { serverFiles, serverStateFolder, workspaceStateId } from '../src/server-files.js';
import { WsClient, cleanUp as cleanUpClients } from './helpers.js';
import { ServerProcess, killServers, serverEnv } from './process.js';

const folders: string[] = [];

afterEach(async () => {
  await cleanUpClients();
  await killServers();
  for (const made of folders.splice(0)) await rm(made, { recursive: true, force: true });
});

async function folder(): Promise<string> {
  const made = await mkdtemp(path.join(tmpdir(), 'claw-server-token-'));
  folders.push(made);
  return made;
}

async function modeOf(file: string): Promise<number> {
  return (await stat(file)).mode & 0o777;
}

/** The files under `roots` (at any depth) whose bytes contain `secret`. */
async function filesHolding(roots: readonly string[], secret: string): Promise<string[]> {
  const found: string[] = [];
  for (const root of roots) {
    for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const file = path.join(entry.parentPath, entry.name);
      const bytes = await readFile(file).catch(() => Buffer.alloc(0));
      if (bytes.includes(secret)) found.push(file);
    }
  }
  return found;
}

const sha16 = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 16);

describe('where the token file is (TRUST-4)', () => {
  it('$XDG_STATE_HOME/claw/servers when XDG_STATE_HOME is absolute, else ~/.local/state/claw/servers', () => {
    expect(serverStateFolder({ XDG_STATE_HOME: '/x/state', HOME: '/home/u' })).toBe('/x/state/claw/servers');
    // A relative XDG_STATE_HOME is invalid by the XDG spec: ignored.
    expect(serverStateFolder({ XDG_STATE_HOME: 'state', HOME: '/home/u' })).toBe('/home/u/.local/state/claw/servers');
    expect(serverStateFolder({ XDG_STATE_HOME: '', HOME: '/home/u' })).toBe('/home/u/.local/state/claw/servers');
    expect(serverStateFolder({ HOME: '/home/u' })).toBe('/home/u/.local/state/claw/servers');
  });

  it('a workspace id is its folder name as a slug and 16 hex digits of the SHA-256 of its real path', () => {
    expect(workspaceStateId('/home/u/myproject')).toBe(`myproject-${sha16('/home/u/myproject')}`);
    expect(workspaceStateId('/srv/My Project (2)')).toBe(`my-project-2-${sha16('/srv/My Project (2)')}`);
    expect(workspaceStateId('/srv/.hidden')).toBe(`hidden-${sha16('/srv/.hidden')}`);
    expect(workspaceStateId('/')).toBe(`workspace-${sha16('/')}`);
    expect(workspaceStateId('/srv/ü')).toBe(`workspace-${sha16('/srv/ü')}`);
    expect(workspaceStateId(`/srv/${'a'.repeat(80)}`)).toBe(`${'a'.repeat(40)}-${sha16(`/srv/${'a'.repeat(80)}`)}`);
    // Two folders of one name do not share a file.
    expect(workspaceStateId('/a/app')).not.toBe(workspaceStateId('/b/app'));
  });
});

describe('a generated server token lives outside the workspace (TRUST-4)', () => {
  it('is in $XDG_STATE_HOME/claw/servers/<name>-<hash>.json (0600, folder 0700), not in .claw/server.json; both go at a clean stop', async () => {
    const cwd = await folder();
    const real = path.join(await folder(), 'My Project');
    await mkdir(real);
    // Reached through a symlink: the id and the record name the real path.
    const linked = path.join(cwd, 'linked');
    await symlink(real, linked);
    const realPath = await realpath(real);
    const env = serverEnv();
    const stateHome = env.XDG_STATE_HOME ?? '';
    const portFile = path.join(cwd, 'ports.json');
    const server = new ServerProcess(
      ['--demo', '--workdir', linked, '--tcp-port', '0', '--http-port', '0', '--port-file', portFile],
      { env, cwd },
    );
    const ports = await server.ports(portFile);
    const printed = server.token();

    const tokenFile = path.join(stateHome, 'claw', 'servers', `my-project-${sha16(realPath)}.json`);
    const held = JSON.parse(await readFile(tokenFile, 'utf8')) as Record<string, unknown>;
    expect(held).toEqual({ token: printed, tcp: ports.tcp, http: ports.http, pid: ports.pid, workspace: realPath });
    expect(await modeOf(tokenFile)).toBe(0o600);
    expect(await modeOf(path.dirname(tokenFile))).toBe(0o700);
    expect(await modeOf(path.join(stateHome, 'claw'))).toBe(0o700);
    // The helper clients use finds it from either path.
    expect((await serverFiles({ workspace: linked, env })).tokenFile).toBe(tokenFile);
    expect((await serverFiles({ workspace: real, env })).tokenFile).toBe(tokenFile);

    const recordFile = path.join(real, '.claw', 'server.json');
    const record = JSON.parse(await readFile(recordFile, 'utf8')) as Record<string, unknown>;
    expect(record).toEqual({ tcp: ports.tcp, http: ports.http, pid: ports.pid, token_file: tokenFile });
    expect(await modeOf(recordFile)).toBe(0o600);
    // Nothing the model's file tools reach holds it.
    expect(await filesHolding([real, cwd], printed)).toEqual([]);
    expect(server.stdout).toContain(`console:   http://127.0.0.1:${ports.http}/#token=${printed}`);
    expect(server.stdout).toContain(`token:     generated, in ${tokenFile} (mode 0600)`);

    // A client that reads the token where the record points is let in.
    const client = await WsClient.connect(ports.http);
    expect((await client.hello(String(held.token))).type).toBe('welcome');

    server.signal('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(existsSync(tokenFile)).toBe(false);
    expect(existsSync(recordFile)).toBe(false);
  });

  it('without XDG_STATE_HOME (or with a relative one) it is under $HOME/.local/state/claw/servers', async () => {
    const cwd = await folder();
    const workDir = await folder();
    const home = await folder();
    const env = { ...serverEnv(), HOME: home, XDG_STATE_HOME: 'relative/state' };
    const portFile = path.join(cwd, 'ports.json');
    const server = new ServerProcess(
      ['--demo', '--workdir', workDir, '--tcp-port', '0', '--http-port', '0', '--port-file', portFile],
      { env, cwd },
    );
    await server.ports(portFile);
    const realPath = await realpath(workDir);
    const servers = path.join(home, '.local', 'state', 'claw', 'servers');
    const tokenFile = path.join(servers, `${path.basename(realPath).toLowerCase()}-${sha16(realPath)}.json`);
    expect(JSON.parse(await readFile(tokenFile, 'utf8'))).toMatchObject({ token: server.token() });
    expect(await modeOf(servers)).toBe(0o700);
    expect(existsSync(path.join(cwd, 'relative'))).toBe(false);
    server.signal('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(existsSync(tokenFile)).toBe(false);
  });
});

describe('a token the operator gives is never printed nor written (TRUST-4)', () => {
  it.each(['CLAW_SERVER_TOKEN', '--token-file'] as const)('given by %s', async (how) => {
    const cwd = await folder();
    const workDir = await folder();
    const secrets = await folder();
    const token = randomBytes(24).toString('hex');
    const tokenFile = path.join(secrets, 'token.txt');
    await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
    const env = serverEnv(how === 'CLAW_SERVER_TOKEN' ? { CLAW_SERVER_TOKEN: token } : {});
    const stateHome = env.XDG_STATE_HOME ?? '';
    const portFile = path.join(cwd, 'ports.json');
    const server = new ServerProcess(
      [
        '--demo', '--workdir', workDir, '--tcp-port', '0', '--http-port', '0', '--port-file', portFile,
        ...(how === '--token-file' ? ['--token-file', tokenFile] : []),
      ],
      { env, cwd },
    );
    const ports = await server.ports(portFile);
    await writeFile(path.join(workDir, 'README.md'), '# demo\n');

    // It is the token in use: a task runs on it (its questions denied), a wrong one is refused.
    const client = await WsClient.connect(ports.http);
    await client.hello(token);
    client.send({ type: 'prompt', content: 'show me' });
    const answered: string[] = [];
    await client.waitFor(() => {
      for (const request of client.of('approval_request')) {
        if (answered.includes(request.request_id)) continue;
        answered.push(request.request_id);
        client.send({ type: 'approval_response', request_id: request.request_id, decision: 'deny' });
      }
      return client.of('task_completed')[0];
    }, 'the demo task to complete', 15_000);
    const stranger = await WsClient.connect(ports.http);
    stranger.send({ type: 'hello', token: `${token}x`, protocol: 1 });
    expect((await stranger.next('error')).code).toBe('unauthorized');
    const unauthorized = await fetch(`http://127.0.0.1:${ports.http}/api/sessions`);
    expect(unauthorized.status).toBe(401);
    expect(await unauthorized.text()).not.toContain(token);

    expect(server.stdout).toContain(`console:   http://127.0.0.1:${ports.http}/ (add #token=<your token>)`);
    expect(server.stdout).not.toMatch(/#token=[^<]/);
    // While it runs, no file holds it: not the workspace's, not the state folder's.
    expect(JSON.parse(await readFile(path.join(workDir, '.claw', 'server.json'), 'utf8')))
      .toEqual({ tcp: ports.tcp, http: ports.http, pid: ports.pid });
    expect(await filesHolding([workDir, cwd, stateHome], token)).toEqual([]);

    server.signal('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(server.stdout).not.toContain(token);
    expect(server.stderr).not.toContain(token);
    expect(await filesHolding([workDir, cwd, stateHome], token)).toEqual([]);
  });
});
