import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { FakeOpenAIServer } from '@claw/testing/node';
import { afterEach, describe, expect, it } from 'vitest';
import { ClawProcess, cleanUp, eventually, messagesOf, modelEnv, parseEvents, tempDir } from './helpers.js';

let server: FakeOpenAIServer | undefined;

/** Every file and folder under `dir`, relative to it, sorted. */
async function tree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.map(String).sort();
}

afterEach(async () => {
  await server?.close();
  server = undefined;
  await cleanUp();
});

describe('one claw process per session (RT-5)', () => {
  it('a second claw -p on a session in use exits 2 at once naming the holder; the session stays intact', async () => {
    server = await FakeOpenAIServer.start({
      turns: [{ text: 'first answer', delayMs: 3000 }, { text: 'third answer' }],
    });
    const workDir = await tempDir();
    const env = modelEnv(server.baseURL);
    const first = ClawProcess.start(['-p', 'first task', '--workdir', workDir, '--output', 'stream-json'], { env });
    first.child.stdin?.end();
    expect(await eventually(async () => server?.requests.length === 1)).toBe(true);
    const file = path.join(workDir, '.claw', 'sessions', 'default.jsonl');
    const before = await readFile(file, 'utf8');
    const filesBefore = await tree(path.join(workDir, '.claw'));

    const second = await ClawProcess.run(['-p', 'second task', '--workdir', workDir], { env });

    expect(second.status).toBe(2);
    expect(second.stderr).toContain(`Session "default" is in use: process ${first.child.pid} on`);
    expect(second.stderr).toContain('--session <name>');
    expect(second.stdout).toBe('');
    expect(await readFile(file, 'utf8')).toBe(before);
    // It wrote nothing at all: no trace, no audit line, no leftover of its lock attempt.
    expect(await tree(path.join(workDir, '.claw'))).toEqual(filesBefore);
    // The model was never asked for the second task.
    expect(server.requests).toHaveLength(1);

    expect(await first.exited, first.stderr).toBe(0);
    expect(parseEvents(first.stdout).at(-1)).toMatchObject({ type: 'task_completed', content: 'first answer' });
    expect(existsSync(path.join(workDir, '.claw', 'sessions', 'default.lock'))).toBe(false);
    const third = await ClawProcess.run(['-p', 'third task', '--workdir', workDir], { env });
    expect(third.status, third.stderr).toBe(0);
    const sent = messagesOf(server.requests[1]).filter((message) => message.role !== 'system');
    expect(sent.map((message) => message.content)).toEqual(['first task', 'first answer', 'third task']);
  });

  it('another session of the same workspace runs meanwhile', async () => {
    server = await FakeOpenAIServer.start({ turns: [{ text: 'slow', delayMs: 3000 }, { text: 'quick' }] });
    const workDir = await tempDir();
    const env = modelEnv(server.baseURL);
    const first = ClawProcess.start(['-p', 'slow one', '--workdir', workDir], { env });
    first.child.stdin?.end();
    expect(await eventually(async () => server?.requests.length === 1)).toBe(true);
    const other = await ClawProcess.run(['-p', 'quick one', '--workdir', workDir, '--session', 'other'], { env });
    expect(other.status, other.stderr).toBe(0);
    expect(other.stdout).toBe('quick\n');
    expect(await first.exited).toBe(0);
  });
});
