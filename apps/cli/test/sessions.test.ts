import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FakeOpenAIServer } from '@claw/testing/node';
import { afterEach, describe, expect, it } from 'vitest';
import { ClawProcess, cleanUp, modelEnv, tempDir } from './helpers.js';

let server: FakeOpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
  await cleanUp();
});

describe('claw sessions (CLI-7)', () => {
  it('lists the saved sessions, most recent first, from --workdir or the current folder', async () => {
    server = await FakeOpenAIServer.start({ turns: [{ text: 'first answer' }, { text: 'second answer' }] });
    const workDir = await tempDir();
    for (const session of ['alpha', 'beta']) {
      const run = await ClawProcess.run(
        ['-p', `hello ${session}`, '--workdir', workDir, '--session', session],
        { env: modelEnv(server.baseURL) },
      );
      expect(run.status, run.stderr).toBe(0);
    }
    const listed = await ClawProcess.run(['sessions', '--workdir', workDir]);
    expect(listed.status, listed.stderr).toBe(0);
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(
      `sessions in ${path.join(workDir, '.claw', 'sessions')}, most recent first ` +
      '(resume one with claw --session <id>):',
    );
    // beta ran last; each holds its prompt and the answer.
    expect(lines.slice(1).map((line) => line.trim().split(/\s+/)[0])).toEqual(['beta', 'alpha']);
    // Each ends with its title: the first line of its first prompt.
    expect(lines[1]).toMatch(/^ {2}beta +last active \S+ \S+Z, 2 messages, \d+ tokens: "hello beta"$/);
    expect(lines[2]).toMatch(/^ {2}alpha +last active \S+ \S+Z, 2 messages, \d+ tokens: "hello alpha"$/);
    const here = await ClawProcess.run(['sessions'], { cwd: workDir });
    expect(here.stdout).toBe(listed.stdout);
  });

  it('says where sessions go when there is none yet, and names a damaged file instead of hiding it', async () => {
    const workDir = await tempDir();
    const folder = path.join(workDir, '.claw', 'sessions');
    const none = await ClawProcess.run(['sessions', '--workdir', workDir]);
    expect(none.status).toBe(0);
    expect(none.stdout).toBe(`no saved sessions in ${folder} yet; a task (claw, claw -p) saves its session there\n`);

    await mkdir(folder, { recursive: true });
    await writeFile(path.join(folder, 'broken.jsonl'), 'not a record{\n');
    // An empty file is a session not written yet (SES-3), not a damaged one.
    await writeFile(path.join(folder, 'empty.jsonl'), '');
    const damaged = await ClawProcess.run(['sessions', '--workdir', workDir]);
    expect(damaged.status).toBe(0);
    expect(damaged.stdout).toContain(`no saved sessions in ${folder} yet`);
    expect(damaged.stdout).toContain(
      `! broken cannot be read: The session file ${path.join(folder, 'broken.jsonl')} is corrupt at line 1`,
    );
    expect(damaged.stdout).not.toContain('empty.jsonl');
  });

  it('usage errors exit 2 and say what to do; --help and an unknown command name it', async () => {
    const cases: Array<[string[], string]> = [
      [['sessions', 'alpha'], 'unexpected argument "alpha" after `claw sessions`'],
      [['sessions', '--session', 'alpha'], '`claw sessions` takes only --workdir, not --session'],
      [['sessions', '--workdir', '/definitely/not/here'], 'the workspace folder /definitely/not/here does not exist'],
    ];
    for (const [args, message] of cases) {
      const result = await ClawProcess.run(args);
      expect(result.status, args.join(' ')).toBe(2);
      expect(result.stderr).toContain(message);
      expect(result.stdout).toBe('');
    }
    const help = await ClawProcess.run(['--help']);
    expect(help.stdout).toMatch(/^ {2}claw sessions \[--workdir <dir>\] +the workspace's saved sessions/m);
    const unknown = await ClawProcess.run(['sesions']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain(
      'the commands are `claw demo`, `claw sessions`, `claw mcp list`, `claw trust` and `claw acp`',
    );
  });
});
