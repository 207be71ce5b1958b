import { mkdir, symlink, writeFile } from 'node:fs/promises';
import nodePath from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DefaultPolicy } from '../src/index.js';
import { callRequest, removeTempDirs, tempDir } from './fixtures.js';

let workDir: string;

beforeEach(async () => {
  workDir = await tempDir();
});
afterEach(removeTempDirs);

const policy = new DefaultPolicy();
const evaluate = (toolName: string, args: Record<string, unknown> | string, risk?: 'safe' | 'mutating' | 'dangerous') =>
  policy.evaluate(callRequest({ toolName, args, workDir, ...(risk === undefined ? {} : { risk }) }));

describe('DefaultPolicy (APR-1)', () => {
  it('allows a safe tool inside the workspace', async () => {
    expect(await evaluate('read_file', { path: 'src/a.ts' })).toEqual({ action: 'allow' });
  });

  it('asks about a write, saying what it will do', async () => {
    expect(await evaluate('write_file', { path: 'src/a.ts', content: 'x' })).toEqual({
      action: 'ask',
      reason: 'write_file will write src/a.ts',
    });
    expect(await evaluate('edit_file', { path: 'b.md', old_string: 'a', new_string: 'b' })).toEqual({
      action: 'ask',
      reason: 'edit_file will edit b.md',
    });
  });

  it('asks about other risky tools with their arguments', async () => {
    expect(await evaluate('deploy', { target: 'prod', dry: false }, 'dangerous')).toEqual({
      action: 'ask',
      reason: 'deploy will run with arguments {"dry":false,"target":"prod"}',
    });
    expect(await evaluate('spawn_subagent', { task: 'count files' }, 'mutating')).toEqual({
      action: 'ask',
      reason: 'spawn_subagent will start a subagent for: count files',
    });
  });

  it('reads the raw arguments when the request has no parsed ones', async () => {
    const request = callRequest({ toolName: 'read_file', args: '{"path":"/etc/passwd"}', workDir });
    expect(await policy.evaluate({ ...request, arguments: undefined })).toMatchObject({ action: 'deny' });
  });

  it('cuts a very long command in the reason', async () => {
    const command = `echo ${'x'.repeat(1000)}`;
    const verdict = await new DefaultPolicy({ bashIsolated: true }).evaluate(callRequest({ toolName: 'bash', args: { command }, workDir }));
    expect(verdict).toEqual({ action: 'ask', reason: `bash will run: ${command.slice(0, 300)}… (1005 characters)` });
  });

  describe('paths', () => {
    it.each([
      ['an absolute path', '/etc/passwd', 'is absolute'],
      ['a path leaving the workspace', '../outside.txt', 'leaves the workspace'],
      ['a nested escape', 'a/b/../../../x', 'leaves the workspace'],
    ])('denies %s for any tool, safe ones included', async (_what, path, why) => {
      for (const toolName of ['read_file', 'write_file', 'my_tool']) {
        const verdict = await evaluate(toolName, { path, content: '' });
        expect(verdict).toEqual({ action: 'deny', reason: expect.stringContaining(why) as unknown });
        expect(verdict).toEqual({ action: 'deny', reason: expect.stringContaining('outside the workspace') as unknown });
      }
    });

    it('denies a path that leads out through a symlink', async () => {
      const outside = await tempDir();
      await symlink(outside, nodePath.join(workDir, 'out'));
      expect(await evaluate('read_file', { path: 'out/secret.txt' })).toEqual({
        action: 'deny',
        reason: expect.stringContaining('through a symlink') as unknown,
      });
    });

    it('denies an empty path and a path that is not text', async () => {
      expect(await evaluate('read_file', { path: '' })).toEqual({ action: 'deny', reason: expect.stringContaining('empty') as unknown });
      expect(await evaluate('read_file', { path: 42 })).toEqual({
        action: 'deny',
        reason: 'the "path" argument of read_file must be text',
      });
    });

    it.each([
      '.claw/grants.json',
      './.claw/grants.json',
      'src/../.claw/grants.json',
      '.claw/sessions/default.json',
      '.claw',
      '.CLAW/Grants.json',
      '.claw/config.json',
      'sub/.claw/grants.json',
      'sub/.claw/config.json',
      'src/.claw/notes.md',
      '.git/hooks/pre-commit',
      '.Git/HOOKS/post-checkout',
      '.git/config',
      '.git/./config',
    ])('denies writing %s', async (path) => {
      for (const toolName of ['write_file', 'edit_file']) {
        const verdict = await evaluate(toolName, { path, content: 'x', old_string: 'a', new_string: 'b' });
        expect(verdict).toMatchObject({ action: 'deny' });
        expect(verdict).toEqual({ action: 'deny', reason: expect.stringContaining(`${toolName} may not change ${path}`) as unknown });
      }
    });

    it('says why .claw folders are protected', async () => {
      expect(await evaluate('write_file', { path: '.claw/config.json', content: '{}' })).toEqual({
        action: 'deny',
        reason: 'write_file may not change .claw/config.json: claw keeps its state and settings in .claw folders; tools may not change them',
      });
      expect(await evaluate('edit_file', { path: '.claw/grants.json', old_string: 'a', new_string: 'b' })).toEqual({
        action: 'deny',
        reason: 'edit_file may not change .claw/grants.json: it is claw\'s own state (sessions, grants, audit, traces, the server\'s token), which is not for the model',
      });
    });

    it('denies writing into .claw/ through a symlink inside the workspace', async () => {
      await mkdir(nodePath.join(workDir, '.claw'));
      await mkdir(nodePath.join(workDir, 'sub/.claw'), { recursive: true });
      await symlink(nodePath.join(workDir, '.claw'), nodePath.join(workDir, 'state'));
      await symlink(nodePath.join(workDir, 'sub/.claw'), nodePath.join(workDir, 'nested'));
      expect(await evaluate('write_file', { path: 'state/grants.json', content: '{}' })).toEqual({
        action: 'deny',
        reason: expect.stringContaining('claw\'s own state') as unknown,
      });
      expect(await evaluate('write_file', { path: 'nested/config.json', content: '{}' })).toEqual({
        action: 'deny',
        reason: expect.stringContaining('claw keeps its state and settings in .claw folders') as unknown,
      });
    });

    it.each(['.clawrc', 'docs/.claw-notes.md', '.git/HEAD', '.github/workflows/ci.yml', '.git-hooks/x'])(
      'asks (does not deny) writing %s',
      async (path) => {
        expect(await evaluate('write_file', { path, content: 'x' })).toEqual({ action: 'ask', reason: `write_file will write ${path}` });
      },
    );

    it('lets a safe tool read the settings files of .claw/', async () => {
      for (const path of ['.claw/config.json', '.claw/mcp.json', '.claw/a2a.json', 'sub/.claw/config.json']) {
        expect(await evaluate('read_file', { path })).toEqual({ action: 'allow' });
      }
    });
  });

  describe('secrets: claw\'s state and .env files (TRUST-4)', () => {
    const stateReason = 'it is claw\'s own state (sessions, grants, audit, traces, the server\'s token), which is not for the model';

    beforeEach(async () => {
      for (const file of ['.claw/sessions/x.jsonl', '.claw/grants.json', '.claw/audit.jsonl', '.claw/server.json', '.claw/config.json', 'sub/.claw/grants.json', '.env', '.env.local', 'config/.env.production', '.env.example']) {
        await mkdir(nodePath.dirname(nodePath.join(workDir, file)), { recursive: true });
        await writeFile(nodePath.join(workDir, file), 'SECRET=1\n');
      }
    });

    it.each([
      '.claw/sessions/x.jsonl',
      '.claw/grants.json',
      '.claw/audit.jsonl',
      '.claw/server.json',
      '.claw/traces/spans.json',
      '.claw/.gitignore',
      '.claw',
      'sub/.claw/grants.json',
      'a/b/.CLAW/sessions/y.jsonl',
      './sub/../.claw/grants.json',
    ])('denies reading %s, saying why', async (path) => {
      expect(await evaluate('read_file', { path })).toEqual({ action: 'deny', reason: `read_file may not read ${path}: ${stateReason}` });
    });

    it('denies it for a path given absolute, and for any tool with a path argument', async () => {
      const absolute = nodePath.join(workDir, '.claw/grants.json');
      expect(await evaluate('read_file', { path: absolute })).toMatchObject({ action: 'deny', reason: expect.stringContaining(stateReason) as unknown });
      expect(await evaluate('my_tool', { path: '.claw/grants.json' }, 'safe')).toEqual({
        action: 'deny',
        reason: `my_tool may not use .claw/grants.json: ${stateReason}`,
      });
    });

    it('denies reading state through a symlink elsewhere in the workspace', async () => {
      await symlink('.claw/grants.json', nodePath.join(workDir, 'notes.txt'));
      await symlink(nodePath.join(workDir, 'sub/.claw'), nodePath.join(workDir, 'docs'));
      await symlink('.claw/config.json', nodePath.join(workDir, 'settings.json'));
      expect(await evaluate('read_file', { path: 'notes.txt' })).toEqual({ action: 'deny', reason: `read_file may not read notes.txt: ${stateReason}` });
      expect(await evaluate('read_file', { path: 'docs/grants.json' })).toMatchObject({ action: 'deny' });
      expect(await evaluate('read_file', { path: 'settings.json' })).toEqual({ action: 'allow' });
    });

    it('denies writing into sub/.claw/', async () => {
      for (const path of ['sub/.claw/grants.json', 'sub/.claw/new.json', 'sub/.claw/config.json']) {
        expect(await evaluate('write_file', { path, content: '{}' })).toMatchObject({ action: 'deny' });
        expect(await evaluate('edit_file', { path, old_string: 'a', new_string: 'b' })).toMatchObject({ action: 'deny' });
      }
    });

    it.each(['.env', '.env.local', 'config/.env.production', '.ENV', 'new/.env.test'])('denies %s to every file tool', async (path) => {
      for (const toolName of ['read_file', 'write_file', 'edit_file']) {
        const verdict = await evaluate(toolName, { path, content: 'x', old_string: 'a', new_string: 'b' });
        expect(verdict).toEqual({ action: 'deny', reason: expect.stringContaining('.env files hold secrets') as unknown });
      }
    });

    it('says why a .env file is refused and how it could be allowed', async () => {
      expect(await evaluate('read_file', { path: '.env' })).toEqual({
        action: 'deny',
        reason: 'read_file may not read .env: .env files hold secrets (keys, passwords, tokens) that are not for the model; templates such as .env.example are fine. The user can allow this file in claw\'s settings.',
      });
    });

    it.each(['.env.example', '.env.sample', '.env.template', '.env.dist', 'web/.env.local.example', 'tools/.env/lib/site.py', '.envrc'])(
      'lets %s through (a template, or not an env file)',
      async (path) => {
        expect(await evaluate('read_file', { path })).toEqual({ action: 'allow' });
        expect(await evaluate('write_file', { path, content: 'x' })).toMatchObject({ action: 'ask' });
      },
    );

    it('denies a .env file reached through a symlink, and a template name that links to one', async () => {
      await symlink('.env', nodePath.join(workDir, 'vars.txt'));
      await symlink('.env.local', nodePath.join(workDir, 'web.env.example'));
      expect(await evaluate('read_file', { path: 'vars.txt' })).toMatchObject({ action: 'deny' });
      expect(await evaluate('read_file', { path: 'web.env.example' })).toMatchObject({ action: 'deny' });
    });

    it('allowFiles lifts the .env denial for the files it covers, and only those', async () => {
      const allowing = new DefaultPolicy({ allowFiles: ['.env.local'] });
      const judge = (toolName: string, path: string) =>
        allowing.evaluate(callRequest({ toolName, args: { path, content: 'x' }, workDir }));
      expect(await judge('read_file', '.env.local')).toEqual({ action: 'allow' });
      expect(await judge('read_file', './.env.local')).toEqual({ action: 'allow' });
      expect(await judge('write_file', '.env.local')).toEqual({ action: 'ask', reason: 'write_file will write .env.local' });
      for (const path of ['.env', 'sub/.env.local', 'config/.env.production', '.env.local.bak']) {
        expect(await judge('read_file', path)).toMatchObject({ action: 'deny' });
      }
    });

    it('allowFiles patterns: * within a name, ** across folders; a link must be covered where it leads too', async () => {
      const allowing = new DefaultPolicy({ allowFiles: ['config/.env.*', '**/.env.test'] });
      const judge = (path: string) => allowing.evaluate(callRequest({ toolName: 'read_file', args: { path }, workDir }));
      expect(await judge('config/.env.production')).toEqual({ action: 'allow' });
      expect(await judge('.env.test')).toEqual({ action: 'allow' });
      expect(await judge('a/b/.env.test')).toEqual({ action: 'allow' });
      expect(await judge('config/sub/.env.production')).toMatchObject({ action: 'deny' });
      expect(await judge('.env.production')).toMatchObject({ action: 'deny' });
      await symlink('../.env', nodePath.join(workDir, 'config/.env.dev'));
      expect(await judge('config/.env.dev')).toMatchObject({ action: 'deny' });
    });

    it('allowFiles never lifts the denial of claw\'s state', async () => {
      const allowing = new DefaultPolicy({ allowFiles: ['**', '.claw/grants.json', '**/.env'] });
      expect(await allowing.evaluate(callRequest({ toolName: 'read_file', args: { path: '.claw/grants.json' }, workDir }))).toMatchObject({ action: 'deny' });
      expect(await allowing.evaluate(callRequest({ toolName: 'read_file', args: { path: 'sub/.env' }, workDir }))).toEqual({ action: 'allow' });
    });

    it.each([[''], ['/abs/.env'], ['../.env'], ['a//.env'], ['a/./.env'], [42]])('refuses the allowFiles pattern %j', (pattern) => {
      expect(() => new DefaultPolicy({ allowFiles: [pattern as string] })).toThrow(expect.objectContaining({ code: 'invalid_policy_options' }));
    });
  });

  describe('the user\'s claw folders (privateFolders, TRUST-4)', () => {
    const reason = 'it is in your own claw folder (your settings, the workspaces you trust, servers\' tokens), which is not for the model';
    // The workspace is the home folder: its .config/claw and .local/state/claw are the user's.
    const policy = () => new DefaultPolicy({
      privateFolders: [nodePath.join(workDir, '.config/claw'), nodePath.join(workDir, '.local/state/claw')],
    });
    const judge = (toolName: string, path: string) =>
      policy().evaluate(callRequest({ toolName, args: { path, content: '{}', old_string: 'a', new_string: 'b' }, workDir }));

    it('denies reading and writing in them, existing or not yet', async () => {
      await mkdir(nodePath.join(workDir, '.config/claw'), { recursive: true });
      await writeFile(nodePath.join(workDir, '.config/claw/trusted.json'), '{}');
      for (const toolName of ['read_file', 'write_file', 'edit_file']) {
        expect(await judge(toolName, '.config/claw/trusted.json')).toMatchObject({ action: 'deny', reason: expect.stringContaining(reason) as unknown });
        expect(await judge(toolName, '.config/claw/config.json')).toMatchObject({ action: 'deny' });
        expect(await judge(toolName, '.local/state/claw/servers/x.json')).toMatchObject({ action: 'deny' });
      }
      expect(await judge('read_file', '.config/claw')).toEqual({ action: 'deny', reason: `read_file may not read .config/claw: ${reason}` });
    });

    it('denies them through a symlink elsewhere in the workspace', async () => {
      await mkdir(nodePath.join(workDir, '.config/claw'), { recursive: true });
      await writeFile(nodePath.join(workDir, '.config/claw/trusted.json'), '{}');
      await symlink(nodePath.join(workDir, '.config'), nodePath.join(workDir, 'conf'));
      expect(await judge('read_file', 'conf/claw/trusted.json')).toMatchObject({ action: 'deny' });
      expect(await judge('write_file', 'conf/claw/config.json')).toMatchObject({ action: 'deny' });
    });

    it('leaves the rest of the workspace alone', async () => {
      await mkdir(nodePath.join(workDir, '.config/other'), { recursive: true });
      expect(await judge('read_file', '.config/other/settings.json')).toEqual({ action: 'allow' });
      expect(await judge('read_file', '.config/claw-notes.md')).toEqual({ action: 'allow' });
      expect(await evaluate('read_file', { path: '.config/claw/trusted.json' })).toEqual({ action: 'allow' });
    });

    it.each([['relative/claw'], [''], [7]])('refuses the privateFolders entry %j', (folder) => {
      expect(() => new DefaultPolicy({ privateFolders: [folder as string] })).toThrow(expect.objectContaining({ code: 'invalid_policy_options' }));
    });
  });

  describe('bash', () => {
    it('denies a destructive command without asking', async () => {
      expect(await evaluate('bash', { command: 'rm -rf /' })).toEqual({
        action: 'deny',
        reason: 'the command is destructive: recursive rm of the file-system root (/)',
      });
    });

    it.each(['cat /etc/passwd', 'cd ..', 'ls ../../'])('denies %s, which reaches outside the workspace', async (command) => {
      expect(await evaluate('bash', { command })).toEqual({
        action: 'deny',
        reason: expect.stringMatching(/^the command tries to reach a path outside the workspace: /) as unknown,
      });
    });

    it('denies a call without a command', async () => {
      expect(await evaluate('bash', {})).toEqual({ action: 'deny', reason: expect.stringContaining('bash needs a command') as unknown });
      expect(await evaluate('bash', { command: '  ' })).toMatchObject({ action: 'deny' });
    });

    it('asks a human, saying bash is not isolated, by default', async () => {
      const verdict = await evaluate('bash', { command: 'npm test' });
      expect(verdict).toEqual({
        action: 'ask',
        reason: expect.stringMatching(/^bash will run: npm test\nbash is NOT isolated on this machine/) as unknown,
        requireHuman: true,
      });
    });

    it('asks without requiring a human when bash is isolated', async () => {
      const isolated = new DefaultPolicy({ bashIsolated: true });
      expect(await isolated.evaluate(callRequest({ toolName: 'bash', args: { command: 'go test ./...' }, workDir }))).toEqual({
        action: 'ask',
        reason: 'bash will run: go test ./...',
      });
    });

    it('asks the isolation probe only when a bash call needs it, and only once', async () => {
      let probes = 0;
      const policy = new DefaultPolicy({
        bashIsolated: () => {
          probes += 1;
          return Promise.resolve(false);
        },
      });
      const write = callRequest({ toolName: 'write_file', args: { path: 'a.txt', content: 'x' }, workDir });
      expect(await policy.evaluate(write)).toMatchObject({ action: 'ask' });
      expect(probes).toBe(0);
      const bash = callRequest({ toolName: 'bash', args: { command: 'npm test' }, workDir });
      expect(await policy.evaluate(bash)).toMatchObject({ action: 'ask', requireHuman: true });
      expect(await policy.evaluate(bash)).toMatchObject({ action: 'ask', requireHuman: true });
      expect(probes).toBe(1);
    });
  });
});
