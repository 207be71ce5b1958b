import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FakeOpenAIServer } from '@claw/testing/node';
import { afterEach, describe, expect, it } from 'vitest';
import { createStyle } from '../src/style.js';
import { ThinkingView, thinkingLineChars } from '../src/thinking.js';
import { ClawProcess, cleanUp, modelEnv, tempDir } from './helpers.js';

let server: FakeOpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
  await cleanUp();
});

function view(verbose = false) {
  const lines: string[] = [];
  const thinking = new ThinkingView({
    show: async (line) => void lines.push(line),
    style: createStyle(false),
    verbose,
  });
  return { lines, thinking };
}

describe('the model\'s thinking on the terminal (REAL-4)', () => {
  it('shows whole lines as they come, the first three, then says how many more there were', async () => {
    const { lines, thinking } = view();
    await thinking.delta('one\ntw');
    expect(lines).toEqual(['  ┊ one']);
    await thinking.delta('o\n\nthree\nfour\nfive');
    expect(lines).toEqual(['  ┊ one', '  ┊ two', '  ┊ three']);
    expect(thinking.active).toBe(true);
    await thinking.end();
    expect(lines).toEqual(['  ┊ one', '  ┊ two', '  ┊ three', '  ┊ … 2 more lines of thinking (--verbose shows all of it)']);
    expect(thinking.active).toBe(false);
    // The next model call's thinking starts afresh.
    await thinking.delta('again');
    await thinking.end();
    expect(lines.at(-1)).toBe('  ┊ again');
  });

  it('wraps a long line at a space (a model that thinks in one paragraph is seen thinking), all of it with verbose', async () => {
    const { lines, thinking } = view(true);
    const words = Array.from({ length: 60 }, (_, index) => `word${index}`).join(' ');
    await thinking.delta(words);
    expect(lines.length).toBeGreaterThan(2);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(thinkingLineChars + 4);
    await thinking.end();
    expect(lines.map((line) => line.slice(4)).join(' ')).toBe(words);
  });

  it('prints an escape sequence in the thinking as text, never to the terminal', async () => {
    const { lines, thinking } = view();
    await thinking.delta('evil \x1b]0;title\x07 done\n');
    expect(lines.join('')).not.toContain('\x1b');
    expect(lines[0]).toContain('\\x1b');
  });

  it('the REPL: thinking before the answer, /status names the instruction files and the tokens', async () => {
    server = await FakeOpenAIServer.start({
      turns: [{ reasoning: ['I should ', 'say hi.'], text: 'Hi!', usage: { promptTokens: 100, completionTokens: 5, cachedTokens: 60 } }],
    });
    const workDir = await tempDir();
    await writeFile(path.join(workDir, 'AGENTS.md'), 'Say hi.\n');
    const claw = ClawProcess.start(['--workdir', workDir], { env: modelEnv(server.baseURL) });
    await claw.waitFor('claw> ');
    expect(claw.stdout).toContain('instructions: AGENTS.md (8 B)\n');
    claw.send('hello');
    await claw.waitFor('claw> ', 2);
    expect(claw.stdout).toContain('  ┊ I should say hi.\nHi!\n');
    claw.send('/status');
    await claw.waitFor('claw> ', 3);
    const status = claw.stdout.slice(claw.stdout.lastIndexOf('/status') === -1 ? claw.stdout.indexOf('Hi!') : 0);
    expect(status).toMatch(/session default · workspace .+\nmodel .+ · approval deny · max turns 200\n/);
    expect(status).toContain('instructions: AGENTS.md (8 B)');
    expect(status).toMatch(/this session: 2 messages · 105 tokens \(60 cached\) · cost /);
    claw.send('/exit');
    expect(await claw.exited).toBe(0);
  });
});
