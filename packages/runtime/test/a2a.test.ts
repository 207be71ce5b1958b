// delegate_agent through the runtime (A2A-1, RT-2): offered in a trusted workspace with
// .claw/a2a.json (TRUST-2; untrusted ones are in factory-trust.test.ts), behind the approval gate,
// and counted against the run's tool time budget (BUD-4).
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createDelegateTool, loadA2aConfig } from '@claw/a2a';
import type { ToolMessage } from '@claw/core';
import { Engine } from '@claw/engine';
import { MemorySession } from '@claw/session-store';
import { AllowAllGate, ScriptedProvider } from '@claw/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanUp, scriptedFactory, settings, tempWorkspace } from './helpers.js';

// The in-repo SDK echo agent of @claw/a2a's tests (loaded by URL: it lies outside this package).
interface EchoAgent {
  url: string;
  started: string[];
  canceled: string[];
  close(): Promise<void>;
}
const echoAgentModule = new URL('../../a2a/test/fixtures/echo-agent.ts', import.meta.url).href;
const { startEchoAgent } = (await import(echoAgentModule)) as {
  startEchoAgent: (options: { mode: string }) => Promise<EchoAgent>;
};

const agents: EchoAgent[] = [];

afterEach(async () => {
  await cleanUp();
  await Promise.all(agents.splice(0).map((agent) => agent.close()));
});

async function echo(mode: 'complete' | 'wait-cancel'): Promise<EchoAgent> {
  const agent = await startEchoAgent({ mode });
  agents.push(agent);
  return agent;
}

async function workspaceWithPeers(peers: Record<string, unknown>): Promise<string> {
  const workDir = await tempWorkspace('claw-runtime-a2a-');
  await mkdir(path.join(workDir, '.claw'), { recursive: true });
  await writeFile(path.join(workDir, '.claw', 'a2a.json'), JSON.stringify({ peers }));
  return workDir;
}

describe('delegate_agent in the runtime', () => {
  it('is offered where a trusted .claw/a2a.json exists, asks the gate, and returns the remote report', async () => {
    const agent = await echo('complete');
    const workDir = await workspaceWithPeers({ echo: { url: agent.url } });
    const { factory, provider } = scriptedFactory([
      { toolCalls: [{ id: 'd1', name: 'delegate_agent', arguments: { message: 'summarise', peer: 'echo' } }] },
      { text: 'done' },
    ], { settings: settings({ approval: 'ask', trustWorkspaces: true }) });
    const asked: string[] = [];
    const runtime = await factory.createRuntime({
      workDir,
      approvalHandler: {
        approve: (prompt) => {
          asked.push(`${prompt.toolName}:${prompt.risk}`);
          return Promise.resolve('allow_once');
        },
      },
    });
    const result = await runtime.start('delegate it').wait();
    expect(result.status).toBe('completed');
    expect(provider.calls[0]?.request.tools?.map((tool) => tool.name)).toContain('delegate_agent');
    expect(asked).toEqual(['delegate_agent:dangerous']);
    const observation = runtime.session.history()[2] as ToolMessage;
    expect(observation).toMatchObject({ role: 'tool', toolCallId: 'd1' });
    expect(observation.isError ?? false).toBe(false);
    expect(observation.content).toContain('echo: summarise');
  });

  it('is not offered without .claw/a2a.json', async () => {
    const workDir = await tempWorkspace('claw-runtime-a2a-');
    const { factory, provider } = scriptedFactory([{ text: 'hi' }]);
    const runtime = await factory.createRuntime({ workDir });
    await runtime.start('hello').wait();
    expect(provider.calls[0]?.request.tools?.map((tool) => tool.name)).not.toContain('delegate_agent');
  });

  it('counts against the tool time budget: a stuck remote task stops the run and is canceled', async () => {
    const agent = await echo('wait-cancel');
    const workDir = await tempWorkspace('claw-runtime-a2a-');
    const timers: Array<() => void> = [];
    const provider = new ScriptedProvider([
      { toolCalls: [{ id: 'd1', name: 'delegate_agent', arguments: { message: 'forever', url: agent.url } }] },
      { text: 'never asked' },
    ]);
    const engine = new Engine({
      provider,
      gate: new AllowAllGate(),
      tools: [createDelegateTool({ config: (dir, signal) => loadA2aConfig({ workDir: dir, env: {}, signal }) })],
      toolTimeBudgetMs: 5_000,
      setTimer: (callback, ms) => {
        expect(ms).toBe(5_000);
        timers.push(callback);
        return () => undefined;
      },
    });
    const running = engine.run('go', { session: new MemorySession({ workDir }) });
    await vi.waitFor(() => expect(agent.started).toHaveLength(1));
    expect(timers).toHaveLength(1);
    // The budget's time is up while the remote task still works.
    timers[0]?.();
    const result = await running;
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('tool_time_budget_exceeded');
    expect(provider.calls).toHaveLength(1);
    await vi.waitFor(() => expect(agent.canceled).toEqual(agent.started));
  });
});
