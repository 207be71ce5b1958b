// claw-server as an A2A agent (A2A-2, A2A-3), driven by the official SDK's client over real HTTP
// on 127.0.0.1, and claw delegating to it (claw → claw) over the official protocol and the seed's
// envelope.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Message, StreamResponse, Task } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import type { ToolMessage } from '@claw/core';
import { RuntimeFactory } from '@claw/runtime';
import { plainCommandSpawner } from '@claw/sandbox';
import { MemorySessionManager } from '@claw/session-store';
import { ScriptedProvider, type ScriptedStep } from '@claw/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  GateTool,
  cleanUp,
  gateCall,
  settings,
  startServer,
  token,
  workspace,
  WsClient,
  type TestServer,
} from './helpers.js';
import { elicitServerLaunch } from '../../../packages/runtime/test/fixtures/elicit-server-launch.mjs';

afterEach(cleanUp);

const base = (server: TestServer): string => `http://127.0.0.1:${server.address.http}`;

const authFetch = (given: string | null): typeof fetch => (input, init) => {
  const headers = new Headers(init?.headers);
  if (given !== null) headers.set('Authorization', `Bearer ${given}`);
  return fetch(input, { ...init, headers });
};

async function client(server: TestServer, given: string | null = token) {
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch(given) })],
  });
  return factory.createFromUrl(base(server));
}

const userMessage = (text: string): Message => ({
  messageId: `m-${Math.random().toString(16).slice(2)}`,
  contextId: '',
  taskId: '',
  role: 1,
  parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

const send = (text: string) => ({ tenant: '', message: userMessage(text), configuration: undefined, metadata: undefined });

const textOf = (message: Message | undefined): string =>
  (message?.parts ?? []).map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');

const TaskState = { submitted: 1, working: 2, completed: 3, failed: 4, canceled: 5 };

function asTask(result: Message | Task): Task {
  if (!('status' in result)) throw new Error('expected a task, got a message');
  return result;
}

describe('claw-server speaks A2A v1.0 to an SDK client', () => {
  it('serves a public agent card with the JSON-RPC interface, skills and the bearer scheme', async () => {
    const server = await startServer();
    const response = await fetch(`${base(server)}/.well-known/agent-card.json`);
    expect(response.status).toBe(200);
    const a2a = await client(server);
    const card = await a2a.getAgentCard();
    expect(card.name).toBe('claw');
    expect(card.supportedInterfaces).toEqual([
      { url: `${base(server)}/a2a`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
    ]);
    expect(card.capabilities?.streaming).toBe(true);
    expect(card.skills.length).toBeGreaterThan(0);
    expect(card.securitySchemes.bearer?.scheme).toMatchObject({
      $case: 'httpAuthSecurityScheme',
      value: { scheme: 'Bearer' },
    });
    expect(card.securityRequirements).toEqual([{ schemes: { bearer: { list: [] } } }]);
    // The seed's envelope carries the same card.
    const envelope = await (await fetch(`${base(server)}/a2a/agent-card`)).json() as { code: number; data: unknown };
    expect(envelope).toEqual({ code: 0, message: 'ok', data: await response.json() });
  });

  it('refuses every method without the token, and a request without A2A-Version', async () => {
    const server = await startServer({ steps: [{ text: 'never' }] });
    const anonymous = await client(server, null);
    await expect(anonymous.sendMessage(send('hello'))).rejects.toThrow(/401/);
    const wrong = await client(server, 'not-the-token');
    await expect(wrong.getTask({ tenant: '', id: 'x', historyLength: undefined })).rejects.toThrow(/401/);
    const noVersion = await fetch(`${base(server)}/a2a`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] } } }),
    });
    expect((await noVersion.json() as { error: { code: number } }).error.code).toBe(-32009);
    expect(server.provider.calls).toHaveLength(0);
  });

  it('rejects an empty message before any run', async () => {
    const server = await startServer({ steps: [{ text: 'never' }] });
    const a2a = await client(server);
    await expect(a2a.sendMessage(send('   '))).rejects.toThrow(/the message is empty/);
    await expect((async () => {
      for await (const event of a2a.sendMessageStream(send(''))) void event;
    })()).rejects.toThrow(/the message is empty/);
    expect(server.provider.calls).toHaveLength(0);
  });

  it('SendMessage runs a claw session to completion and answers with its report; GetTask reads it back', async () => {
    const server = await startServer({ steps: [{ text: 'the answer is 42' }] });
    const a2a = await client(server);
    const task = asTask(await a2a.sendMessage(send('what is the answer?')));
    expect(task.status?.state).toBe(TaskState.completed);
    expect(textOf(task.status?.message)).toBe('the answer is 42');
    expect(task.artifacts.map((artifact) => textOf({ parts: artifact.parts } as Message))).toEqual(['the answer is 42']);
    expect(server.provider.calls[0]?.request.messages.at(-1)).toMatchObject({ role: 'user', content: 'what is the answer?' });
    const again = await a2a.getTask({ tenant: '', id: task.id, historyLength: undefined });
    expect(again.status?.state).toBe(TaskState.completed);
    expect(again.artifacts).toHaveLength(1);
    // The task is a claw session, listed like any other.
    const listed = await fetch(`${base(server)}/api/sessions`, { headers: { Authorization: `Bearer ${token}` } });
    const { sessions } = await listed.json() as { sessions: Array<{ session_id: string }> };
    expect(sessions.map((session) => session.session_id)).toContain(`a2a-${task.id}`);
  });

  it('SendStreamingMessage yields the events in v1.0 order', async () => {
    const server = await startServer({
      steps: [
        { toolCalls: [{ id: 'r', name: 'read_file', arguments: { path: 'notes.txt' } }] },
        { text: 'read it' },
      ],
    });
    await writeFile(path.join(server.workDir, 'notes.txt'), 'hello notes');
    const a2a = await client(server);
    const events: StreamResponse[] = [];
    for await (const event of a2a.sendMessageStream(send('read the notes'))) events.push(event);
    const kinds = events.map((event) => {
      const payload = event.payload;
      if (payload?.$case === 'task') return `task:${payload.value.status?.state}`;
      if (payload?.$case === 'statusUpdate') return `status:${payload.value.status?.state}:${textOf(payload.value.status?.message)}`;
      return payload?.$case ?? 'none';
    });
    expect(kinds).toEqual([
      `task:${TaskState.submitted}`,
      `status:${TaskState.working}:`,
      `status:${TaskState.working}:calling read_file`,
      'artifactUpdate',
      `status:${TaskState.completed}:read it`,
    ]);
    const working = events[1]?.payload;
    expect(working?.$case === 'statusUpdate' && working.value.metadata).toMatchObject({
      claw_session_id: expect.stringMatching(/^a2a-/) as unknown,
    });
  });

  it('CancelTask mid-task cancels the claw task; its history stays paired and is visible over the channel', async () => {
    const gate = new GateTool();
    const server = await startServer({ steps: [gateCall('hold'), { text: 'never' }], tools: [gate.tool] });
    const a2a = await client(server);
    const stream = a2a.sendMessageStream(send('wait for me'));
    const first = await stream.next();
    const taskId = first.value?.payload?.$case === 'task' ? first.value.payload.value.id : '';
    expect(taskId).not.toBe('');
    const rest = (async () => {
      const seen: StreamResponse[] = [];
      for await (const event of stream) seen.push(event);
      return seen;
    })();
    await gate.whenStarted();
    const canceled = await a2a.cancelTask({ tenant: '', id: taskId, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.canceled);
    const events = await rest;
    const last = events.at(-1)?.payload;
    expect(last?.$case === 'statusUpdate' && last.value.status?.state).toBe(TaskState.canceled);
    expect(gate.canceled).toEqual(['hold']);
    const watcher = await WsClient.connect(server.address.http);
    await watcher.hello();
    watcher.send({ type: 'open', session_id: `a2a-${taskId}`, role: 'observer' });
    const history = await watcher.next('history');
    type WireMessage = { role: string; tool_calls?: Array<{ id: string }>; tool_call_id?: string; content: string };
    const messages = history.messages as WireMessage[];
    const call = messages.find((message) => message.role === 'assistant' && (message.tool_calls?.length ?? 0) > 0);
    const callId = call?.tool_calls?.[0]?.id;
    expect(callId).toBeDefined();
    const observation = messages.find((message) => message.role === 'tool' && message.tool_call_id === callId);
    expect(observation?.content).toContain('canceled');
  });

  it('denies a write when no console is attached, and says so in the report', async () => {
    const server = await startServer({
      steps: [
        { toolCalls: [{ id: 'w', name: 'write_file', arguments: { path: 'out.txt', content: 'pwned' } }] },
        { text: 'I could not write the file' },
      ],
      // Even a server that allows what the policy asks about never allows it for a remote task.
      settings: { approval: 'allow' },
    });
    const a2a = await client(server);
    const task = asTask(await a2a.sendMessage(send('write out.txt')));
    expect(task.status?.state).toBe(TaskState.completed);
    expect(existsSync(path.join(server.workDir, 'out.txt'))).toBe(false);
    const report = textOf(task.status?.message);
    expect(report).toContain('I could not write the file');
    expect(report).toContain('Tool calls denied (nobody allowed them):\n- write_file: permission denied');
    expect(report).toContain('no console or channel client controls its session');
  });

  it('runs the write when a console client attached to the session allows it', async () => {
    const gate = new GateTool();
    const server = await startServer({
      steps: [
        gateCall('wait for the console'),
        { toolCalls: [{ id: 'w', name: 'write_file', arguments: { path: 'out.txt', content: 'approved' } }] },
        { text: 'written' },
      ],
      tools: [gate.tool],
    });
    const a2a = await client(server);
    const stream = a2a.sendMessageStream(send('write out.txt'));
    const first = await stream.next();
    const taskId = first.value?.payload?.$case === 'task' ? first.value.payload.value.id : '';
    const rest = (async () => {
      const seen: StreamResponse[] = [];
      for await (const event of stream) seen.push(event);
      return seen;
    })();
    const console = await WsClient.connect(server.address.http);
    await console.hello();
    console.send({ type: 'open', session_id: `a2a-${taskId}` });
    await console.next('session_opened');
    await gate.whenStarted();
    gate.release();
    const request = await console.next('approval_request');
    expect(request).toMatchObject({ tool_name: 'write_file', risk: 'mutating' });
    console.send({ type: 'approval_response', request_id: request.request_id, decision: 'allow_once' });
    const events = await rest;
    const last = events.at(-1)?.payload;
    expect(last?.$case === 'statusUpdate' && last.value.status?.state).toBe(TaskState.completed);
    expect(last?.$case === 'statusUpdate' && textOf(last.value.status?.message)).toBe('written');
    expect(existsSync(path.join(server.workDir, 'out.txt'))).toBe(true);
  });

  it('denies when the attached console does not answer within the approval timeout', async () => {
    const gate = new GateTool();
    const timers: Array<{ ms: number; fire: () => void }> = [];
    const server = await startServer({
      steps: [
        gateCall('wait for the console'),
        { toolCalls: [{ id: 'w', name: 'write_file', arguments: { path: 'out.txt', content: 'late' } }] },
        { text: 'gave up' },
      ],
      tools: [gate.tool],
      server: {
        a2a: {
          approvalTimeoutMs: 30_000,
          setTimer: (fire, ms) => {
            timers.push({ ms, fire });
            return () => undefined;
          },
        },
      },
    });
    const a2a = await client(server);
    const stream = a2a.sendMessageStream(send('write out.txt'));
    const first = await stream.next();
    const taskId = first.value?.payload?.$case === 'task' ? first.value.payload.value.id : '';
    const rest = (async () => {
      const seen: StreamResponse[] = [];
      for await (const event of stream) seen.push(event);
      return seen;
    })();
    const console = await WsClient.connect(server.address.http);
    await console.hello();
    console.send({ type: 'open', session_id: `a2a-${taskId}` });
    await console.next('session_opened');
    await gate.whenStarted();
    gate.release();
    await console.next('approval_request');
    expect(timers.map((timer) => timer.ms)).toEqual([30_000]);
    timers[0]?.fire();
    const resolved = await console.next('approval_resolved');
    expect(resolved).toMatchObject({ decision: 'deny', by: 'claw-server (A2A: no operator answered)' });
    const events = await rest;
    const last = events.at(-1)?.payload;
    expect(last?.$case === 'statusUpdate' && textOf(last.value.status?.message)).toContain('no operator answered within 30000 ms');
    expect(existsSync(path.join(server.workDir, 'out.txt'))).toBe(false);
  });
});

describe('claw → claw', () => {
  async function delegatingClaw(peer: Record<string, unknown>, steps: ScriptedStep[]) {
    const workDir = await workspace();
    await mkdir(path.join(workDir, '.claw'));
    await writeFile(path.join(workDir, '.claw', 'a2a.json'), JSON.stringify({ peers: { remote: peer } }));
    const store = new MemorySessionManager();
    const provider = new ScriptedProvider(steps);
    const factory = new RuntimeFactory({
      // The workspace's a2a.json is used only when it is trusted (TRUST-2).
      settings: settings({ approval: 'allow', trustWorkspaces: true }),
      provider,
      spawner: plainCommandSpawner(),
      sessions: { open: (id, open) => store.open(id, open), list: () => store.list() },
      env: { REMOTE_CLAW_TOKEN: token },
    });
    const runtime = await factory.createRuntime({ workDir });
    return { factory, runtime, provider };
  }

  for (const protocol of ['a2a', 'claw'] as const) {
    it(`delegates a task to another claw-server (${protocol === 'a2a' ? 'official protocol' : 'seed envelope'})`, async () => {
      const remote = await startServer({ steps: [{ text: `remote report over ${protocol}` }] });
      const local = await delegatingClaw(
        { url: base(remote), protocol, headers: { Authorization: 'Bearer ${REMOTE_CLAW_TOKEN}' } },
        [
          { toolCalls: [{ id: 'd', name: 'delegate_agent', arguments: { message: 'do the remote part', peer: 'remote' } }] },
          { text: 'local done' },
        ],
      );
      try {
        const result = await local.runtime.start('delegate').wait();
        expect(result.status).toBe('completed');
        const observation = local.runtime.session.history()[2] as ToolMessage;
        expect(observation.isError ?? false).toBe(false);
        expect(observation.content).toContain(`remote report over ${protocol}`);
        expect(remote.provider.calls[0]?.request.messages.at(-1)).toMatchObject({ content: 'do the remote part' });
      } finally {
        await local.factory.close();
      }
    });
  }

  it('the envelope refuses an empty message and a missing token', async () => {
    const server = await startServer({ steps: [{ text: 'never' }] });
    const post = (body: unknown, given?: string) => fetch(`${base(server)}/a2a/message`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(given === undefined ? {} : { Authorization: `Bearer ${given}` }) },
      body: JSON.stringify(body),
    });
    const empty = await post({ message: '  ' }, token);
    expect(empty.status).toBe(400);
    expect(await empty.json()).toEqual({
      code: 400,
      message: 'the message is empty: send {"message": "<what to do>"}',
      data: null,
    });
    expect((await post({ message: 'hi' })).status).toBe(401);
    expect(server.provider.calls).toHaveLength(0);
  });
});

describe('a request for input of an MCP server in an inbound A2A task (MCP-7)', () => {
  it('is declined at once when no console is attached, as an approval is denied', async () => {
    const askServer = {
      ...elicitServerLaunch(),
      risk: 'safe',
    };
    const form = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
    const server = await startServer({
      steps: [
        { toolCalls: [{ id: 'ask', name: 'mcp_sdk_ask', arguments: { message: 'Who are you?', requestedSchema: form } }] },
        { text: 'nobody said' },
      ],
      settings: { trustWorkspaces: true },
    });
    await mkdir(path.join(server.workDir, '.claw'));
    await writeFile(path.join(server.workDir, '.claw', 'mcp.json'), JSON.stringify({ mcpServers: { sdk: askServer } }));
    const a2a = await client(server);
    const task = asTask(await a2a.sendMessage(send('who am I?')));
    expect(task.status?.state).toBe(TaskState.completed);
    const watcher = await WsClient.connect(server.address.http);
    await watcher.hello();
    watcher.send({ type: 'open', session_id: `a2a-${task.id}`, role: 'observer' });
    const history = await watcher.next('history');
    const observation = (history.messages as Array<{ role: string; content: string }>)
      .find((message) => message.role === 'tool');
    expect(JSON.parse(observation?.content ?? 'null')).toEqual({ action: 'decline' });
  });
});
