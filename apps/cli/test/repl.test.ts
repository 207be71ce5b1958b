import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { FakeOpenAIServer } from '@claw/testing/node';
import { afterEach, describe, expect, it } from 'vitest';
import { ClawProcess, cleanUp, eventually, messagesOf, modelEnv, processesWith, tempDir } from './helpers.js';

let server: FakeOpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
  await cleanUp();
});

const prompt = 'claw> ';
const question = '[n] deny > ';

describe('the REPL over pipes (CLI-1, CLI-3)', () => {
  it('answers approvals from its own input: n denies, a allows for the session, the same call then does not ask; /clear; /exit', async () => {
    const write = { toolCalls: [{ name: 'write_file', arguments: JSON.stringify({ path: 'notes.txt', content: 'v1\n' }) }] };
    server = await FakeOpenAIServer.start({
      turns: [write, { text: 'ok after deny' }, write, { text: 'ok after allow' }, write, { text: 'ok third' }, { text: 'fresh start' }],
    });
    const workDir = await tempDir();
    const file = path.join(workDir, 'notes.txt');
    const claw = ClawProcess.start(['--workdir', workDir, '--approval', 'ask'], { env: modelEnv(server.baseURL) });
    await claw.waitFor(prompt);
    expect(claw.stdout).toMatch(/bash isolation: /);

    claw.send('write the notes');
    await claw.waitFor(question);
    expect(claw.stdout).toContain('approve write_file notes.txt');
    expect(claw.stdout).toContain('write_file will write notes.txt\n    + v1\n');
    expect(claw.count(prompt)).toBe(1); // no prompt while the task runs
    claw.send('maybe');
    await claw.waitFor('answer y, a or n');
    claw.send('n');
    await claw.waitFor('ok after deny');
    await claw.waitFor(prompt, 2);
    expect(claw.stdout).toContain('denied');
    expect(claw.stdout).toMatch(/✗ permission denied: the user denied it/);
    expect(existsSync(file)).toBe(false);

    claw.send('write them again');
    await claw.waitFor(question, 3); // the question, the re-ask, and this one
    claw.send('a');
    await claw.waitFor('ok after allow');
    await claw.waitFor(prompt, 3);
    expect(claw.stdout).toContain('allowed for this session');
    expect(await readFile(file, 'utf8')).toBe('v1\n');

    await rm(file);
    claw.send('and once more');
    await claw.waitFor('ok third');
    await claw.waitFor(prompt, 4);
    expect(claw.count(question)).toBe(3); // the grant answered: no new question
    expect(await readFile(file, 'utf8')).toBe('v1\n');

    claw.send('/clear');
    await claw.waitFor('the conversation was cleared');
    await claw.waitFor(prompt, 5);
    claw.send('start over');
    await claw.waitFor('fresh start');
    await claw.waitFor(prompt, 6);
    expect(messagesOf(server.requests[6]).map((message) => message.content)).not.toContain('write the notes');

    claw.send('/exit');
    expect(await claw.exited).toBe(0);
  });

  it('/help, and a line typed while a task runs is not taken as a new task', async () => {
    server = await FakeOpenAIServer.start({ turns: [{ text: 'slow answer', delayMs: 800 }] });
    const workDir = await tempDir();
    const claw = ClawProcess.start(['--workdir', workDir, '--approval', 'ask'], { env: modelEnv(server.baseURL) });
    await claw.waitFor(prompt);
    claw.send('/help');
    await claw.waitFor('/clear');
    await claw.waitFor(prompt, 2);
    claw.send('go slowly');
    await eventually(async () => server?.requests.length === 1);
    claw.send('are you done?');
    await claw.waitFor('a task is running; wait, or press Ctrl-C to cancel it');
    await claw.waitFor('slow answer');
    await claw.waitFor(prompt, 3);
    expect(server.requests).toHaveLength(1);
    claw.child.stdin?.end(); // end of input exits cleanly
    expect(await claw.exited).toBe(0);
  });

  it('SIGINT cancels a running bash command (the process is gone), the next line starts a new task; SIGINT when idle exits 130 (CLI-2)', async () => {
    const marker = `sleep 30.${String(Math.floor(1000 + Math.random() * 9000))}`;
    server = await FakeOpenAIServer.start({
      turns: [
        { toolCalls: [{ name: 'bash', arguments: JSON.stringify({ command: `echo $$ > pid.txt; ${marker}` }) }] },
        { text: 'fresh answer' },
      ],
    });
    const workDir = await tempDir();
    const claw = ClawProcess.start(['--workdir', workDir, '--approval', 'ask'], { env: modelEnv(server.baseURL) });
    await claw.waitFor(prompt);
    claw.send('sleep for a while');
    await claw.waitFor(question);
    claw.send('y');
    expect(await eventually(async () => (await processesWith(marker)).length > 0)).toBe(true);

    claw.child.kill('SIGINT');
    await claw.waitFor('✗ canceled');
    await claw.waitFor(prompt, 2);
    expect(await eventually(async () => (await processesWith(marker)).length === 0, 5000)).toBe(true);

    claw.send('hello again');
    await claw.waitFor('fresh answer');
    await claw.waitFor(prompt, 3);
    const history = messagesOf(server.requests[1]);
    expect(history.at(-1)).toMatchObject({ role: 'user', content: 'hello again' });
    expect(history).toContainEqual(expect.objectContaining({ role: 'tool', content: 'tool call canceled' }));

    claw.child.kill('SIGINT');
    expect(await claw.exited).toBe(130);
  });

  it('SIGINT while an approval is pending cancels the question too; the next line reaches the REPL', async () => {
    const write = { toolCalls: [{ name: 'write_file', arguments: JSON.stringify({ path: 'x.txt', content: 'x' }) }] };
    server = await FakeOpenAIServer.start({ turns: [write, { text: 'second task answer' }] });
    const workDir = await tempDir();
    const claw = ClawProcess.start(['--workdir', workDir, '--approval', 'ask'], { env: modelEnv(server.baseURL) });
    await claw.waitFor(prompt);
    claw.send('write x');
    await claw.waitFor(question);
    claw.child.kill('SIGINT');
    await claw.waitFor('✗ canceled');
    await claw.waitFor(prompt, 2);
    // "y" is now an ordinary prompt, not an answer to a question nobody asks any more.
    claw.send('y');
    await claw.waitFor('second task answer');
    expect(messagesOf(server.requests[1]).at(-1)).toMatchObject({ role: 'user', content: 'y' });
    expect(existsSync(path.join(workDir, 'x.txt'))).toBe(false);
    claw.send('/exit');
    expect(await claw.exited).toBe(0);
  });
});
