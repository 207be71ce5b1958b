import { PassThrough } from 'node:stream';
import { RuntimeFactory, resolveSettings } from '@claw/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { Interrupts } from '../src/interrupts.js';
import { runOneShot } from '../src/one-shot.js';
import { Output } from '../src/output.js';
import { createStyle } from '../src/style.js';
import { askingWhileCheckingScript, checkLaterTool, cleanUp, eventually, tempDir } from './helpers.js';

afterEach(cleanUp);

describe('claw -p asking on a terminal (mode ask)', () => {
  it('a question pushed up by the lines of another call of the same reply is said again under them', async () => {
    const provider = askingWhileCheckingScript();
    const stdoutStream = new PassThrough();
    const stderrStream = new PassThrough();
    const text = { stdout: '', stderr: '' };
    stdoutStream.setEncoding('utf8').on('data', (chunk: string) => void (text.stdout += chunk));
    stderrStream.setEncoding('utf8').on('data', (chunk: string) => void (text.stderr += chunk));
    const checkLater = checkLaterTool(() => text.stderr.includes('[n] deny > '));
    const workDir = await tempDir();
    const settings = await resolveSettings({ workDir, overrides: { approval: 'ask' }, env: {} });
    const factory = new RuntimeFactory({ settings, provider, tools: [checkLater] });
    const terminal = new PassThrough();
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
      terminalInput: terminal,
      mode: 'ask',
      interrupts: new Interrupts(() => undefined),
      tuneJit: false,
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
});
