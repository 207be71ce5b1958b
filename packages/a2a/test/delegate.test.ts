import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolProgress, ToolResult } from '@claw/core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { agentCardUrl, createDelegateTool, loadA2aConfig } from '../src/index.js';
import { startEchoAgent, type EchoAgent, type EchoMode } from './fixtures/echo-agent.js';

let workDir: string;
let agents: EchoAgent[] = [];

beforeEach(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'claw-a2a-'));
});

afterEach(async () => {
  await Promise.all(agents.map((agent) => agent.close()));
  agents = [];
  await rm(workDir, { recursive: true, force: true });
});

async function agent(mode: EchoMode, options: { streaming?: boolean; token?: string } = {}): Promise<EchoAgent> {
  const started = await startEchoAgent({ mode, ...options });
  agents.push(started);
  return started;
}

function tool(env: Record<string, string> = {}) {
  return createDelegateTool({ config: (dir, signal) => loadA2aConfig({ workDir: dir, env, signal }) });
}

async function call(
  args: Record<string, unknown>,
  options: { signal?: AbortSignal; onProgress?: (progress: ToolProgress) => void; env?: Record<string, string> } = {},
): Promise<ToolResult> {
  const delegate = tool(options.env);
  const parsed = delegate.parseArguments?.(args);
  if (parsed?.success !== true) throw new Error(`bad arguments: ${parsed?.error ?? ''}`);
  const result = await delegate.execute(parsed.data, {
    signal: options.signal ?? new AbortController().signal,
    workDir,
    ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
  });
  return typeof result === 'string' ? { content: result } : result;
}

describe('delegate_agent (A2A-1, A2A-3) against an SDK agent', () => {
  it('is a dangerous tool with message, url and peer', () => {
    const delegate = tool();
    expect(delegate.risk).toBe('dangerous');
    expect(delegate.definition.name).toBe('delegate_agent');
    expect(Object.keys(delegate.definition.parameters.properties as object)).toEqual(['message', 'url', 'peer']);
  });

  it('returns the final text and artifacts of a completed task', async () => {
    const echo = await agent('complete');
    const result = await call({ message: 'hello', url: echo.url });
    expect(result.isError).toBe(false);
    expect(result.content).toBe('echo: hello\n\n[artifact result.txt]\nartifact for hello');
    // Every request spoke v1.0.
    expect(echo.requests.length).toBeGreaterThanOrEqual(2);
    for (const headers of echo.requests) expect(headers['a2a-version']).toBe('1.0');
  });

  it('works with an agent that does not stream (SendMessage)', async () => {
    const echo = await agent('complete', { streaming: false });
    const result = await call({ message: 'plain', url: `${echo.url}/.well-known/agent-card.json` });
    expect(result).toMatchObject({ isError: false });
    expect(result.content).toContain('echo: plain');
  });

  it('reports the status updates of a streaming task to the progress callback', async () => {
    const echo = await agent('stream');
    const progress: ToolProgress[] = [];
    const result = await call({ message: 'go', url: echo.url }, { onProgress: (p) => progress.push(p) });
    expect(result.content).toContain('echo: go');
    const messages = progress.map((p) => p.message);
    expect(messages).toEqual(expect.arrayContaining(['reading the task', 'thinking', 'writing the answer']));
    expect(messages.indexOf('reading the task')).toBeLessThan(messages.indexOf('writing the answer'));
    // progress grows with every report
    expect(progress.map((p) => p.progress)).toEqual([...progress.map((p) => p.progress)].sort((a, b) => a - b));
  });

  it('cancels the remote task when the call is aborted (the agent sees CancelTask)', async () => {
    const echo = await agent('wait-cancel');
    const controller = new AbortController();
    const running = call({ message: 'long job', url: echo.url }, { signal: controller.signal });
    await vi.waitFor(() => expect(echo.started).toHaveLength(1));
    controller.abort(new Error('user pressed Ctrl-C'));
    await expect(running).rejects.toThrow('user pressed Ctrl-C');
    await vi.waitFor(() => expect(echo.canceled).toEqual(echo.started));
  });

  it('turns a failed task into a clear error Observation', async () => {
    const echo = await agent('fail');
    const result = await call({ message: 'x', url: echo.url });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('remote agent "echo-fail" failed the task');
    expect(result.content).toContain('disk quota exceeded');
  });

  it('turns input-required into an Observation that says what the agent asks', async () => {
    const echo = await agent('input-required');
    const result = await call({ message: 'deploy', url: echo.url });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('needs more input before it can go on (input-required)');
    expect(result.content).toContain('Which branch should I use?');
  });

  it('resolves a peer from .claw/a2a.json, with ${ENV} in its headers', async () => {
    const echo = await agent('complete', { token: 's3cret' });
    await mkdir(join(workDir, '.claw'));
    await writeFile(join(workDir, '.claw', 'a2a.json'), JSON.stringify({
      peers: { echo: { url: echo.url, headers: { Authorization: 'Bearer ${ECHO_TOKEN}' } } },
    }));
    const result = await call({ message: 'via peer', peer: 'echo' }, { env: { ECHO_TOKEN: 's3cret' } });
    expect(result).toMatchObject({ isError: false });
    expect(result.content).toContain('echo: via peer');
    expect(echo.requests.every((headers) => headers.authorization === 'Bearer s3cret')).toBe(true);

    const unknown = await call({ message: 'x', peer: 'nobody' }, { env: { ECHO_TOKEN: 's3cret' } });
    expect(unknown).toEqual({ content: 'unknown peer "nobody": the configured peers are echo', isError: true });

    const unset = await call({ message: 'x', peer: 'echo' });
    expect(unset.isError).toBe(true);
    expect(unset.content).toContain('headers.Authorization uses ${ECHO_TOKEN}, but the environment variable ECHO_TOKEN is not set');
  });

  it('says that the credentials were refused (401)', async () => {
    const echo = await agent('complete', { token: 'right' });
    await expect(call({ message: 'x', url: echo.url })).rejects.toMatchObject({ code: 'a2a_auth_failed' });
  });

  it('is an error without url and without peer', async () => {
    const result = await call({ message: 'anything' });
    expect(result).toEqual({
      content: 'delegate_agent needs "url" (the agent\'s address) or "peer" (a configured name); ' +
        'no peers are configured (add them to .claw/a2a.json)',
      isError: true,
    });
  });

  it('says the agent is unreachable when no card can be read', async () => {
    const echo = await agent('complete');
    await echo.close();
    await expect(call({ message: 'x', url: echo.url })).rejects.toMatchObject({ code: 'a2a_unreachable' });
  });
});

describe('agentCardUrl', () => {
  it('puts the card under the base URL, or takes a .json URL as the card', () => {
    expect(agentCardUrl('http://127.0.0.1:9/')).toBe('http://127.0.0.1:9/.well-known/agent-card.json');
    expect(agentCardUrl('http://127.0.0.1:9/agents/x')).toBe('http://127.0.0.1:9/agents/x/.well-known/agent-card.json');
    expect(agentCardUrl('http://127.0.0.1:9/card.json')).toBe('http://127.0.0.1:9/card.json');
  });
});
