import { mkdir, symlink } from 'node:fs/promises';
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

    it('says why .claw/ is protected', async () => {
      expect(await evaluate('write_file', { path: '.claw/grants.json', content: '{}' })).toEqual({
        action: 'deny',
        reason: 'write_file may not change .claw/grants.json: claw keeps grants and sessions in .claw/; tools may not change it',
      });
    });

    it('denies writing into .claw/ through a symlink inside the workspace', async () => {
      await mkdir(nodePath.join(workDir, '.claw'));
      await symlink(nodePath.join(workDir, '.claw'), nodePath.join(workDir, 'state'));
      expect(await evaluate('write_file', { path: 'state/grants.json', content: '{}' })).toEqual({
        action: 'deny',
        reason: expect.stringContaining('claw keeps grants and sessions in .claw/') as unknown,
      });
    });

    it.each(['.clawrc', 'src/.claw/notes.md', '.git/HEAD', '.github/workflows/ci.yml', '.git-hooks/x'])(
      'asks (does not deny) writing %s',
      async (path) => {
        expect(await evaluate('write_file', { path, content: 'x' })).toEqual({ action: 'ask', reason: `write_file will write ${path}` });
      },
    );

    it('lets a safe tool read .claw/', async () => {
      expect(await evaluate('read_file', { path: '.claw/grants.json' })).toEqual({ action: 'allow' });
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
