import { execFile } from 'node:child_process';
import { mkdir, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { FakeOpenAIServer, type FakeTurn } from '@claw/testing/node';
import { afterEach, describe, expect, it } from 'vitest';
import { ClawProcess, cleanUp, messagesOf, modelEnv, parseEvents, tempDir } from './helpers.js';

// What a real model is sent and what claw makes of what real servers send (REAL-1..REAL-5),
// through the built `claw` and the real `openai` client against the fake server on loopback.

const run = promisify(execFile);
let server: FakeOpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
  await cleanUp();
});

function systemOf(index: number): string {
  const [first] = messagesOf(server?.requests[index]);
  expect(first?.role).toBe('system');
  return typeof first?.content === 'string' ? first.content : '';
}

describe('a real model\'s first request (REAL-1, REAL-2)', () => {
  it('claw -p "hi" from sub/ of a git repository: the system prompt, the environment and every AGENTS.md in order, the same in the next request', async () => {
    server = await FakeOpenAIServer.start({
      turns: [
        { toolCalls: [{ name: 'read_file', arguments: JSON.stringify({ path: 'AGENTS.md' }) }] },
        { text: 'hello' },
      ],
    });
    const root = await realpath(await tempDir('claw-real-'));
    await run('git', ['init', '-q', '-b', 'main', root]);
    await writeFile(path.join(root, 'AGENTS.md'), '# Repository rules\nUse pnpm.\n');
    const sub = path.join(root, 'sub');
    await mkdir(sub);
    await writeFile(path.join(sub, 'AGENTS.md'), '# Sub rules\nTests live in test/.\n');
    const config = await tempDir('claw-real-config-');
    await mkdir(path.join(config, 'claw'));
    await writeFile(path.join(config, 'claw/AGENTS.md'), 'Be terse.\n');

    const result = await ClawProcess.run(['-p', 'hi'], {
      cwd: sub,
      env: { ...modelEnv(server.baseURL), XDG_CONFIG_HOME: config },
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toBe('hello\n');
    // claw says which files it gave the model.
    expect(result.stderr).toContain(
      `instructions: ${path.join(config, 'claw/AGENTS.md')} (10 B), ../AGENTS.md (29 B), AGENTS.md (33 B)`,
    );

    expect(server.requests).toHaveLength(2);
    const system = systemOf(0);
    expect(system).toMatch(/^You are claw, a coding agent\./);
    expect(system).toContain('# How to work');
    expect(system).toContain('- bash: runs one command line');
    expect(system).toContain(`Workspace root: ${sub}\n`);
    expect(system).toMatch(/\nDate: \d{4}-\d{2}-\d{2}\n/);
    expect(system).toContain(`Git: a git repository (root ${root}), on branch main\n`);
    expect(system).toMatch(/\nBash: (isolated \(bubblewrap\)|not isolated)/);
    expect(system).toContain('Approval: deny:');
    const user = system.indexOf(`<instructions path="${path.join(config, 'claw/AGENTS.md')}">\nBe terse.\n</instructions>`);
    const outer = system.indexOf('<instructions path="../AGENTS.md">\n# Repository rules\nUse pnpm.\n</instructions>');
    const inner = system.indexOf('<instructions path="AGENTS.md">\n# Sub rules\nTests live in test/.\n</instructions>');
    expect(user).toBeGreaterThan(system.indexOf('</environment>'));
    expect(outer).toBeGreaterThan(user);
    expect(inner).toBeGreaterThan(outer);
    // Byte-identical in the second request: providers can cache the prefix.
    expect(systemOf(1)).toBe(system);
    expect(messagesOf(server.requests[1]).filter((message) => message.role === 'system')).toHaveLength(1);
  });

  it('--system-prompt-file replaces claw\'s text, --append-system-prompt adds to it; stream-json lists the instructions', async () => {
    server = await FakeOpenAIServer.start({ turns: [{ text: 'ok' }] });
    const workDir = await realpath(await tempDir('claw-real-'));
    await writeFile(path.join(workDir, 'AGENTS.md'), 'rules\n');
    const elsewhere = await tempDir('claw-real-prompt-');
    await writeFile(path.join(elsewhere, 'prompt.md'), 'You are a careful reviewer.\n');
    const result = await ClawProcess.run(
      ['-p', 'hi', '--workdir', workDir, '--output', 'stream-json', '--system-prompt-file', 'prompt.md',
        '--append-system-prompt', 'Answer in French.'],
      { cwd: elsewhere, env: modelEnv(server.baseURL) },
    );
    expect(result.status, result.stderr).toBe(0);
    const system = systemOf(0);
    expect(system).toMatch(/^You are a careful reviewer\.\n\n# Environment\n/);
    expect(system).toContain('<instructions path="AGENTS.md">\nrules\n</instructions>');
    expect(system).toMatch(/\n\nAnswer in French\.$/);
    const opened = parseEvents(result.stdout).find((event) => event.type === 'session_opened');
    expect(opened).toMatchObject({ instructions: [{ path: 'AGENTS.md', bytes: 6 }] });

    const missing = await ClawProcess.run(
      ['-p', 'hi', '--workdir', workDir, '--system-prompt-file', 'nowhere.md'],
      { cwd: elsewhere, env: modelEnv(server.baseURL) },
    );
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain(`the system prompt file ${path.join(elsewhere, 'nowhere.md')} (--system-prompt-file) cannot be read (ENOENT)`);
  });
});

describe('defaults for real tasks (REAL-3)', () => {
  it('a 90-turn task finishes with the default settings', async () => {
    const turns: FakeTurn[] = Array.from({ length: 89 }, (_, index) => ({
      toolCalls: [{ name: 'read_file', arguments: JSON.stringify({ path: `f${index % 3}.txt` }) }],
      usage: { promptTokens: 20_000 + index * 100, completionTokens: 50 },
    }));
    turns.push({ text: 'all read', usage: { promptTokens: 30_000, completionTokens: 10 } });
    server = await FakeOpenAIServer.start({ turns });
    const workDir = await tempDir('claw-real-');
    for (const name of ['f0.txt', 'f1.txt', 'f2.txt']) await writeFile(path.join(workDir, name), name);
    const result = await ClawProcess.run(['-p', 'read them all', '--workdir', workDir, '--output', 'json'], {
      env: modelEnv(server.baseURL),
    });
    expect(result.status, result.stderr).toBe(0);
    // Over 20 turns (the old limit) and over 2,000,000 tokens (ten times the old session budget).
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'completed', answer: 'all read', model_calls: 90, tool_calls: 89 });
    expect(server.requests).toHaveLength(90);
  }, 60_000);
});

describe('reasoning and cached tokens (REAL-4, REAL-5)', () => {
  const reasoning = ['First I look', ' at the files.\nThen', ' I decide.\nLine three.\nLine four.\nLine five.'];

  it('text output: the thinking dimmed on stderr, cut to three lines; the answer alone on stdout; cached tokens in the summary', async () => {
    server = await FakeOpenAIServer.start({
      turns: [
        { reasoning, text: 'The answer.', usage: { promptTokens: 18_000, completionTokens: 204, cachedTokens: 12_800 } },
        { reasoning, text: 'Again.', reasoningField: 'reasoning' },
      ],
    });
    const workDir = await tempDir('claw-real-');
    const result = await ClawProcess.run(['-p', 'think', '--workdir', workDir], { env: modelEnv(server.baseURL) });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toBe('The answer.\n');
    expect(result.stderr).toContain('  ┊ First I look at the files.\n  ┊ Then I decide.\n  ┊ Line three.\n  ┊ … 2 more lines of thinking (--verbose shows all of it)\n');
    expect(result.stderr).not.toContain('Line four.');
    expect(result.stderr).toMatch(/1 model call · 0 tool calls · 18,204 tokens \(12,800 cached\) · cost /);
    // The reasoning was stored with the reply, and is not sent back: a second task.
    const again = await ClawProcess.run(['-p', 'again', '--workdir', workDir, '--verbose'], { env: modelEnv(server.baseURL) });
    expect(again.status, again.stderr).toBe(0);
    expect(again.stderr).toContain('  ┊ Line four.\n  ┊ Line five.\n');
    const second = server.requests[1]?.body as { messages: Array<Record<string, unknown>> };
    const assistant = second.messages.find((message) => message.role === 'assistant');
    expect(assistant).toEqual({ role: 'assistant', content: 'The answer.' });
    expect(JSON.stringify(second)).not.toContain('First I look');
  });

  it('stream-json carries thinking_delta events; json counts cached tokens', async () => {
    server = await FakeOpenAIServer.start({
      turns: [
        { reasoning, text: 'The answer.', usage: { promptTokens: 1000, completionTokens: 20, cachedTokens: 800 } },
        { reasoning: ['hm'], text: 'Done.', usage: { promptTokens: 1000, completionTokens: 20, cachedTokens: 900 } },
      ],
    });
    const workDir = await tempDir('claw-real-');
    const streamed = await ClawProcess.run(['-p', 'think', '--workdir', workDir, '--output', 'stream-json'], {
      env: modelEnv(server.baseURL),
    });
    expect(streamed.status, streamed.stderr).toBe(0);
    const events = parseEvents(streamed.stdout);
    const thoughts = events.flatMap((event) => (event.type === 'thinking_delta' ? [event.content] : []));
    expect(thoughts.join('')).toBe(reasoning.join(''));
    const types = events.map((event) => event.type);
    expect(types.lastIndexOf('thinking_delta')).toBeLessThan(types.indexOf('text_delta'));
    expect(events.find((event) => event.type === 'task_completed')).toMatchObject({ content: 'The answer.' });
    expect(events.find((event) => event.type === 'usage')).toMatchObject({
      call: { prompt_tokens: 1000, completion_tokens: 20, total_tokens: 1020, cached_tokens: 800 },
    });
    const json = await ClawProcess.run(['-p', 'again', '--workdir', workDir, '--output', 'json', '--session', 'other'], {
      env: modelEnv(server.baseURL),
    });
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'completed', answer: 'Done.', tokens: 1020, cached_tokens: 900 });
  });
});
