import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { RuntimeClosedError, RuntimeFactory, resolveSettings } from '@claw/runtime';
import type { Tool } from '@claw/core';
import { ScriptedProvider } from '@claw/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Output } from '../src/output.js';
import { createStyle } from '../src/style.js';
import { historyFile } from '../src/history.js';
import { TerminalSession } from '../src/terminal-session.js';
import { askingWhileCheckingScript, checkLaterTool, cleanUp, eventually, tempDir } from './helpers.js';

afterEach(async () => {
  vi.useRealTimers();
  await cleanUp();
});

/** Lets I/O and other work go on (with fake timers on) until `check` holds, for up to 10 s. */
async function settleUntil(check: () => boolean): Promise<void> {
  // `performance.now()` is not faked: the deadline is real time.
  const deadline = performance.now() + 10_000;
  while (!check() && performance.now() < deadline) {
    await new Promise((resolve) => setImmediate(resolve));
  }
  expect(check()).toBe(true);
}

async function openSession(
  provider: ScriptedProvider,
  tools: readonly Tool[] = [],
  options: { terminal?: boolean; workDir?: string } = {},
) {
  const workDir = options.workDir ?? await tempDir();
  const settings = await resolveSettings({ workDir, overrides: { approval: 'ask' }, env: {} });
  const factory = new RuntimeFactory({ settings, provider, tools });
  // On a terminal, readline reads keys (a paste's marks among them) in raw mode.
  const terminal = options.terminal === true ? { isTTY: true, setRawMode: () => undefined } : {};
  const input = Object.assign(new PassThrough(), terminal);
  const stdout = new PassThrough();
  let text = '';
  stdout.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk;
  });
  const session = await TerminalSession.create({
    factory,
    workDir,
    sessionId: 'default',
    input,
    echo: stdout,
    output: new Output(stdout),
    style: createStyle(false),
  });
  return { factory, input, session, workDir, output: () => text };
}

/** Text as a terminal in bracketed-paste mode sends it when it is pasted. */
const pasted = (text: string): string => `\x1b[200~${text}\x1b[201~`;

describe('TerminalSession (CLI-3)', () => {
  it('runs the REPL over its runtime; the end of input ends it with 0; close() is idempotent and closes the runtime', async () => {
    const { factory, input, session, output } = await openSession(new ScriptedProvider([{ text: 'hi there' }]));
    const running = session.run();
    input.write('hello\n');
    expect(await eventually(async () => output().split('claw> ').length === 3)).toBe(true);
    // The answer, then what the task did.
    expect(output()).toMatch(/^claw> \nhi there\n1 model call · 0 tool calls · 0 tokens · cost unpriced · \d+\.\d s\nclaw> $/);
    input.end();
    expect(await running).toBe(0);
    await Promise.all([session.close(), session.close()]);
    await session.close();
    expect(() => session.runtime.start('again')).toThrow(RuntimeClosedError);
    await factory.close();
  });

  it('a model silent for 5 s: the REPL says it is waiting for it, and no more once the task is canceled', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const provider = new ScriptedProvider([{ text: 'too late', delayMs: 60_000 }]);
    const { factory, input, session, output } = await openSession(provider);
    const running = session.run();
    input.write('hello\n');
    await settleUntil(() => provider.calls.length === 1);
    await vi.advanceTimersByTimeAsync(5_000);
    const waiting = () => output().split('\n').filter((line) => line.includes('waiting for the model'));
    await settleUntil(() => waiting().length === 1);
    expect(waiting()).toEqual(['… waiting for the model: 5 s so far']);
    session.interrupt('SIGINT');
    await settleUntil(() => output().includes('✗ canceled'));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(waiting()).toHaveLength(1);
    input.end();
    expect(await running).toBe(0);
    await session.close();
    await factory.close();
  });

  it('a question pushed up by the lines of another call of the same reply is said again under them', async () => {
    const provider = askingWhileCheckingScript();
    let questionShown = (): boolean => false;
    const checkLater = checkLaterTool(() => questionShown());
    const { factory, input, session, output } = await openSession(provider, [checkLater]);
    questionShown = () => output().includes('[n] deny > ');
    const running = session.run();
    input.write('write and check\n');
    expect(await eventually(async () => output().includes('✓ checked'))).toBe(true);
    // The check's result came after the question: the question is said again below it.
    expect(output().slice(output().indexOf('✓ checked'))).toBe(
      '✓ checked\n  still asking: approve write_file notes.txt? [y] allow once  [a] allow for this session  [n] deny > ',
    );
    input.write('y\n');
    expect(await eventually(async () => output().includes('done'))).toBe(true);
    input.end();
    expect(await running).toBe(0);
    await session.close();
    await factory.close();
  });

  it('on a terminal, pasted lines are one task, sent with Enter; pasted text never answers a question, typed text does', async () => {
    const provider = new ScriptedProvider([
      { toolCalls: [{ id: 'call_write', name: 'write_file', arguments: { path: 'notes.txt', content: 'hi\n' } }] },
      { text: 'written' },
    ]);
    const { factory, input, session, workDir, output } = await openSession(provider, [], { terminal: true });
    const running = session.run();
    input.write(pasted('write notes.txt, given this error:\rTypeError: x is undefined\r'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(provider.calls).toHaveLength(0);
    input.write('\r');
    expect(await eventually(async () => output().includes('[n] deny > '))).toBe(true);
    const prompts = provider.calls[0]?.request.messages.filter((message) => message.role === 'user');
    expect(prompts?.map((message) => message.content)).toEqual(['write notes.txt, given this error:\nTypeError: x is undefined']);

    // A paste that says yes is no answer: the question is asked again, and nothing was written.
    input.write(pasted('y\r'));
    input.write('\r');
    expect(await eventually(async () => output().includes('pasted text does not answer a question'))).toBe(true);
    expect(output().slice(output().indexOf('pasted text does not answer'))).toContain('answer y, a or n');
    expect(existsSync(path.join(workDir, 'notes.txt'))).toBe(false);
    input.write('y\r');
    expect(await eventually(async () => output().includes('written'))).toBe(true);
    expect(await readFile(path.join(workDir, 'notes.txt'), 'utf8')).toBe('hi\n');
    input.end();
    expect(await running).toBe(0);
    await session.close();
    await factory.close();
  });

  it('on a terminal, Ctrl-C while idle clears what is being typed (a line, or lines under way) and asks afresh; with nothing typed it quits with 130', async () => {
    const provider = new ScriptedProvider([{ text: 'hi' }]);
    const { factory, input, session, output } = await openSession(provider, [], { terminal: true });
    const running = session.run();
    let ended = false;
    void running.then(() => {
      ended = true;
    });
    input.write('half a thought');
    input.write('\x03');
    input.write('first of two \\\r');
    input.write('\x03');
    input.write('hello\r');
    expect(await eventually(async () => output().includes('1 model call'))).toBe(true);
    expect(ended).toBe(false);
    const prompts = provider.calls[0]?.request.messages.filter((message) => message.role === 'user');
    expect(prompts?.map((message) => message.content)).toEqual(['hello']);
    expect(output()).toContain('half a thought^C');
    input.write('\x03');
    expect(await running).toBe(130);
    await session.close();
    await factory.close();
  });

  it('on a terminal, what started a task or ran a command comes back with up-arrow in the next run; pasted lines and /exit are not kept', async () => {
    const provider = new ScriptedProvider([{ text: 'one' }, { text: 'two' }]);
    const first = await openSession(provider, [], { terminal: true });
    const running = first.session.run();
    first.input.write('first task\r');
    expect(await eventually(async () => first.output().includes('1 model call'))).toBe(true);
    first.input.write(pasted('a pasted\rtask'));
    first.input.write('\x03');
    first.input.write('/help\r');
    expect(await eventually(async () => first.output().includes('Commands:'))).toBe(true);
    first.input.write('/exit\r');
    expect(await running).toBe(0);
    await first.session.close();
    await first.factory.close();
    const kept = await readFile(historyFile(first.workDir), 'utf8');
    expect(kept.trimEnd().split('\n').map((line) => JSON.parse(line) as string)).toEqual(['first task', '/help']);

    const second = await openSession(provider, [], { terminal: true, workDir: first.workDir });
    const again = second.session.run();
    // Up-arrow twice: /help, then the task.
    second.input.write('\x1b[A\x1b[A\r');
    expect(await eventually(async () => second.output().includes('1 model call'))).toBe(true);
    const prompts = provider.calls[1]?.request.messages.filter((message) => message.role === 'user').map((message) => message.content);
    expect(prompts?.at(-1)).toBe('first task');
    second.input.end();
    expect(await again).toBe(0);
    await second.session.close();
    await second.factory.close();
  });

  it('an interrupt while idle ends the REPL with 130; while a task runs it cancels the task', async () => {
    const { factory, input, session, output } = await openSession(
      new ScriptedProvider([{ text: 'never', delayMs: 10_000 }, { text: 'second' }]),
    );
    const running = session.run();
    input.write('wait forever\n');
    expect(await eventually(async () => session.runtime.activeTask !== undefined)).toBe(true);
    session.interrupt('SIGINT');
    expect(await eventually(async () => output().includes('✗ canceled'))).toBe(true);
    expect(await eventually(async () => session.runtime.activeTask === undefined)).toBe(true);
    session.interrupt('SIGINT');
    expect(await running).toBe(130);
    await session.close();
    await factory.close();
  });
});
