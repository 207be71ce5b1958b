import { ClawError } from '@claw/core';
import { AllowAllGate, DenyAllGate, ScriptedProvider } from '@claw/testing';
import { describe, expect, it } from 'vitest';
import { Engine } from '../src/index.js';
import { newSession, recordTool } from './helpers.js';
import { MemorySession } from '@claw/session-store';

const record = (id: string, text: string) => ({ id, name: 'record', arguments: { text } });

/** One engine serves many sessions (RT-2): each run asks its own gate (ENG-3). */
describe('approval gate per run', () => {
  it('one engine, two sessions, two gates: each run\'s calls go to its own gate', async () => {
    const provider = new ScriptedProvider([
      { toolCalls: [record('a1', 'from a')] },
      { text: 'a done' },
      { toolCalls: [record('b1', 'from b')] },
      { text: 'b done' },
    ]);
    const effects: string[] = [];
    const engine = new Engine({ provider, tools: [recordTool(effects)] });
    const gateA = new AllowAllGate();
    const gateB = new DenyAllGate('not in session b');
    const sessionA = new MemorySession({ id: 'a', workDir: '/w/a' });
    const sessionB = new MemorySession({ id: 'b', workDir: '/w/b' });

    expect((await engine.run('go', { session: sessionA, gate: gateA })).status).toBe('completed');
    expect((await engine.run('go', { session: sessionB, gate: gateB })).status).toBe('completed');

    expect(gateA.requests.map((request) => [request.sessionId, request.toolCall.id])).toEqual([['a', 'a1']]);
    expect(gateB.requests.map((request) => [request.sessionId, request.toolCall.id])).toEqual([['b', 'b1']]);
    expect(effects).toEqual(['from a']);
    expect(sessionB.history()[2]?.content).toMatch(/^Error: permission denied: not in session b/);
  });

  it('a run\'s own gate wins over the engine\'s', async () => {
    const provider = new ScriptedProvider([{ toolCalls: [record('c1', 'x')] }, { text: 'done' }]);
    const engineGate = new AllowAllGate();
    const runGate = new AllowAllGate();
    await new Engine({ provider, gate: engineGate, tools: [recordTool([])] }).run('go', { session: newSession(), gate: runGate });
    expect(engineGate.requests).toEqual([]);
    expect(runGate.requests).toHaveLength(1);
  });

  it('without any gate the run fails at once: no model call, no tool, nothing appended', async () => {
    const provider = new ScriptedProvider([{ toolCalls: [record('c1', 'x')] }, { text: 'done' }]);
    const effects: string[] = [];
    const session = newSession();
    const result = await new Engine({ provider, tools: [recordTool(effects)] }).run('go', { session });
    expect(result.status).toBe('failed');
    expect(result.error).toBeInstanceOf(ClawError);
    expect(result.error?.code).toBe('approval_gate_missing');
    expect(result.error?.message).toMatch(/pass .*gate/);
    expect(provider.calls).toEqual([]);
    expect(effects).toEqual([]);
    expect(session.history()).toEqual([]);
  });

  it('a subagent\'s calls go to the gate of the run that spawned it', async () => {
    const provider = new ScriptedProvider([
      { toolCalls: [{ id: 'spawn', name: 'spawn_subagent', arguments: { task: 'record it' } }] },
      { toolCalls: [record('child1', 'from child')] },
      { text: 'child done' },
      { text: 'parent done' },
    ]);
    const engineGate = new AllowAllGate();
    const runGate = new AllowAllGate();
    const effects: string[] = [];
    const result = await new Engine({ provider, gate: engineGate, tools: [recordTool(effects)], subagents: true }).run('go', {
      session: newSession(),
      gate: runGate,
    });
    expect(result).toMatchObject({ status: 'completed', finalText: 'parent done' });
    expect(effects).toEqual(['from child']);
    expect(runGate.requests.map((request) => request.toolCall.id)).toEqual(['spawn', 'child1']);
    expect(engineGate.requests).toEqual([]);
  });

  it('runSubagent on its own takes a gate too', async () => {
    const provider = new ScriptedProvider([{ toolCalls: [record('s1', 'x')] }, { text: 'done' }]);
    const gate = new AllowAllGate();
    const result = await new Engine({ provider, tools: [recordTool([])] }).runSubagent('go', { workDir: '/w', gate });
    expect(result.status).toBe('completed');
    expect(gate.requests).toHaveLength(1);
  });
});
