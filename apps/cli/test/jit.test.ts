import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FakeOpenAIServer } from '@claw/testing/node';
import { afterEach, describe, expect, it } from 'vitest';
import { jitTunedNodeMajor, tuneJitForTurns } from '../src/jit.js';
import { ClawProcess, cleanUp, modelEnv, removeLater, tempDir } from './helpers.js';

let server: FakeOpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
  await cleanUp();
});

interface JitReport {
  /** Each `v8.setFlagsFromString` call: when (ms since the epoch), whether undici was loaded. */
  calls: { flags: string; undiciLoaded: boolean; at: number }[];
  /** Whether a function made and first called at exit ran as baseline (Sparkplug) code. */
  freshFunctionBaseline: boolean;
}

/**
 * Runs the built claw with a preloaded module that watches `v8.setFlagsFromString` and, at exit,
 * asks V8 (natives syntax) whether a function called once has baseline code: only with
 * `--always-sparkplug` in effect does it.
 */
async function runWatched(
  args: (workDir: string) => string[],
  options: { drive?: (claw: ClawProcess) => Promise<void>; nodeArgs?: readonly string[] } = {},
): Promise<{ report: JitReport; stdout: string; stderr: string; status: number | string }> {
  const { drive, nodeArgs = [] } = options;
  const folder = await tempDir();
  const reportFile = path.join(folder, 'jit.json');
  const preload = path.join(folder, 'watch-jit.mjs');
  await writeFile(
    preload,
    [
      "import v8 from 'node:v8';",
      "import { writeFileSync } from 'node:fs';",
      'const calls = [];',
      'const set = v8.setFlagsFromString;',
      'v8.setFlagsFromString = (flags) => {',
      "  const undiciLoaded = process.moduleLoadList.includes('NativeModule internal/deps/undici/undici');",
      '  calls.push({ flags, undiciLoaded, at: performance.timeOrigin + performance.now() });',
      '  set.call(v8, flags);',
      '};',
      "process.on('exit', () => {",
      "  const fresh = new Function('a', 'return a + 1');",
      '  fresh(1);',
      "  const status = new Function('f', 'return %GetOptimizationStatus(f)')(fresh);",
      `  writeFileSync(${JSON.stringify(reportFile)}, JSON.stringify({ calls, freshFunctionBaseline: (status & 32768) !== 0 }));`,
      '});',
    ].join('\n'),
  );
  const workDir = await tempDir();
  const start = {
    env: modelEnv(server!.baseURL),
    nodeArgs: [...nodeArgs, '--allow-natives-syntax', '--import', preload],
  };
  let result: { status: number | string; stdout: string; stderr: string };
  if (drive === undefined) {
    result = await ClawProcess.run(args(workDir), start);
  } else {
    const claw = ClawProcess.start(args(workDir), start);
    await drive(claw);
    result = { status: await claw.exited, stdout: claw.stdout, stderr: claw.stderr };
  }
  const report = JSON.parse(await readFile(reportFile, 'utf8')) as JitReport;
  return { report, ...result };
}

describe('V8 readied for the turns of a task (PERF-1)', () => {
  it.runIf(Number.parseInt(process.versions.node, 10) === jitTunedNodeMajor)(
    'claw -p turns on --always-sparkplug once, after the model client transport is loaded, and the task completes',
    async () => {
      server = await FakeOpenAIServer.start({
        turns: [
          { toolCalls: [{ name: 'read_file', arguments: JSON.stringify({ path: 'missing.txt' }) }] },
          { text: 'done' },
        ],
      });
      const { report, status, stdout } = await runWatched((workDir) => [
        '-p', 'read it', '--workdir', workDir, '--approval', 'allow',
      ]);
      expect(status).toBe(0);
      expect(stdout).toContain('done');
      expect(report.calls.map((call) => call.flags)).toEqual(['--always-sparkplug']);
      // Loaded while Node's code caches were still accepted (see jit.ts).
      expect(report.calls[0]!.undiciLoaded).toBe(true);
      expect(report.freshFunctionBaseline).toBe(true);
      // Before the first model request, whose code is then compiled ahead (one clock per machine).
      expect(server.requests).toHaveLength(2);
      expect(report.calls[0]!.at).toBeLessThan(performance.timeOrigin + server.requests[0]!.receivedAt);
    },
  );

  it.runIf(Number.parseInt(process.versions.node, 10) === jitTunedNodeMajor)(
    'the REPL does too, once its session is open',
    async () => {
      server = await FakeOpenAIServer.start({ turns: [{ text: 'hello back' }] });
      const { report, status } = await runWatched(
        (workDir) => ['--workdir', workDir, '--approval', 'deny'],
        {
          drive: async (claw) => {
            await claw.waitFor('claw> ');
            claw.send('hello');
            await claw.waitFor('hello back');
            await claw.waitFor('claw> ', 2);
            claw.send('/exit');
          },
        },
      );
      expect(status).toBe(0);
      expect(report.calls.map((call) => call.flags)).toEqual(['--always-sparkplug']);
      expect(report.calls[0]!.undiciLoaded).toBe(true);
      expect(report.freshFunctionBaseline).toBe(true);
    },
  );

  it('under node --jitless (no baseline compiler, no WebAssembly) claw demo runs and V8 is left as it is', async () => {
    server = await FakeOpenAIServer.start({ turns: [] });
    const { report, status, stdout } = await runWatched(() => ['demo', '--approval', 'allow'], {
      nodeArgs: ['--jitless'],
    });
    const workDir = /^workspace: (\S+)/m.exec(stdout)?.[1];
    if (workDir !== undefined) removeLater(workDir);
    expect(status).toBe(0);
    expect(stdout).toContain('Every step ran.');
    expect(report.calls).toEqual([]);
  });

  it('a usage error or --version leaves V8 as it is', async () => {
    server = await FakeOpenAIServer.start({ turns: [] });
    const { report, status } = await runWatched(() => ['--version']);
    expect(status).toBe(0);
    expect(report.calls).toEqual([]);
    expect(report.freshFunctionBaseline).toBe(false);
  });

  it('changes nothing on other Node.js versions', () => {
    expect(tuneJitForTurns({ nodeVersion: '22.11.0' })).toBe(false);
    expect(tuneJitForTurns({ nodeVersion: '18.20.4' })).toBe(false);
  });
});
