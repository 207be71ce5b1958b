// An MCP server's request for input (MCP-7) through `claw acp`: put to an editor that offers forms
// as `elicitation/create`, its answer checked against the form and passed back; declined for an
// editor that does not offer forms, or whose answer does not fit; withdrawn when the prompt is
// cancelled or the time for an answer is up. The MCP server is a real SDK server on stdio (the
// editor's own, for the session) that asks during its `ask` tool and answers with what it got.
import { realpath } from 'node:fs/promises';
import type { CreateElicitationResponse, McpServer, Stream } from '@agentclientprotocol/sdk';
import { ndJsonStream } from '@agentclientprotocol/sdk';
import { FakeOpenAIServer } from '@claw/testing/node';
import { afterEach, describe, expect, it } from 'vitest';
import { ClawAcpAgent } from '../src/acp/agent.js';
import { acpAgentApp } from '../src/acp/run.js';
import { EditorClient, TestEditor, type EditorForms } from './acp-helpers.js';
import { cleanUp, eventually, messagesOf, modelEnv, tempDir } from './helpers.js';
import { elicitServerLaunch } from '../../../packages/runtime/test/fixtures/elicit-server-launch.mjs';

let model: FakeOpenAIServer | undefined;
const editors: TestEditor[] = [];
const closing: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const editor of editors.splice(0)) editor.kill();
  for (const close of closing.splice(0)) await close();
  await model?.close();
  model = undefined;
  await cleanUp();
});

/** The editor's MCP server for the session: its tool `ask` asks for input. */
const askServer: McpServer = {
  name: 'sdk',
  ...elicitServerLaunch(),
  env: [],
};

const form = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Your name', minLength: 2 },
    count: { type: 'integer', minimum: 1, default: 3 },
    colour: { type: 'string', enum: ['red', 'green'] },
  },
  required: ['name'],
};

async function askingModel(): Promise<FakeOpenAIServer> {
  model = await FakeOpenAIServer.start({
    turns: [
      {
        toolCalls: [{
          name: 'mcp_sdk_ask',
          arguments: JSON.stringify({ message: 'Who are you?', requestedSchema: form }),
        }],
      },
      { text: 'thanks' },
    ],
  });
  return model;
}

/** What the server's tool answered (what it got back), as the model was told. */
function toolAnswer(server: FakeOpenAIServer): unknown {
  const tool = messagesOf(server.requests[1]).find((message) => message.role === 'tool');
  return JSON.parse(String(tool?.content));
}

function answering(response: CreateElicitationResponse, offered = true): EditorForms {
  return { answer: () => Promise.resolve(response), offered };
}

/** An editor that leaves the form open until claw withdraws it; `withdrawn` says it did. */
function waiting(): EditorForms & { withdrawn: () => boolean } {
  let withdrawn = false;
  return {
    answer: (_request, signal) => new Promise((resolve) => {
      signal.addEventListener('abort', () => {
        withdrawn = true;
        resolve({ action: 'cancel' });
      }, { once: true });
    }),
    withdrawn: () => withdrawn,
  };
}

/** Runs the asking prompt through the built `claw acp` with an editor that fills forms `forms`. */
async function ask(forms: EditorForms) {
  const server = await askingModel();
  const dir = await realpath(await tempDir('claw-acp-input-'));
  // The editor's MCP server is dangerous unless configured: its call is allowed once.
  const editor = new TestEditor({ env: modelEnv(server.baseURL), permissions: ['allow_once'], forms });
  editors.push(editor);
  await editor.initialize();
  const { sessionId } = await editor.agent.request('session/new', { cwd: dir, mcpServers: [askServer] });
  const prompt = editor.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'who am I?' }] });
  return { server, editor, sessionId, prompt };
}

describe('requests for input of MCP servers through claw acp (MCP-7)', () => {
  it('go to an editor offering forms as elicitation/create; the server gets exactly what it filled in', async () => {
    const content = { name: 'Ada', count: 5, colour: 'red' };
    const { server, editor, sessionId, prompt } = await ask(answering({ action: 'accept', content }));
    expect((await prompt).stopReason).toBe('end_turn');
    expect(editor.elicitations).toEqual([{
      mode: 'form',
      sessionId,
      message: 'MCP server "sdk" asks: Who are you?',
      requestedSchema: form,
    }]);
    expect(toolAnswer(server)).toEqual({ action: 'accept', content });
    expect(await editor.close()).toBe(0);
  });

  it('a form the editor declines or dismisses is declined or cancelled for the server', async () => {
    const declined = await ask(answering({ action: 'decline' }));
    expect((await declined.prompt).stopReason).toBe('end_turn');
    expect(toolAnswer(declined.server)).toEqual({ action: 'decline' });
    await declined.editor.close();
    await model?.close();
    const dismissed = await ask(answering({ action: 'cancel' }));
    expect((await dismissed.prompt).stopReason).toBe('end_turn');
    expect(toolAnswer(dismissed.server)).toEqual({ action: 'cancel' });
    expect(await dismissed.editor.close()).toBe(0);
  });

  it('an editor that did not offer forms at initialize is not asked: declined at once, with a note', async () => {
    const { server, editor, prompt } = await ask(
      answering({ action: 'accept', content: { name: 'Ada' } }, false),
    );
    expect((await prompt).stopReason).toBe('end_turn');
    expect(editor.elicitations).toEqual([]);
    expect(toolAnswer(server)).toEqual({ action: 'decline' });
    expect(await editor.close()).toBe(0);
    expect(editor.stderr).toContain(
      'claw: declined the request for input of MCP server "sdk": the editor cannot be asked to fill in a form',
    );
  });

  it('an answer that does not fit the form is not sent: the server gets decline, and a note says why', async () => {
    // "A" is shorter than the form allows.
    const { server, editor, prompt } = await ask(
      answering({ action: 'accept', content: { name: 'A', colour: 'red' } }),
    );
    expect((await prompt).stopReason).toBe('end_turn');
    expect(editor.elicitations).toHaveLength(1);
    expect(toolAnswer(server)).toEqual({ action: 'decline' });
    expect(await editor.close()).toBe(0);
    expect(editor.stderr).toMatch(
      /claw: declined the request for input of MCP server "sdk": the editor's answer does not fit the form \(.*name/,
    );
  });

  it('session/cancel withdraws the form the editor still shows, and the prompt stops with cancelled', async () => {
    const forms = waiting();
    const { editor, sessionId, prompt } = await ask(forms);
    expect(await eventually(async () => editor.elicitations.length === 1)).toBe(true);
    await editor.agent.notify('session/cancel', { sessionId });
    expect((await prompt).stopReason).toBe('cancelled');
    expect(await eventually(async () => forms.withdrawn())).toBe(true);
    expect(await editor.close()).toBe(0);
  });
});

/** Two ends of an in-memory ACP connection. */
function streams(): { agent: Stream; editor: Stream } {
  const toAgent = new TransformStream<Uint8Array, Uint8Array>();
  const toEditor = new TransformStream<Uint8Array, Uint8Array>();
  return {
    agent: ndJsonStream(toEditor.writable, toAgent.readable),
    editor: ndJsonStream(toAgent.writable, toEditor.readable),
  };
}

describe('a request for input the editor leaves unanswered (MCP-7)', () => {
  it('is withdrawn from the editor when the time for an answer is up, and the server gets decline', async () => {
    const server = await askingModel();
    const dir = await realpath(await tempDir('claw-acp-input-'));
    const notes: string[] = [];
    const claw = new ClawAcpAgent({
      env: modelEnv(server.baseURL),
      overrides: {},
      version: 'test',
      note: (text) => notes.push(text),
      elicitationTimeoutMs: 300,
    });
    const ends = streams();
    const connection = acpAgentApp(claw).connect(ends.agent);
    const forms = waiting();
    const editor = new EditorClient({ permissions: ['allow_once'], forms }, ends.editor);
    closing.push(async () => {
      editor.connection.close();
      connection.close();
      await claw.close();
    });
    await editor.initialize();
    const { sessionId } = await editor.agent.request('session/new', { cwd: dir, mcpServers: [askServer] });
    const done = await editor.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'who am I?' }],
    });
    expect(done.stopReason).toBe('end_turn');
    expect(editor.elicitations).toHaveLength(1);
    expect(await eventually(async () => forms.withdrawn())).toBe(true);
    expect(toolAnswer(server)).toEqual({ action: 'decline' });
    expect(notes.join('\n')).toContain('no answer came within 300 ms');
  });
});
