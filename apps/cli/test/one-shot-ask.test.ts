import { existsSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type { Tool } from '@claw/core';
import { RuntimeFactory, resolveSettings } from '@claw/runtime';
import { ScriptedProvider } from '@claw/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Interrupts } from '../src/interrupts.js';
import { runOneShot } from '../src/one-shot.js';
import { Output } from '../src/output.js';
import { createStyle } from '../src/style.js';
import { askingWhileCheckingScript, checkLaterTool, cleanUp, eventually, tempDir } from './helpers.js';

afterEach(cleanUp);

/** `claw -p <prompt>` in mode ask, its questions asked on `terminal`; what it wrote, as text. */
async function askOnTerminal(options: {
  provider: ScriptedProvider;
  tools?: (text: { stderr: string }) => Tool[];
  terminal: PassThrough;
  beforeStart?: (stderr: Output) => Promise<void>;
}) {
  const stdoutStream = new PassThrough();
  const stderrStream = new PassThrough();
  const text = { stdout: '', stderr: '' };
  stdoutStream.setEncoding('utf8').on('data', (chunk: string) => void (text.stdout += chunk));
  stderrStream.setEncoding('utf8').on('data', (chunk: string) => void (text.stderr += chunk));
  const workDir = await tempDir();
  const settings = await resolveSettings({ workDir, overrides: { approval: 'ask' }, env: {} });
  const factory = new RuntimeFactory({ settings, provider: options.provider, tools: options.tools?.(text) ?? [] });
  const stderr = new Output(stderrStream);
  const style = createStyle(false);
  const status = runOneShot({
    factory,
    workDir,
    sessionId: 'default',
    prompt: 'write and check',
    format: 'text',
    stdout: new Output(stdoutStream),
    stderr,
    activity: stderr,
    activityStyle: style,
    echo: stderrStream,
    style,
    terminalInput: options.terminal,
    mode: 'ask',
    interrupts: new Interrupts(() => undefined),
    tuneJit: false,
    ...(options.beforeStart === undefined
      ? {}
      : { beforeStart: () => options.beforeStart?.(stderr) ?? Promise.resolve() }),
  });
  return { text, status, factory, workDir };
}

describe('claw -p asking on a terminal (mode ask)', () => {
  it('a question pushed up by the lines of another call of the same reply is said again under them', async () => {
    const terminal = new PassThrough();
    const { text, status, factory } = await askOnTerminal({
      provider: askingWhileCheckingScript(),
      tools: (written) => [checkLaterTool(() => written.stderr.includes('[n] deny > '))],
      terminal,
    });
    expect(await eventually(async () => text.stderr.includes('✓ checked'))).toBe(true);
    expect(text.stderr.slice(text.stderr.indexOf('✓ checked'))).toBe(
      '✓ checked\n  still asking: approve write_file notes.txt? [y] allow once  [a] allow for this session  [n] deny > ',
    );
    terminal.write('y\n');
    expect(await status).toBe(0);
    expect(text.stdout).toBe('done\n');
    await factory.close();
  });

  it('pasted text does not answer the question (the terminal marks pastes); a typed answer does', async () => {
    // A terminal: readline reads it key by key, in raw mode.
    const terminal = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => undefined });
    const provider = new ScriptedProvider([
      { toolCalls: [{ id: 'call_write', name: 'write_file', arguments: { path: 'notes.txt', content: 'hi\n' } }] },
      { text: 'as you wish' },
    ]);
    const { text, status, factory, workDir } = await askOnTerminal({ provider, terminal });
    expect(await eventually(async () => text.stderr.includes('[n] deny > '))).toBe(true);
    terminal.write('\x1b[200~y\r\x1b[201~\r');
    expect(await eventually(async () => text.stderr.includes('pasted text does not answer a question'))).toBe(true);
    expect(text.stderr.slice(text.stderr.indexOf('pasted text'))).toContain('answer y, a or n');
    terminal.write('n\r');
    expect(await status).toBe(0);
    expect(text.stdout).toBe('as you wish\n');
    expect(text.stderr).toContain('denied');
    expect(existsSync(path.join(workDir, 'notes.txt'))).toBe(false);
    await factory.close();
  });

  it('notes (how bash runs) are written before the task starts, never in the middle of the model\'s output', async () => {
    const provider = new ScriptedProvider([
      { reasoning: ['thinking it over'], text: 'done', usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 } },
    ]);
    const { text, status, factory } = await askOnTerminal({
      provider,
      terminal: new PassThrough(),
      beforeStart: async (stderr) => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect(provider.calls).toHaveLength(0);
        await stderr.line('bash isolation: a slow note');
      },
    });
    expect(await status).toBe(0);
    const lines = text.stderr.trimEnd().split('\n');
    expect(lines).toEqual([
      'bash isolation: a slow note',
      '  ┊ thinking it over',
      expect.stringMatching(/^1 model call · 0 tool calls · 15 tokens · /),
    ]);
    await factory.close();
  });
});
