import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FakeOpenAIServer } from '@claw/testing/node';
import { afterEach, describe, expect, it } from 'vitest';
import { ClawProcess, cleanUp, eventually, messagesOf, modelEnv, processesWith, tempDir } from './helpers.js';

let server: FakeOpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const pid of await processesWith(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await cleanUp();
});

const marker = `sleep 30.${process.pid}7`;

describe('a session killed mid-tool (SES-7, SES-8, ENG-10)', () => {
  it('SIGKILL while bash runs; the next run tells the model "started, outcome unknown", never re-runs it, and completes', async () => {
    server = await FakeOpenAIServer.start({
      turns: [
        // First process: a long bash call, during which it is killed.
        {
          toolCalls: [{ id: 'call_sleep', name: 'bash', arguments: JSON.stringify({ command: `echo started >> starts.log; ${marker}` }) }],
        },
        // Second process, same session: the model answers at once.
        { text: 'I will check before repeating it.' },
      ],
    });
    const workDir = await tempDir();
    const args = ['--workdir', workDir, '--session', 'crashy', '--approval', 'allow', '--output', 'stream-json'];
    // With bash isolated (CI installs bubblewrap), --approval allow runs it unattended.
    const first = ClawProcess.start(['-p', 'sleep for a while', ...args], { env: modelEnv(server.baseURL) });
    first.child.stdin?.end();
    const started = await eventually(async () => existsSync(path.join(workDir, 'starts.log')), 15_000);
    expect(started, `the tool never started\n${first.stdout}\n${first.stderr}`).toBe(true);
    first.child.kill('SIGKILL');
    await first.exited;
    // The killed process left its lock behind (RT-5); the next run takes it over.
    const lock = path.join(workDir, '.claw', 'sessions', 'crashy.lock');
    expect(JSON.parse(await readFile(lock, 'utf8'))).toMatchObject({ pid: first.child.pid });

    const second = await ClawProcess.run(['-p', 'what happened?', ...args], { env: modelEnv(server.baseURL) });
    expect(second.status, second.stderr).toBe(0);
    expect(second.stderr).toContain('bash call_sleep: started, outcome unknown');
    expect(existsSync(lock)).toBe(false);

    // The request of the second run carries the Observation paired with that call.
    type WireMessage = { role: string; content: unknown; tool_call_id?: string; tool_calls?: Array<{ id: string }> };
    const messages = messagesOf(server.requests[1]) as WireMessage[];
    const assistant = messages.findIndex((message) => message.tool_calls?.some((call) => call.id === 'call_sleep') === true);
    expect(assistant).toBeGreaterThan(0);
    expect(messages[assistant + 1]).toMatchObject({
      role: 'tool',
      tool_call_id: 'call_sleep',
      content: expect.stringContaining('started, outcome unknown') as unknown,
    });
    expect(messages.at(-1)).toMatchObject({ role: 'user', content: 'what happened?' });
    // The sleep was not started again.
    expect((await readFile(path.join(workDir, 'starts.log'), 'utf8')).trim().split('\n')).toEqual(['started']);
    expect(server.requests).toHaveLength(2);

    // The REPL lists the session with its last activity.
    const repl = ClawProcess.start(['--workdir', workDir, '--approval', 'deny'], { env: modelEnv(server.baseURL) });
    await repl.waitFor('claw> ');
    repl.send('/sessions');
    await repl.waitFor('crashy');
    repl.send('/exit');
    expect(await repl.exited, repl.stderr).toBe(0);
    expect(repl.stdout).toMatch(/ {2}crashy +last active \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ, \d+ messages/);
  });
});

describe('piped REPL input', () => {
  it('a command that prints finishes before the end of input ends the REPL', async () => {
    const workDir = await tempDir();
    const result = await ClawProcess.run(['--workdir', workDir, '--approval', 'deny'], {
      env: modelEnv('http://127.0.0.1:9/v1'),
      input: '/sessions\n/help\n',
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/\* default +last active .*, 0 messages, 0 tokens\nclaw> \nCommands:/);
    expect(result.stdout).toContain('/sessions   list this workspace');
  });

  it('/sessions names a session file it cannot read, as claw sessions does', async () => {
    const workDir = await tempDir();
    const folder = path.join(workDir, '.claw', 'sessions');
    await mkdir(folder, { recursive: true });
    await writeFile(path.join(folder, 'broken.jsonl'), 'not a record{\n');
    const result = await ClawProcess.run(['--workdir', workDir, '--approval', 'deny'], {
      env: modelEnv('http://127.0.0.1:9/v1'),
      input: '/sessions\n',
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      `! broken cannot be read: The session file ${path.join(folder, 'broken.jsonl')} is corrupt at line 1`,
    );
  });
});
