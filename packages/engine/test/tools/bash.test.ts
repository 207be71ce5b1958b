import { existsSync, writeFileSync } from 'node:fs';
import { realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ToolProgress } from '@claw/core';
import { plainCommandSpawner } from '@claw/sandbox';
import { createBashTool } from '../../src/tools/index.js';
import { exists, stillExistsAfter, waitForFile } from '../processes.js';
import { createTempWorkspace, type TempWorkspace } from './workspace.js';

describe('bash', () => {
  let ws: TempWorkspace;
  const started: number[] = [];
  beforeEach(async () => {
    ws = await createTempWorkspace();
  });
  afterEach(async () => {
    // Should a test fail half-way, leave no process behind.
    for (const pid of started.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await ws.remove();
  });

  it('is dangerous and takes one command argument', () => {
    const tool = createBashTool();
    expect(tool.risk).toBe('dangerous');
    expect(tool.definition.name).toBe('bash');
    expect(tool.definition.parameters.required).toEqual(['command']);
    // Real builds and test runs take minutes (REAL-3): 2 minutes unless the call asks for more.
    expect(tool.definition.description).toContain('120s');
    expect(tool.definition.description).toContain('timeout_ms');
    expect(tool.definition.parameters.properties).toMatchObject({
      timeout_ms: { type: 'integer', minimum: 1000, maximum: 600_000 },
    });
    expect(JSON.stringify(tool.definition.parameters)).toContain('default 120000, at most 600000');
  });

  it('takes the time limit the call asks for, within the most allowed (REAL-3)', async () => {
    const tool = createBashTool({ timeoutMs: 300, maxTimeoutMs: 5000 });
    // Longer than the default limit, shorter than the one asked for: it completes.
    const result = await tool.execute({ command: 'sleep 1; echo done', timeout_ms: 3000 }, ws.context());
    expect(result).toEqual({ content: 'exit code: 0\n--- stdout ---\ndone\n--- stderr (empty) ---' });
    // Beyond the most, or below a second (seconds meant as milliseconds), is refused before it runs.
    expect(tool.parseArguments?.({ command: 'true', timeout_ms: 5001 }).success).toBe(false);
    expect(tool.parseArguments?.({ command: 'true', timeout_ms: 5000 }).success).toBe(true);
    expect(createBashTool().parseArguments?.({ command: 'true', timeout_ms: 120 }).success).toBe(false);
    // With the defaults, a long test run may ask for 200 s (and no more than 10 minutes).
    expect(createBashTool().parseArguments?.({ command: 'npm test', timeout_ms: 200_000 }).success).toBe(true);
    expect(createBashTool().parseArguments?.({ command: 'npm test', timeout_ms: 600_001 }).success).toBe(false);
    // A limit it asked for is the one that kills it, and it is told how to go on.
    const timedOut = await tool.execute({ command: 'sleep 30', timeout_ms: 1000 }, ws.context());
    expect(timedOut.content).toMatch(/^timed out after 1s and was killed \(give it more time with timeout_ms, up to 5000\)/);
    const atMost = await createBashTool({ timeoutMs: 300, maxTimeoutMs: 300 })
      .execute({ command: 'sleep 30' }, ws.context());
    expect(atMost.content).toMatch(/^timed out after 300ms and was killed \(that is the longest a command may run/);
  });

  it('a command still running reports how long it has run and its last line of output', async () => {
    const reports: ToolProgress[] = [];
    const tool = createBashTool({ progressEveryMs: 50 });
    // Each step of the command waits for a file that the test makes once it was told of the step
    // before (not for a time), so every report below comes however slow the machine is.
    const gate = (name: string): string => `until [ -e ${name} ]; do sleep 0.01; done`;
    const open = (name: string): void => {
      if (!existsSync(join(ws.workDir, name))) writeFileSync(join(ws.workDir, name), '');
    };
    const result = await tool.execute(
      {
        // Nothing, then a line, then a progress bar redrawn with \r, in colour, on stderr.
        command: `${gate('g1')}; echo 'first line'; ${gate('g2')}; printf 'step 1\\r\\033[32mstep 2\\033[0m' >&2; ${gate('g3')}`,
      },
      {
        ...ws.context(),
        onProgress: (progress) => {
          reports.push(progress);
          const message = progress.message ?? '';
          if (message.endsWith('no output yet')) open('g1');
          if (message.endsWith('"first line"')) open('g2');
          // Past a second, so that the report says seconds.
          if (message.endsWith('"step 2"') && progress.progress >= 1000) open('g3');
        },
      },
    );
    expect(result.isError).toBeUndefined();
    const messages = reports.map((report) => report.message ?? '');
    expect(messages[0]).toMatch(/^running for \d+ms, no output yet$/);
    expect(messages).toContainEqual(expect.stringMatching(/^running for [\d.]+m?s; last output: "first line"$/));
    expect(messages.at(-1)).toMatch(/^running for [\d.]+s; last output: "step 2"$/);
    // progress: the milliseconds run, growing.
    const progress = reports.map((report) => report.progress);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(progress.at(-1)).toBeGreaterThanOrEqual(1000);
    // Nothing once the command has ended.
    const count = reports.length;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(reports).toHaveLength(count);
  });

  it('a progress report shows a long last line cut, and the command runs the same without a listener', async () => {
    const reports: ToolProgress[] = [];
    const long = 'x'.repeat(300);
    const tool = createBashTool({ progressEveryMs: 50 });
    // The command ends once a report has shown its output (a file the test makes), not after a
    // time a busy machine might let pass without a report.
    await tool.execute(
      { command: `printf '${long}'; until [ -e seen ]; do sleep 0.01; done` },
      {
        ...ws.context(),
        onProgress: (progress) => {
          reports.push(progress);
          if (progress.message?.includes('last output') === true) writeFileSync(join(ws.workDir, 'seen'), '');
        },
      },
    );
    expect(reports.at(-1)?.message).toMatch(new RegExp(`last output: "${'x'.repeat(119)}…"$`));
    const quiet = await tool.execute({ command: 'sleep 0.2; echo done' }, ws.context());
    expect(quiet.content).toContain('done');
  });

  it('returns the exit code, stdout and stderr, labelled', async () => {
    const result = await createBashTool().execute(
      { command: 'echo out; echo err >&2' },
      ws.context(),
    );
    expect(result).toEqual({ content: 'exit code: 0\n--- stdout ---\nout\n--- stderr ---\nerr' });
  });

  it('marks a non-zero exit as an error', async () => {
    const result = await createBashTool().execute(
      { command: 'printf partial; exit 3' },
      ws.context(),
    );
    expect(result).toEqual({
      content: 'exit code: 3\n--- stdout ---\npartial\n--- stderr (empty) ---',
      isError: true,
    });
  });

  it('runs in the workspace with the spawner\'s environment, not the parent\'s', async () => {
    await writeFile(join(ws.workDir, 'here.txt'), 'x');
    process.env.CLAW_PARENT_SECRET = 'sk-parent-secret';
    const tool = createBashTool({
      spawner: plainCommandSpawner({ env: { PATH: process.env.PATH ?? '', CLAW_TOOL_TEST: 'value-42' } }),
    });
    const leak = await tool.execute({ command: 'env' }, ws.context());
    delete process.env.CLAW_PARENT_SECRET;
    expect(leak.content).not.toContain('sk-parent-secret');
    const result = await tool.execute(
      { command: 'pwd -P; ls; echo "$CLAW_TOOL_TEST"' },
      ws.context(),
    );
    const real = await realpath(ws.workDir);
    expect(result.content).toBe(`exit code: 0\n--- stdout ---\n${real}\nhere.txt\nvalue-42\n--- stderr (empty) ---`);
  });

  it('asks a spawner given as a function once, at its first command', async () => {
    let asked = 0;
    const tool = createBashTool({
      spawner: () => {
        asked += 1;
        return Promise.resolve(plainCommandSpawner({ env: { PATH: process.env.PATH ?? '', CLAW_TOOL_TEST: 'lazy' } }));
      },
    });
    expect(asked).toBe(0);
    expect((await tool.execute({ command: 'echo "$CLAW_TOOL_TEST"' }, ws.context())).content).toContain('lazy');
    expect((await tool.execute({ command: 'true' }, ws.context())).isError).toBeUndefined();
    expect(asked).toBe(1);
  });

  it('kills the whole process group on timeout', async () => {
    const tool = createBashTool({ timeoutMs: 300 });
    // Had the tool waited for the command (or for the background sleep holding its output open),
    // it would take 30 s: past the test's own time limit, which fails it. No tighter bound in
    // milliseconds, which a loaded machine could break.
    const result = await tool.execute({ command: 'sleep 30 & echo $!; sleep 30' }, ws.context());
    expect(result.isError).toBe(true);
    const match = /^timed out after 300ms and was killed \([^)]*\)\n--- stdout ---\n(\d+)\n--- stderr \(empty\) ---$/
      .exec(result.content);
    expect(match).not.toBeNull();
    const grandchild = Number(match?.[1]);
    started.push(grandchild);
    expect(await stillExistsAfter(grandchild)).toBe(false);
  });

  it('kills the process group on abort and rejects with the exact reason', async () => {
    const controller = new AbortController();
    const reason = new Error('user pressed Ctrl-C');
    const running = createBashTool().execute(
      { command: 'sleep 30 & echo $$ $! > pids.txt; sleep 30' },
      ws.context(controller.signal),
    );
    const pids = (await waitForFile(join(ws.workDir, 'pids.txt'))).trim().split(' ').map(Number);
    expect(pids).toHaveLength(2);
    const [group, grandchild] = pids as [number, number];
    started.push(group, grandchild);
    expect(exists(group)).toBe(true);
    expect(exists(grandchild)).toBe(true);
    // Rejecting only once the commands ended would take 30 s, past the test's time limit.
    controller.abort(reason);
    await expect(running).rejects.toBe(reason);
    expect(await stillExistsAfter(grandchild)).toBe(false);
    expect(await stillExistsAfter(group)).toBe(false);
  });

  it('rejects at once when the signal is already aborted and runs nothing', async () => {
    const controller = new AbortController();
    const reason = new Error('already canceled');
    controller.abort(reason);
    await expect(
      createBashTool().execute({ command: 'touch ran' }, ws.context(controller.signal)),
    ).rejects.toBe(reason);
    expect(existsSync(join(ws.workDir, 'ran'))).toBe(false);
  });

  it('stops background processes the command leaves behind', async () => {
    const result = await createBashTool().execute(
      { command: 'sleep 30 > bg.log 2>&1 & echo $!' },
      ws.context(),
    );
    expect(result.isError).toBeUndefined();
    const match = /^exit code: 0\n--- stdout ---\n(\d+)\n/.exec(result.content);
    expect(match).not.toBeNull();
    const background = Number(match?.[1]);
    started.push(background);
    expect(await stillExistsAfter(background)).toBe(false);
  });

  it('keeps the head and tail of huge output within the cap and counts the cut bytes', async () => {
    const result = await createBashTool().execute(
      { command: "yes aaaaaaaaaaaaaaa | tr -d '\\n' | head -c 5000000" },
      ws.context(),
    );
    expect(result.isError).toBeUndefined();
    const note =
      '[... 4934464 bytes of stdout cut; redirect the output to a file and use read_file to see all of it ...]';
    // Matched piecewise so that a failure does not print 64 KiB of "a".
    const match = /^exit code: 0\n--- stdout ---\n(a*)\n(.*)\n(a*)\n--- stderr \(empty\) ---$/
      .exec(result.content);
    expect(match?.[1]?.length).toBe(32 * 1024);
    expect(match?.[2]).toBe(note);
    expect(match?.[3]?.length).toBe(32 * 1024);
    expect(result.content.length).toBeLessThan(64 * 1024 + 200);
  });

  it('caps stderr on its own with maxOutputBytes', async () => {
    const result = await createBashTool({ maxOutputBytes: 10 }).execute(
      { command: 'echo fine; printf 0123456789abcdefghij >&2' },
      ws.context(),
    );
    expect(result.content).toBe(
      'exit code: 0\n--- stdout ---\nfine\n--- stderr ---\n01234\n' +
      '[... 10 bytes of stderr cut; redirect the output to a file and use read_file to see all of it ...]\n' +
      'fghij',
    );
  });

  it('never splits a UTF-8 character at the cut and counts its bytes as cut', async () => {
    // Five 2-byte characters, 5 bytes kept: 2 of the head and 2 of the tail form whole characters.
    const result = await createBashTool({ maxOutputBytes: 5 }).execute(
      { command: "printf '\\303\\251%.0s' 1 2 3 4 5" },
      ws.context(),
    );
    expect(result.content).toBe(
      'exit code: 0\n--- stdout ---\né\n' +
      '[... 6 bytes of stdout cut; redirect the output to a file and use read_file to see all of it ...]\n' +
      'é\n--- stderr (empty) ---',
    );
  });

  it('refuses a destructive command without running any of it', async () => {
    const result = await createBashTool().execute(
      { command: 'touch marker && rm -rf /' },
      ws.context(),
    );
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^refused: \S/);
    expect(existsSync(join(ws.workDir, 'marker'))).toBe(false);
  });

  it('refuses a command that escapes the workspace', async () => {
    const result = await createBashTool().execute(
      { command: 'touch marker; cat ../outside/secret' },
      ws.context(),
    );
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^refused: \S/);
    expect(existsSync(join(ws.workDir, 'marker'))).toBe(false);
  });

  // In $'...' a \' is a quote that does not end the string: bash runs what follows it.
  it.each([
    ["echo $'\\'' ; echo pwned > ../outside/x #'", 'after a string that \\\' does not end'],
    ["echo $(echo $'\\')' ; echo pwned > ../outside/x)", 'inside $(...)'],
    ["echo pwned > $'\\x2e\\x2e/outside/x'", 'a path decoded from escapes'],
  ])('refuses %j (%s) without running it', async (command) => {
    const result = await createBashTool().execute({ command }, ws.context());
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^refused: \S/);
    expect(existsSync(join(ws.outside, 'x'))).toBe(false);
  });

  it('runs ANSI-C quoted text as bash reads it', async () => {
    const result = await createBashTool().execute(
      { command: "printf '%s|' $'it\\'s' $'a\\tb' $'\\x41'" },
      ws.context(),
    );
    expect(result.content).toBe("exit code: 0\n--- stdout ---\nit's|a\tb|A|\n--- stderr (empty) ---");
  });
});
