import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AllowAllGate, ScriptedProvider } from '@claw/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Engine, builtinTools, canceledObservationText } from '../src/index.js';
import { expectPaired } from './helpers.js';
import { stillExistsAfter, waitForFile } from './processes.js';
import { createTempWorkspace, type TempWorkspace } from './tools/workspace.js';
import { MemorySession } from '@claw/session-store';

describe('Engine.run with the real bash tool (ENG-5)', () => {
  let ws: TempWorkspace;
  beforeEach(async () => {
    ws = await createTempWorkspace();
  });
  afterEach(async () => {
    await ws.remove();
  });

  it('abort during `sleep 30`: canceled, paired, and the whole process group is gone', { timeout: 10_000 }, async () => {
    const controller = new AbortController();
    const provider = new ScriptedProvider([
      { toolCalls: [{ id: 'sleepy', name: 'bash', arguments: { command: 'sleep 30 & echo $! > pids.txt; echo $$ >> pids.txt; wait' } }] },
      { text: 'never reached' },
    ]);
    const session = new MemorySession({ workDir: ws.workDir });
    const running = new Engine({ provider, gate: new AllowAllGate(), tools: builtinTools() }).run('sleep', {
      session,
      signal: controller.signal,
    });
    const pids = (await waitForFile(join(ws.workDir, 'pids.txt')))
      .trim()
      .split('\n')
      .map(Number);
    expect(pids).toHaveLength(2);
    controller.abort();
    // Real processes, real time: what is checked is that the run comes back canceled with every
    // process gone, not how fast (the test's own timeout bounds a hang).
    const result = await running;
    expect(result.status).toBe('canceled');
    expect(session.history().at(-1)).toEqual({ role: 'tool', toolCallId: 'sleepy', content: canceledObservationText, isError: true });
    expectPaired(session.history());
    for (const pid of pids) expect(await stillExistsAfter(pid)).toBe(false);
    expect(provider.calls).toHaveLength(1);
  });

  it('runs read, write, edit and bash end to end in a real workspace', async () => {
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: 'write_file', arguments: { path: 'notes/todo.txt', content: 'buy milk\n' } }] },
      { toolCalls: [{ name: 'edit_file', arguments: { path: 'notes/todo.txt', old_string: 'milk', new_string: 'oat milk' } }] },
      {
        toolCalls: [
          { name: 'read_file', arguments: { path: 'notes/todo.txt' } },
          { name: 'bash', arguments: { command: 'wc -l < notes/todo.txt' } },
        ],
      },
      { text: 'done' },
    ]);
    const session = new MemorySession({ workDir: ws.workDir });
    const result = await new Engine({ provider, gate: new AllowAllGate(), tools: builtinTools() }).run('todo', { session });
    expect(result.status).toBe('completed');
    expect(await readFile(join(ws.workDir, 'notes/todo.txt'), 'utf8')).toBe('buy oat milk\n');
    const observations = session.history().filter((message) => message.role === 'tool');
    expect(observations.map((message) => message.isError === true)).toEqual([false, false, false, false]);
    expect(observations[2]?.content).toBe('buy oat milk');
    expect(observations[3]?.content).toMatch(/^exit code: 0\n--- stdout ---\n1\n/);
  });

  it('a path outside the workspace becomes an error Observation, nothing is written', async () => {
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: 'write_file', arguments: { path: '../outside/pwned.txt', content: 'x' } }] },
      { text: 'ok' },
    ]);
    const session = new MemorySession({ workDir: ws.workDir });
    await new Engine({ provider, gate: new AllowAllGate(), tools: builtinTools() }).run('escape', { session });
    expect(session.history()[2]?.content).toMatch(/^Error: write_file failed: .*outside the workspace/s);
    await expect(readFile(join(ws.outside, 'pwned.txt'), 'utf8')).rejects.toThrow();
  });
});
