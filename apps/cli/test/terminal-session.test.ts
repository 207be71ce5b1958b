import { PassThrough } from 'node:stream';
import { RuntimeClosedError, RuntimeFactory, resolveSettings } from '@claw/runtime';
import { ScriptedProvider } from '@claw/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Output } from '../src/output.js';
import { createStyle } from '../src/style.js';
import { TerminalSession } from '../src/terminal-session.js';
import { cleanUp, eventually, tempDir } from './helpers.js';

afterEach(cleanUp);

async function openSession(provider: ScriptedProvider) {
  const workDir = await tempDir();
  const settings = await resolveSettings({ workDir, overrides: { approval: 'ask' }, env: {} });
  const factory = new RuntimeFactory({ settings, provider });
  const input = new PassThrough();
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
  return { factory, input, session, output: () => text };
}

describe('TerminalSession (CLI-3)', () => {
  it('runs the REPL over its runtime; the end of input ends it with 0; close() is idempotent and closes the runtime', async () => {
    const { factory, input, session, output } = await openSession(new ScriptedProvider([{ text: 'hi there' }]));
    const running = session.run();
    input.write('hello\n');
    expect(await eventually(async () => output().split('claw> ').length === 3)).toBe(true);
    expect(output()).toBe('claw> \nhi there\nclaw> ');
    input.end();
    expect(await running).toBe(0);
    await Promise.all([session.close(), session.close()]);
    await session.close();
    expect(() => session.runtime.start('again')).toThrow(RuntimeClosedError);
    await factory.close();
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
