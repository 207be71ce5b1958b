// MCP-8 in the built claw: `claw mcp login <name>`, `claw mcp logout <name>`, `claw mcp list`
// showing `needs login`, and the REPL and -p never opening a browser. The server is @claw/mcp's
// test fixture (an MCP server behind the SDK's own OAuth authorization server) on 127.0.0.1; the
// user's state folder is a temporary XDG_STATE_HOME; the browser is BROWSER, a script that follows
// the login page's redirects back to claw (and notes each page it was asked to open).
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FakeOpenAIServer } from '@claw/testing/node';
import { afterEach, describe, expect, it } from 'vitest';
import { startOAuthServer, type OAuthServer, type OAuthServerOptions } from '../../../packages/mcp/test/fixtures/oauth-server.mjs';
import { baseEnv, ClawProcess, cleanUp, modelEnv, tempDir } from './helpers.js';

const started: OAuthServer[] = [];
let model: FakeOpenAIServer | undefined;

afterEach(async () => {
  await cleanUp();
  await Promise.all(started.splice(0).map((server) => server.close()));
  await model?.close();
  model = undefined;
});

interface Setup {
  server: OAuthServer;
  workDir: string;
  stateHome: string;
  authFile: string;
  /** Where the fake browser notes the pages it opened, one per line. */
  openedFile: string;
  env: Record<string, string>;
}

/** A workspace whose .claw/mcp.json has the OAuth server as "remote", a state folder and a browser. */
async function setup(options: OAuthServerOptions & { auth?: boolean } = {}): Promise<Setup> {
  const server = await startOAuthServer(options);
  started.push(server);
  const workDir = await tempDir('claw-mcp-auth-work-');
  const stateHome = await tempDir('claw-mcp-auth-state-');
  const tools = await tempDir('claw-mcp-auth-browser-');
  await mkdir(path.join(workDir, '.claw'));
  const remote = { url: server.url, ...(options.auth === false ? {} : { auth: 'oauth' }) };
  await writeFile(path.join(workDir, '.claw', 'mcp.json'), JSON.stringify({
    mcpServers: { remote, files: { command: 'npx', enabled: false } },
  }));
  const openedFile = path.join(tools, 'opened.txt');
  const follow = path.join(tools, 'follow.mjs');
  await writeFile(follow, [
    "import { appendFileSync } from 'node:fs';",
    `appendFileSync(${JSON.stringify(openedFile)}, process.argv[2] + '\\n');`,
    'const response = await fetch(process.argv[2]);',
    'await response.text();',
  ].join('\n'));
  const browser = path.join(tools, 'browser');
  await writeFile(browser, `#!/bin/sh\nexec '${process.execPath}' '${follow}' "$1"\n`);
  await chmod(browser, 0o755);
  return {
    server,
    workDir,
    stateHome,
    authFile: path.join(stateHome, 'claw', 'mcp-auth.json'),
    openedFile,
    env: baseEnv({ XDG_STATE_HOME: stateHome, HOME: stateHome, BROWSER: browser }),
  };
}

async function opened(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line !== '');
}

describe('claw mcp login and logout (MCP-8)', () => {
  it('list says needs login with the command; login opens the browser, keeps the token 0600 in the state folder; list is then ready', async () => {
    const { server, workDir, authFile, openedFile, env } = await setup();

    const before = await ClawProcess.run(['mcp', 'list', '--workdir', workDir, '--trust-workspace'], { env });
    expect(before.status).toBe(1);
    expect(before.stdout).toContain([
      '  remote (http): needs login, 0 tools',
      `    log in: claw mcp login remote --workdir ${workDir}`,
      '    last error: MCP server "remote" needs you to log in: run `claw mcp login remote` in this workspace, then start claw again',
    ].join('\n'));
    expect(await opened(openedFile)).toEqual([]);

    const login = await ClawProcess.run(['mcp', 'login', 'remote', '--workdir', workDir, '--trust-workspace'], { env });
    expect(login.stderr).toBe('');
    expect(login.status).toBe(0);
    const pages = await opened(openedFile);
    expect(pages).toHaveLength(1);
    expect(pages[0]).toMatch(new RegExp(`^${server.issuer}/authorize\\?response_type=code&`));
    expect(login.stdout).toBe([
      'To log in to MCP server "remote", open this page (claw opens it in your browser):',
      `  ${pages[0]}`,
      'Waiting for the browser to come back (up to 5 minutes; Ctrl-C to stop)…',
      'Logged in to MCP server "remote": 2 tools (mcp_remote_whoami, mcp_remote_echo).',
      `The token is kept in ${authFile} (only you can read it), never in the workspace; claw uses it from its next ` +
      `start. \`claw mcp logout remote --workdir ${workDir}\` removes it.`,
      '',
    ].join('\n'));
    expect((await stat(authFile)).mode & 0o777).toBe(0o600);
    const kept = JSON.parse(await readFile(authFile, 'utf8')) as { servers: Record<string, { tokens: { access_token: string } }> };
    expect(kept.servers[server.url]?.tokens.access_token).toBe(server.log.issued[0]?.access_token);

    const after = await ClawProcess.run(['mcp', 'list', '--trust-workspace'], { env, cwd: workDir });
    expect(after.status).toBe(0);
    expect(after.stdout).toContain('  remote (http): ready, 2 tools\n    tools: mcp_remote_whoami, mcp_remote_echo\n');
    // The kept token was used: no second login.
    expect(await opened(openedFile)).toHaveLength(1);
    expect(server.log.authorizations).toHaveLength(1);

    const logout = await ClawProcess.run(['mcp', 'logout', 'remote'], { env, cwd: workDir });
    expect(logout.status).toBe(0);
    expect(logout.stdout).toBe(`Logged out of MCP server "remote": its token was removed from ${authFile}.\n`);
    expect(JSON.parse(await readFile(authFile, 'utf8'))).toEqual({ version: 1, servers: {} });
    const again = await ClawProcess.run(['mcp', 'logout', 'remote'], { env, cwd: workDir });
    expect(again.stdout).toBe(`claw keeps no token for MCP server "remote" (${server.url}): nothing to remove.\n`);
    const last = await ClawProcess.run(['mcp', 'list', '--trust-workspace'], { env, cwd: workDir });
    expect(last.status).toBe(1);
    expect(last.stdout).toContain('  remote (http): needs login, 0 tools\n    log in: claw mcp login remote\n');
  });

  it('without a browser it prints the page to open, and waits for it', async () => {
    const { server, workDir, env } = await setup();
    const claw = ClawProcess.start(['mcp', 'login', 'remote', '--trust-workspace'], {
      env: { ...env, BROWSER: path.join(workDir, 'no-such-browser') },
      cwd: workDir,
    });
    await claw.waitFor('Waiting for the browser');
    expect(claw.stdout).toContain('claw could not open a browser (');
    const page = /^ {2}(http:\S+)$/m.exec(claw.stdout)?.[1];
    expect(page).toMatch(new RegExp(`^${server.issuer}/authorize\\?`));
    // The user opens it.
    await (await fetch(page as string)).text();
    expect(await claw.exited).toBe(0);
    expect(claw.stdout).toContain('Logged in to MCP server "remote": 2 tools');
  });

  it('Ctrl-C while it waits for the browser stops the login (exit 130); no token is kept', async () => {
    const { workDir, env, authFile } = await setup();
    const claw = ClawProcess.start(['mcp', 'login', 'remote', '--trust-workspace'], {
      // A browser that opens nothing: nobody comes back.
      env: { ...env, BROWSER: '/bin/true' },
      cwd: workDir,
    });
    await claw.waitFor('Waiting for the browser');
    claw.child.kill('SIGINT');
    expect(await claw.exited).toBe(130);
    expect(claw.stdout).toContain('Login canceled: no token was kept.');
    expect(await readFile(authFile, 'utf8').then((text) => text.includes('"tokens"'), () => false)).toBe(false);
  });

  it('a login the server refuses exits 1 and says why; a bad name exits 2', async () => {
    const { workDir, env } = await setup({ deny: true });
    const denied = await ClawProcess.run(['mcp', 'login', 'remote', '--trust-workspace'], { env, cwd: workDir });
    expect(denied.status).toBe(1);
    expect(denied.stderr).toBe('claw: logging in to MCP server "remote" did not succeed: the authorization server said ' +
      'access_denied (the user said no); run `claw mcp login remote` to try again\n');
    for (const [args, message] of [
      [['mcp', 'login'], '`claw mcp login` needs the name of a server in .claw/mcp.json, e.g. claw mcp login github'],
      [['mcp', 'logout'], '`claw mcp logout` needs the name of a server in .claw/mcp.json'],
      [['mcp', 'login', 'remote', 'extra'], 'unexpected argument "extra" after `claw mcp login remote`'],
      [['mcp', 'login', 'remote', '-p', 'x'], '`claw mcp login remote` takes only --workdir, not --prompt'],
      [['mcp', 'login', 'nope', '--trust-workspace'], 'there is no MCP server "nope" in'],
      [['mcp', 'login', 'files', '--trust-workspace'], 'MCP server "files" is a command that claw starts, not a "url" server'],
      [['mcp', 'whoami'], '`claw mcp login <name>` logs in to one (OAuth)'],
    ] as const) {
      const result = await ClawProcess.run(args, { env, cwd: workDir });
      expect(result.status, result.stderr).toBe(2);
      expect(result.stderr).toContain(message);
    }
  });

  it('an untrusted workspace is not logged in to: it says how to trust it', async () => {
    const { workDir, env, openedFile } = await setup();
    const result = await ClawProcess.run(['mcp', 'login', 'remote'], { env, cwd: workDir });
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('The MCP servers of this workspace are not started: it is not trusted.');
    expect(await opened(openedFile)).toEqual([]);
  });

  it('--help describes login and logout, where the token is kept, and BROWSER', async () => {
    const help = await ClawProcess.run(['--help']);
    expect(help.stdout).toMatch(/^ {2}claw mcp login <name> +log in to a url server with OAuth/m);
    expect(help.stdout).toMatch(/^ {2}claw mcp logout <name> +remove the token claw keeps for that server/m);
    expect(help.stdout).toContain('$XDG_STATE_HOME/claw/mcp-auth.json');
    expect(help.stdout).toMatch(/^ {2}BROWSER +the program claw mcp login opens the login page with/m);
    expect(help.stdout).toContain('"auth": "oauth" on a url server');
  });
});

describe('where nobody may be asked (MCP-8): a server that needs a login is reported, and no browser opens', () => {
  it('the REPL warns with the command and says so at start-up', async () => {
    const { workDir, env, openedFile } = await setup({ auth: false });
    const claw = ClawProcess.start(['--workdir', workDir, '--trust-workspace'], {
      env: { ...env, OPENAI_API_KEY: 'unused', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' },
    });
    await claw.waitFor('claw> ');
    expect(claw.stdout).toContain('MCP: 0 tools on from 0 servers; needs login: remote (run `claw mcp login remote`)');
    expect(claw.stderr).toContain('claw: MCP server "remote" needs you to log in: run `claw mcp login remote` in this ' +
      'workspace, then start claw again (claw goes on without its tools)');
    claw.send('/exit');
    expect(await claw.exited).toBe(0);
    expect(await opened(openedFile)).toEqual([]);
  });

  it('-p runs without the server, warning with the command', async () => {
    const { workDir, env, openedFile } = await setup();
    model = await FakeOpenAIServer.start({ turns: [{ text: 'done' }] });
    const result = await ClawProcess.run(['-p', 'hello', '--workdir', workDir, '--trust-workspace'], {
      env: { ...modelEnv(model.baseURL), XDG_STATE_HOME: env.XDG_STATE_HOME as string, BROWSER: env.BROWSER as string },
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain('done');
    expect(result.stderr).toContain('MCP server "remote" needs you to log in: run `claw mcp login remote`');
    expect(await opened(openedFile)).toEqual([]);
  });
});
