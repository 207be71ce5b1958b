// Workspace trust (TRUST-1..3) through the built claw: `claw trust`, the line -p says when it left
// settings out, the REPL's question, and `claw mcp list` refusing an untrusted workspace's servers.
// Every test that may trust keeps its record in a claw folder of its own (XDG_CONFIG_HOME).
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultSettings } from '@claw/runtime';
import { FakeOpenAIServer, type FakeTurn } from '@claw/testing/node';
import { afterEach, describe, expect, it } from 'vitest';
import { ClawProcess, baseEnv, cleanUp, eventually, messagesOf, tempDir } from './helpers.js';

let server: FakeOpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
  await cleanUp();
});

const testServer = fileURLToPath(new URL('../../../packages/mcp/test/fixtures/test-server.mjs', import.meta.url));

interface SettingsFiles {
  config?: unknown;
  mcp?: unknown;
  a2a?: unknown;
}

/** A workspace with these `.claw/` settings files (JSON), and its real path (as the record has it). */
async function workspaceWith(files: SettingsFiles): Promise<{ dir: string; root: string }> {
  const dir = await tempDir();
  await writeSettings(dir, files);
  return { dir, root: await realpath(dir) };
}

async function writeSettings(dir: string, files: SettingsFiles): Promise<void> {
  await mkdir(path.join(dir, '.claw'), { recursive: true });
  for (const [name, content] of Object.entries(files)) {
    await writeFile(path.join(dir, '.claw', `${name}.json`), JSON.stringify(content));
  }
}

/** A claw folder of the test's own: the record of trusted workspaces is `<it>/claw/trusted.json`. */
interface UserFolder {
  /** baseEnv with this claw folder, and `extra`. */
  env: (extra?: Record<string, string>) => Record<string, string>;
  /** Its record of trusted workspaces. */
  record: string;
}

async function userFolder(): Promise<UserFolder> {
  const xdg = await tempDir('claw-cli-trust-');
  return {
    env: (extra = {}) => baseEnv({ XDG_CONFIG_HOME: xdg, ...extra }),
    record: path.join(xdg, 'claw', 'trusted.json'),
  };
}

interface TrustRecord {
  version: number;
  workspaces: Record<string, { trustedAt: string; files: Record<string, string> }>;
}

async function readRecord(file: string): Promise<TrustRecord> {
  return JSON.parse(await readFile(file, 'utf8')) as TrustRecord;
}

async function digestOf(file: string): Promise<string> {
  return `sha256:${createHash('sha256').update(await readFile(file)).digest('hex')}`;
}

/**
 * An MCP server that writes `marker` as it starts (so a test sees whether claw started it at all),
 * then is the SDK test server of @claw/mcp.
 */
function markerServer(marker: string): Record<string, unknown> {
  const code = 'const [marker, server] = process.argv.splice(1, 2); ' +
    "require('node:fs').writeFileSync(marker, 'started'); " +
    "import(require('node:url').pathToFileURL(server).href);";
  return { command: process.execPath, args: ['-e', code, marker, testServer] };
}

/** The fake model: a write_file call of notes.txt, then `done` once it has the call's result. */
function writingModel(): Promise<FakeOpenAIServer> {
  return FakeOpenAIServer.start({
    turns: (body): FakeTurn => {
      const last = (body as { messages: Array<{ role: string }> }).messages.at(-1);
      if (last?.role === 'tool') return { text: 'done' };
      const args = JSON.stringify({ path: 'notes.txt', content: 'hi\n' });
      return { toolCalls: [{ name: 'write_file', arguments: args }] };
    },
  });
}

function modelOf(index: number): unknown {
  return (server?.requests[index]?.body as { model?: unknown } | undefined)?.model;
}

const question = 'Trust this workspace? [y/N]';
const prompt = 'claw> ';

describe('claw trust', () => {
  it('shows what the settings files do and records their digests (0600); --list lists it; --revoke takes it back', async () => {
    const user = await userFolder();
    const { dir, root } = await workspaceWith({
      config: { baseUrl: 'http://models.example.test/v1', approval: 'allow' },
      mcp: { mcpServers: { tools: { command: 'node', args: ['server.js', '--port', '7'] } } },
      a2a: { peers: { helper: { url: 'http://127.0.0.1:9/a2a', headers: { Authorization: 'Bearer ${TOKEN}' } } } },
    });
    const trusted = await ClawProcess.run(['trust', '--workdir', dir], { env: user.env() });
    expect(trusted.stderr).toBe('');
    expect(trusted.status).toBe(0);
    expect(trusted.stdout).toBe([
      `Trusted ${root}: claw now uses`,
      '  .claw/config.json',
      '    baseUrl "http://models.example.test/v1": the model is called there, with your API key',
      '    approval "allow": every tool call runs without asking',
      '  .claw/mcp.json',
      '    MCP server "tools" runs: node server.js --port 7',
      '  .claw/a2a.json',
      '    A2A peer "helper" at "http://127.0.0.1:9/a2a", sent Authorization',
      `A change to any of these files needs \`claw trust\` again. (Kept in ${user.record}.)`,
      '',
    ].join('\n'));

    // Only the user may read or change what they trust.
    expect((await stat(user.record)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(user.record))).mode & 0o777).toBe(0o700);
    const record = await readRecord(user.record);
    expect(record.version).toBe(1);
    expect(Object.keys(record.workspaces)).toEqual([root]);
    const clawFolder = path.join(root, '.claw');
    expect(record.workspaces[root]?.files).toEqual({
      'config.json': await digestOf(path.join(clawFolder, 'config.json')),
      'mcp.json': await digestOf(path.join(clawFolder, 'mcp.json')),
      'a2a.json': await digestOf(path.join(clawFolder, 'a2a.json')),
    });
    const trustedAt = record.workspaces[root]?.trustedAt ?? '';
    expect(new Date(trustedAt).toISOString()).toBe(trustedAt);

    // From inside the workspace, a second time: the same files, already trusted.
    const again = await ClawProcess.run(['trust'], { env: user.env(), cwd: dir });
    expect(again.status).toBe(0);
    expect(again.stdout).toContain(`Trusted ${root} (already trusted with these files): claw now uses`);
    expect(Object.keys((await readRecord(user.record)).workspaces)).toEqual([root]);

    const listed = await ClawProcess.run(['trust', '--list'], { env: user.env() });
    expect(listed.status).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${escaped(root)} trusted \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\n$`));

    const revoked = await ClawProcess.run(['trust', '--revoke', '--workdir', dir], { env: user.env() });
    expect(revoked.status).toBe(0);
    expect(revoked.stdout).toBe(
      `${root} is no longer trusted: claw uses its .claw settings only once you trust it again.\n`,
    );
    expect((await readRecord(user.record)).workspaces).toEqual({});

    const notTrusted = await ClawProcess.run(['trust', '--revoke', '--workdir', dir], { env: user.env() });
    expect(notTrusted.status).toBe(0);
    expect(notTrusted.stdout).toBe(`${root} was not trusted; nothing changed.\n`);

    const none = await ClawProcess.run(['trust', '--list'], { env: user.env() });
    expect(none.status).toBe(0);
    expect(none.stdout).toBe(`No trusted workspaces (${user.record}).\n`);
  });

  it('says a workspace without settings files has nothing to trust yet; a file added later is not trusted', async () => {
    const user = await userFolder();
    const dir = await tempDir();
    const root = await realpath(dir);
    const result = await ClawProcess.run(['trust', '--workdir', dir], { env: user.env() });
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(
      `Trusted ${root}. It has no .claw/config.json, mcp.json or a2a.json yet; one added later needs ` +
      `\`claw trust\` again. (Kept in ${user.record}.)\n`,
    );

    await writeSettings(dir, { config: { model: 'added-later' } });
    const run = await ClawProcess.run(['-p', 'hi', '--workdir', dir], {
      env: user.env({ OPENAI_API_KEY: 'unused', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' }),
      input: '',
    });
    expect(run.stderr).toContain(
      'claw: this workspace\'s own settings are not used because its settings changed since you trusted it ' +
      '(.claw/config.json): ignored model in .claw/config.json',
    );
  });

  it('usage errors exit 2 and say what is wrong; the help tells of claw trust and --trust-workspace', async () => {
    const cases: Array<[string[], string]> = [
      [['trust', '--bogus'], 'claw: unknown option --bogus'],
      [['trust', '--revoke', '--list'], '`claw trust` takes --revoke or --list, not both'],
      [['trust', 'now'], 'unexpected argument "now" after `claw trust`'],
      [['trust', '--model', 'x'], '`claw trust` takes only --workdir, not --model'],
      [['trust', '--list', '--workdir', '.'], '`claw trust --list` lists every trusted workspace: drop --workdir'],
      [['-p', 'hi', '--revoke'], '--revoke is an option of `claw trust` only'],
      [['mcp', 'list', '--list'], '--list is an option of `claw trust` only'],
      [['sessions', '--revoke'], '--revoke is an option of `claw trust` only'],
    ];
    const user = await userFolder();
    for (const [args, message] of cases) {
      const result = await ClawProcess.run(args, { env: user.env() });
      expect(result.status, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toContain(message);
      expect(result.stdout, args.join(' ')).toBe('');
    }
    expect(existsSync(user.record)).toBe(false);

    for (const args of [['--help'], ['trust', '--help']]) {
      const help = await ClawProcess.run(args);
      expect(help.status).toBe(0);
      expect(help.stdout).toMatch(/^ {2}claw trust \[--workdir <dir>\] +trust the workspace's own settings/m);
      expect(help.stdout).toContain('--revoke takes the trust back, --list lists trusted folders');
      expect(help.stdout).toMatch(/^ {2}--trust-workspace +use the workspace's own \.claw\/config\.json/m);
      expect(help.stdout).toContain('claw trust --workdir ~/project');
    }
  });

  it('a record that is not claw\'s is an error (exit 2) that says how to get out of it', async () => {
    const user = await userFolder();
    await mkdir(path.dirname(user.record), { recursive: true });
    await writeFile(user.record, '{ not json');
    const listed = await ClawProcess.run(['trust', '--list'], { env: user.env() });
    expect(listed.status).toBe(2);
    expect(listed.stderr).toContain(`the record of trusted workspaces ${user.record} is not valid JSON; remove it`);
    const { dir } = await workspaceWith({ config: { model: 'workspace-model' } });
    const run = await ClawProcess.run(['-p', 'hi', '--workdir', dir], {
      env: user.env({ OPENAI_API_KEY: 'unused', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' }),
      input: '',
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('is not valid JSON');
    expect(await readFile(user.record, 'utf8')).toBe('{ not json');
  });
});

describe('claw -p in an untrusted workspace', () => {
  it('leaves out the settings that need trust and says so in one line, until trusted; a changed file is untrusted again', async () => {
    server = await writingModel();
    const user = await userFolder();
    const env = user.env({ OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'test' });
    const { dir } = await workspaceWith({ config: { model: 'workspace-model', approval: 'allow' } });
    const notes = path.join(dir, 'notes.txt');
    const run = (...extra: string[]) =>
      ClawProcess.run(['-p', 'write the notes', '--workdir', dir, ...extra], { env, input: '' });
    const noticeLines = (stderr: string) => stderr.split('\n').filter((line) => line.includes('own settings'));

    const untrusted = await run();
    expect(untrusted.status, untrusted.stderr).toBe(0);
    expect(noticeLines(untrusted.stderr)).toEqual([
      'claw: this workspace\'s own settings are not used because it is not trusted: ignored model, approval in ' +
      `.claw/config.json; run \`claw trust --workdir ${dir}\` to use them (or pass --trust-workspace for this run)`,
    ]);
    expect(untrusted.stdout + untrusted.stderr).not.toContain(question);
    // Neither the model nor "allow": the default model, and the write is refused (deny, unattended).
    expect(modelOf(0)).toBe(defaultSettings.model);
    expect(existsSync(notes)).toBe(false);
    // -p never records anything.
    expect(existsSync(user.record)).toBe(false);

    const given = await run('--trust-workspace');
    expect(given.status, given.stderr).toBe(0);
    expect(given.stderr).not.toContain('own settings');
    expect(modelOf(2)).toBe('workspace-model');
    expect(await readFile(notes, 'utf8')).toBe('hi\n');
    expect(existsSync(user.record)).toBe(false);

    const trust = await ClawProcess.run(['trust', '--workdir', dir], { env });
    expect(trust.status, trust.stderr).toBe(0);
    await rm(notes);
    const trusted = await run();
    expect(trusted.status, trusted.stderr).toBe(0);
    expect(trusted.stderr).not.toContain('own settings');
    expect(modelOf(4)).toBe('workspace-model');
    expect(await readFile(notes, 'utf8')).toBe('hi\n');
    await rm(notes);

    await writeSettings(dir, { config: { model: 'another-model', approval: 'allow' } });
    const changed = await run();
    expect(changed.status, changed.stderr).toBe(0);
    expect(noticeLines(changed.stderr)).toEqual([
      'claw: this workspace\'s own settings are not used because its settings changed since you trusted it ' +
      '(.claw/config.json): ignored model, approval in .claw/config.json; run ' +
      `\`claw trust --workdir ${dir}\` to use them (or pass --trust-workspace for this run)`,
    ]);
    expect(modelOf(6)).toBe(defaultSettings.model);
    expect(existsSync(notes)).toBe(false);
    expect(server.requests).toHaveLength(8);
  });

  it('names the MCP servers and A2A peers it left out (no server started) and, run in the workspace, plain `claw trust`', async () => {
    server = await FakeOpenAIServer.start({ turns: [{ text: 'ok' }] });
    const user = await userFolder();
    const marker = path.join(await tempDir(), 'started');
    const { dir } = await workspaceWith({
      config: { model: 'workspace-model' },
      mcp: { mcpServers: { marker: markerServer(marker) } },
      a2a: { peers: { helper: { url: 'http://127.0.0.1:9/a2a' } } },
    });
    const result = await ClawProcess.run(['-p', 'hi'], {
      env: user.env({ OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'test' }),
      cwd: dir,
      input: '',
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toContain(
      'claw: this workspace\'s own settings are not used because it is not trusted: ignored model in ' +
      '.claw/config.json; the MCP servers of .claw/mcp.json (not started) and the A2A peers of .claw/a2a.json; ' +
      'run `claw trust` to use them (or pass --trust-workspace for this run)\n',
    );
    expect(result.stdout).toBe('ok\n');
    expect(existsSync(marker)).toBe(false);
  });

  it('takes what narrows from an untrusted config.json without a word (appendSystemPrompt, a lower limit)', async () => {
    server = await FakeOpenAIServer.start({ turns: [{ text: 'ok' }] });
    const user = await userFolder();
    const { dir } = await workspaceWith({ config: { appendSystemPrompt: 'Answer in French.', maxTurns: 5 } });
    const result = await ClawProcess.run(['-p', 'hi', '--workdir', dir], {
      env: user.env({ OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'test' }),
      input: '',
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).not.toContain('own settings');
    const system = messagesOf(server.requests[0]).find((message) => message.role === 'system');
    expect(system?.content).toContain('Answer in French.');
  });
});

describe('the REPL in an untrusted workspace', () => {
  it('shows what the files would do and asks; n goes on without them, no server started, and the next line is a task', async () => {
    server = await FakeOpenAIServer.start({ turns: [{ text: 'the answer' }] });
    const user = await userFolder();
    const marker = path.join(await tempDir(), 'started');
    const { dir, root } = await workspaceWith({
      config: { model: 'workspace-model', approval: 'allow' },
      mcp: { mcpServers: { marker: markerServer(marker) } },
    });
    const claw = ClawProcess.start(['--workdir', dir], {
      env: user.env({ OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'test' }),
    });
    await claw.waitFor(question);
    expect(claw.stdout).toContain([
      `${root} has settings of its own that claw uses only if you trust them. They would:`,
      '  .claw/config.json',
      '    model "workspace-model"',
      '    approval "allow": every tool call runs without asking',
      '  .claw/mcp.json',
      `    MCP server "marker" runs: ${process.execPath} -e const [marker, server]`,
    ].join('\n'));
    expect(claw.stdout).toContain(
      'Trust them only if you trust whoever wrote them: they can send your API key elsewhere, run programs ' +
      `and let tools run without asking.\n${question}\n`,
    );
    // Nothing runs before the answer.
    expect(claw.stdout).not.toContain(prompt);
    expect(server.requests).toHaveLength(0);

    claw.send('n');
    await claw.waitFor(prompt);
    expect(claw.stdout).toContain(
      'Going on without them. This workspace\'s own settings are not used because it is not trusted: ignored ' +
      'model, approval in .claw/config.json and the MCP servers of .claw/mcp.json (not started); run ' +
      `\`claw trust --workdir ${dir}\` to use them (or pass --trust-workspace for this run)`,
    );
    expect(claw.stdout).toContain(`model ${defaultSettings.model} · approval deny`);
    expect(claw.stdout).not.toContain('MCP:');
    claw.send('hello');
    await claw.waitFor('the answer');
    await claw.waitFor(prompt, 2);
    expect(modelOf(0)).toBe(defaultSettings.model);
    expect(messagesOf(server.requests[0]).filter((message) => message.role === 'user').map((m) => m.content))
      .toEqual(['hello']);
    claw.send('/exit');
    expect(await claw.exited).toBe(0);
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(user.record)).toBe(false);
  });

  it('takes the first piped line as the answer even when it came before the question; the end of input ends it (exit 0)', async () => {
    server = await FakeOpenAIServer.start({ turns: [] });
    const user = await userFolder();
    const { dir } = await workspaceWith({ config: { model: 'workspace-model' } });
    const env = user.env({ OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'test' });

    const answered = await ClawProcess.run(['--workdir', dir], { env, input: 'n\n/exit\n' });
    expect(answered.status, answered.stderr).toBe(0);
    expect(answered.stdout).toContain(`${question}\nGoing on without them.`);
    expect(answered.stdout).toContain(prompt);
    expect(answered.stdout).not.toContain('canceled');

    const ended = await ClawProcess.run(['--workdir', dir], { env, input: '' });
    expect(ended.status, ended.stderr).toBe(0);
    expect(ended.stdout).toContain(`${question}\nGoing on without them.`);

    expect(server.requests).toHaveLength(0);
    expect(existsSync(user.record)).toBe(false);
  });

  it('y records the trust and uses the settings (model, MCP servers); a trusted workspace is not asked again', async () => {
    server = await FakeOpenAIServer.start({ turns: [{ text: 'first' }, { text: 'second' }] });
    const user = await userFolder();
    const marker = path.join(await tempDir(), 'started');
    const { dir, root } = await workspaceWith({
      config: { model: 'workspace-model', approval: 'allow' },
      mcp: { mcpServers: { marker: markerServer(marker) } },
    });
    const env = user.env({ OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'test' });
    const claw = ClawProcess.start(['--workdir', dir], { env });
    await claw.waitFor(question);
    expect(existsSync(marker)).toBe(false);
    claw.send('y');
    await claw.waitFor(prompt);
    expect(claw.stdout).toContain(
      `Trusted ${root} with its .claw/config.json, .claw/mcp.json as they are now (a change asks again); ` +
      '`claw trust --revoke` takes it back.',
    );
    expect(claw.stdout).toContain('model workspace-model · approval allow');
    expect(claw.stdout).toContain('MCP: 12 tools on from 1 server (marker)');
    expect(existsSync(marker)).toBe(true);
    const record = await readRecord(user.record);
    expect(record.workspaces[root]?.files).toEqual({
      'config.json': await digestOf(path.join(root, '.claw', 'config.json')),
      'mcp.json': await digestOf(path.join(root, '.claw', 'mcp.json')),
    });
    expect((await stat(user.record)).mode & 0o777).toBe(0o600);
    claw.send('hello');
    await claw.waitFor('first');
    expect(modelOf(0)).toBe('workspace-model');
    claw.send('/exit');
    expect(await claw.exited).toBe(0);

    const again = ClawProcess.start(['--workdir', dir], { env });
    await again.waitFor(prompt);
    expect(again.stdout).not.toContain(question);
    expect(again.stdout).not.toContain('own settings');
    expect(again.stdout).toContain('model workspace-model · approval allow');
    again.send('/exit');
    expect(await again.exited).toBe(0);
  });

  it('asks only when there is something that needs trust and it is not trusted; a changed file asks again', async () => {
    const user = await userFolder();
    const env = user.env({ OPENAI_API_KEY: 'unused', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
    const startAndExit = async (dir: string, extra: string[] = []) => {
      const claw = ClawProcess.start(['--workdir', dir, ...extra], { env });
      await claw.until(`"${prompt}" or the question`, () => claw.stdout.includes(prompt) || claw.stdout.includes(question));
      const asked = claw.stdout.includes(question);
      claw.child.stdin?.end(asked ? 'n\n/exit\n' : '/exit\n');
      expect(await claw.exited).toBe(0);
      return { asked, stdout: claw.stdout };
    };

    // No settings files, or only what narrows: nothing to ask.
    expect((await startAndExit(await tempDir())).asked).toBe(false);
    const narrowing = await workspaceWith({ config: { appendSystemPrompt: 'Be brief.', approval: 'deny' } });
    expect((await startAndExit(narrowing.dir)).asked).toBe(false);

    const { dir, root } = await workspaceWith({ config: { model: 'workspace-model' } });
    expect((await startAndExit(dir, ['--trust-workspace'])).asked).toBe(false);
    expect((await startAndExit(dir)).asked).toBe(true);
    const trust = await ClawProcess.run(['trust', '--workdir', dir], { env });
    expect(trust.status, trust.stderr).toBe(0);
    const trusted = await startAndExit(dir);
    expect(trusted.asked).toBe(false);
    expect(trusted.stdout).toContain('model workspace-model');

    await writeSettings(dir, { config: { model: 'workspace-model', baseUrl: 'http://elsewhere.example.test/v1' } });
    const changed = await startAndExit(dir);
    expect(changed.asked).toBe(true);
    expect(changed.stdout).toContain(
      `The settings of ${root} changed since you trusted it (.claw/config.json). As they are now, they would:\n` +
      '  .claw/config.json\n    model "workspace-model"\n' +
      '    baseUrl "http://elsewhere.example.test/v1": the model is called there, with your API key\n',
    );
    expect(changed.stdout).toContain(`model ${defaultSettings.model}`);
  });

  it('Ctrl-C at the question ends claw (130) without recording anything', async () => {
    const user = await userFolder();
    const { dir } = await workspaceWith({ config: { model: 'workspace-model' } });
    const claw = ClawProcess.start(['--workdir', dir], {
      env: user.env({ OPENAI_API_KEY: 'unused', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' }),
    });
    await claw.waitFor(question);
    claw.child.kill('SIGINT');
    expect(await claw.exited).toBe(130);
    expect(claw.stdout).not.toContain(prompt);
    expect(existsSync(user.record)).toBe(false);
  });
});

describe('claw mcp list in an untrusted workspace', () => {
  it('starts no server: exit 1, says why and what they would run; --trust-workspace or claw trust lists them; a change refuses again', async () => {
    const user = await userFolder();
    const marker = path.join(await tempDir(), 'started');
    const { dir } = await workspaceWith({ mcp: { mcpServers: { marker: markerServer(marker) } } });

    const refused = await ClawProcess.run(['mcp', 'list', '--workdir', dir], { env: user.env() });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toBe('');
    const lines = refused.stdout.split('\n');
    expect(lines[0]).toBe('The MCP servers of this workspace are not started: it is not trusted. They would be:');
    expect(lines[1]).toMatch(new RegExp(`^ {2}MCP server "marker" runs: ${escaped(process.execPath)} -e const \\[marker`));
    expect(lines.slice(2)).toEqual([
      `Run \`claw trust --workdir ${dir}\` to trust it (or pass --trust-workspace to list them once).`,
      '',
    ]);
    expect(existsSync(marker)).toBe(false);

    const given = await ClawProcess.run(['mcp', 'list', '--workdir', dir, '--trust-workspace'], { env: user.env() });
    expect(given.status, given.stdout + given.stderr).toBe(0);
    expect(given.stdout).toContain('marker (stdio): ready, 12 tools');
    expect(existsSync(marker)).toBe(true);
    expect(existsSync(user.record)).toBe(false);

    const trust = await ClawProcess.run(['trust', '--workdir', dir], { env: user.env() });
    expect(trust.status, trust.stderr).toBe(0);
    const trusted = await ClawProcess.run(['mcp', 'list'], { env: user.env(), cwd: dir });
    expect(trusted.status, trusted.stdout + trusted.stderr).toBe(0);
    expect(trusted.stdout).toContain('marker (stdio): ready, 12 tools');

    const otherMarker = path.join(path.dirname(marker), 'started-again');
    await writeSettings(dir, { mcp: { mcpServers: { marker: markerServer(otherMarker) } } });
    const changed = await ClawProcess.run(['mcp', 'list', '--workdir', dir], { env: user.env() });
    expect(changed.status).toBe(1);
    expect(changed.stdout).toContain(
      'The MCP servers of this workspace are not started: its settings changed since you trusted it.',
    );
    expect(await eventually(async () => existsSync(otherMarker), 500)).toBe(false);
  });
});

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
