// Requests for input of MCP servers through the runtime (MCP-7): a real SDK server (stdio) asks
// during a tool call; the request reaches whoever answers the session's approvals (a
// channel client through `respondElicitation`, an in-process handler's `elicit`), as
// `elicitation_request` / `elicitation_resolved` events; nobody to ask, or no answer in time,
// is a `decline`.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ApprovalHandler, ElicitationPrompt } from '@claw/approval';
import type { Message, SessionEvent, SessionEventOf } from '@claw/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../src/index.js';
import { cleanUp, scriptedFactory, settings, tempWorkspace, until } from './helpers.js';
import { elicitServerLaunch } from './fixtures/elicit-server-launch.mjs';

// An MCP server (the SDK's, on stdio) whose `ask` tool asks for input and answers with what it got.
const askServer = elicitServerLaunch();

afterEach(cleanUp);

const form = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Your name', minLength: 1 },
    count: { type: 'integer', minimum: 1, default: 3 },
  },
  required: ['name'],
};

async function workspace(): Promise<{ workDir: string }> {
  const workDir = await tempWorkspace('claw-runtime-elicit-');
  await mkdir(path.join(workDir, '.claw'));
  await writeFile(
    path.join(workDir, '.claw', 'mcp.json'),
    JSON.stringify({ mcpServers: { sdk: askServer } }),
  );
  return { workDir };
}

/** A model that calls the server's `ask` tool with the form, then ends. */
function asking(options: { elicitationTimeoutMs?: number } = {}) {
  return scriptedFactory([
    { toolCalls: [{ id: 'c1', name: 'mcp_sdk_ask', arguments: { message: 'Who are you?', requestedSchema: form } }] },
    { text: 'done' },
  ], {
    settings: settings({ trustWorkspaces: true }),
    mcp: { ...(options.elicitationTimeoutMs === undefined ? {} : options) },
  });
}

/** What the server got back, as its `ask` tool reports it. */
function toolResult(runtime: Runtime): unknown {
  const result = runtime.session.history().find((message: Message) => message.role === 'tool');
  return JSON.parse(result?.content ?? 'null');
}

const typeIs = <T extends SessionEvent['type']>(type: T) =>
  (event: SessionEvent): event is SessionEventOf<T> => event.type === type;

describe('requests for input of MCP servers (MCP-7)', () => {
  it('a channel client answers: a wrong answer is refused and may be given again', async () => {
    const { workDir } = await workspace();
    const { factory } = asking();
    // No approval handler: a channel client, which answers through respond…
    const runtime = await factory.createRuntime({ workDir });
    const events = runtime.events();
    const task = runtime.start('ask me');
    const seen = await until(events, (event) => event.type === 'elicitation_request');
    const request = seen.find(typeIs('elicitation_request'))!;
    expect(request).toMatchObject({
      server: 'sdk',
      message: 'Who are you?',
      requested_schema: form,
      task_id: task.id,
    });
    expect(runtime.snapshot().pendingElicitations).toEqual([request]);
    expect(runtime.state).toBe('awaiting_approval');
    expect(() => runtime.respondElicitation(request.request_id, { action: 'accept', content: { name: '' } }))
      .toThrow(expect.objectContaining({ code: 'invalid_elicitation_answer' }));
    runtime.respondElicitation(request.request_id, { action: 'accept', content: { name: 'Ada' } }, 'console');
    expect(() => runtime.respondElicitation(request.request_id, { action: 'decline' }))
      .toThrow(expect.objectContaining({ code: 'elicitation_not_pending' }));
    const rest = await until(events, (event) => event.type === 'task_completed');
    expect(rest.find(typeIs('elicitation_resolved'))).toMatchObject({
      request_id: request.request_id,
      action: 'accept',
      by: 'console',
    });
    expect((await task.wait()).status).toBe('completed');
    // The form's default filled in (applyDefaults), what was entered sent.
    expect(toolResult(runtime)).toEqual({ action: 'accept', content: { name: 'Ada', count: 3 } });
  });

  it('goes to the handler that answers approvals when it can (elicit)', async () => {
    const { workDir } = await workspace();
    const { factory } = asking();
    const asked: ElicitationPrompt[] = [];
    const handler: ApprovalHandler = {
      approve: async () => 'allow_once',
      elicit: async (prompt) => {
        asked.push(prompt);
        return { action: 'accept', content: { name: 'Grace', count: 7 } };
      },
    };
    const runtime = await factory.createRuntime({ workDir, sessionId: 's1', approvalHandler: handler });
    const events = runtime.events();
    expect((await runtime.start('ask me').wait()).status).toBe('completed');
    expect(asked).toEqual([expect.objectContaining({
      sessionId: 's1',
      server: 'sdk',
      message: 'Who are you?',
      requestedSchema: form,
    })]);
    expect(asked[0]?.workDir).toBe(path.resolve(workDir));
    expect(toolResult(runtime)).toEqual({ action: 'accept', content: { name: 'Grace', count: 7 } });
    const resolved = (await until(events, (event) => event.type === 'task_completed'))
      .find(typeIs('elicitation_resolved'));
    expect(resolved).toMatchObject({ action: 'accept', by: runtime.id });
  });

  it('is declined at once when nobody could answer (a handler that cannot ask, no client)', async () => {
    const { workDir } = await workspace();
    const { factory } = asking();
    const runtime = await factory.createRuntime({
      workDir,
      approvalHandler: { approve: async () => 'allow_once' },
    });
    const events = runtime.events();
    expect((await runtime.start('ask me').wait()).status).toBe('completed');
    expect(toolResult(runtime)).toEqual({ action: 'decline' });
    const seen = await until(events, (event) => event.type === 'task_completed');
    expect(seen.find(typeIs('elicitation_resolved'))).toMatchObject({ action: 'decline', by: 'nobody' });
  });

  it('is declined when nobody answers within the time given', async () => {
    const { workDir } = await workspace();
    const { factory } = asking({ elicitationTimeoutMs: 100 });
    const runtime = await factory.createRuntime({ workDir });
    const events = runtime.events();
    expect((await runtime.start('ask me').wait()).status).toBe('completed');
    expect(toolResult(runtime)).toEqual({ action: 'decline' });
    const seen = await until(events, (event) => event.type === 'task_completed');
    const request = seen.find(typeIs('elicitation_request'))!;
    expect(seen.find(typeIs('elicitation_resolved'))).toMatchObject({
      request_id: request.request_id,
      action: 'decline',
      by: 'timeout',
    });
    expect(runtime.snapshot().pendingElicitations).toEqual([]);
  });

  it('a workspace server asks the session with a call to it in flight, not another busy session of the workspace', async () => {
    const { workDir } = await workspace();
    // The first model call (session b's) waits; the next two are session a's.
    const { factory } = scriptedFactory([
      { text: 'b never gets here', delayMs: 60_000 },
      { toolCalls: [{ id: 'c1', name: 'mcp_sdk_ask', arguments: { message: 'Who are you?', requestedSchema: form } }] },
      { text: 'done' },
    ], { settings: settings({ trustWorkspaces: true }) });
    const asked: string[] = [];
    const answering = (name: string): ApprovalHandler => ({
      approve: async () => 'allow_once',
      elicit: async () => {
        asked.push(name);
        return { action: 'accept', content: { name } };
      },
    });
    const b = await factory.createRuntime({ workDir, sessionId: 'b', approvalHandler: answering('b') });
    const a = await factory.createRuntime({ workDir, sessionId: 'a', approvalHandler: answering('a') });
    const bEvents = b.events({ after: 0 });
    const bTask = b.start('wait');
    await until(bEvents, (event) => event.type === 'thinking');
    expect(b.state).toBe('running');

    expect((await a.start('ask me').wait()).status).toBe('completed');
    expect(asked).toEqual(['a']);
    expect(toolResult(a)).toEqual({ action: 'accept', content: { name: 'a', count: 3 } });
    expect(b.snapshot().pendingElicitations).toEqual([]);
    b.cancel();
    expect((await bTask.wait()).status).toBe('canceled');
    const bSeen = await until(bEvents, (event) => event.type === 'task_canceled');
    expect(bSeen.filter(typeIs('elicitation_request'))).toEqual([]);
  });

  it("a session's own servers (an editor's) ask that session", async () => {
    const workDir = await tempWorkspace('claw-runtime-elicit-own-');
    const { factory } = scriptedFactory([
      { toolCalls: [{ id: 'c1', name: 'mcp_own_ask', arguments: { message: 'Who?', requestedSchema: form } }] },
      { text: 'done' },
    ]);
    const runtime = await factory.createRuntime({
      workDir,
      mcpServers: [{
        name: 'own',
        transport: 'stdio',
        ...askServer,
        env: {},
        enabled: true,
        risk: 'dangerous',
        toolRisk: {},
        startupTimeoutMs: 10_000,
        callTimeoutMs: 10_000,
      }],
      approvalHandler: {
        approve: async () => 'allow_once',
        elicit: async () => ({ action: 'accept', content: { name: 'Own' } }),
      },
    });
    expect((await runtime.start('ask me').wait()).status).toBe('completed');
    expect(toolResult(runtime)).toEqual({ action: 'accept', content: { name: 'Own', count: 3 } });
  });
});
