// `elicitation_response` (MCP-7) at the level of the channel: the message's shape is checked by
// the protocol (a bad one is refused with a clear error, the connection stays usable), and a
// connection routes a good one through its ChannelSession to the request for input waiting in
// the session. The server that asks is a real MCP SDK server on stdio (the runtime's fixture).
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseClientMessage } from '../src/index.js';
import { TestClient, cleanUp, factoryWith, settings, workspace } from './helpers.js';
import { elicitServerLaunch } from '../../runtime/test/fixtures/elicit-server-launch.mjs';

afterEach(cleanUp);

describe('the elicitation_response message (CH-1, MCP-7)', () => {
  it('takes accept with content, and decline or cancel without', () => {
    const accept = {
      type: 'elicitation_response',
      session_id: 's1',
      request_id: 'elicitation-1',
      action: 'accept',
      content: { name: 'Ada', count: 3, sure: true, colours: ['red', 'green'] },
    };
    expect(parseClientMessage(JSON.stringify(accept))).toEqual({ ok: true, message: accept });
    for (const action of ['decline', 'cancel']) {
      const line = JSON.stringify({ type: 'elicitation_response', request_id: 'r', action });
      expect(parseClientMessage(line)).toEqual({
        ok: true,
        message: { type: 'elicitation_response', request_id: 'r', action },
      });
    }
  });

  it.each([
    ['no request_id', { action: 'decline' }, /request_id/],
    ['an empty request_id', { request_id: '', action: 'decline' }, /request_id/],
    ['no action', { request_id: 'r' }, /action/],
    ['an unknown action', { request_id: 'r', action: 'maybe' }, /"accept"\|"decline"\|"cancel".*at action/s],
    ['content that is a list', { request_id: 'r', action: 'accept', content: ['Ada'] }, /content/],
    ['a field that is an object', { request_id: 'r', action: 'accept', content: { name: { first: 'Ada' } } }, /content\.name/],
    ['a list of numbers', { request_id: 'r', action: 'accept', content: { picks: [1, 2] } }, /content\.picks/],
    ['a null field', { request_id: 'r', action: 'accept', content: { name: null } }, /content\.name/],
    ['a bad session id', { session_id: '', request_id: 'r', action: 'decline' }, /session_id/],
  ])('refuses %s, saying which field is wrong', (_name, fields, field) => {
    const parsed = parseClientMessage(JSON.stringify({ type: 'elicitation_response', ...fields }));
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.code).toBe('invalid_message');
    expect(parsed.message).toMatch(/^invalid elicitation_response message: /);
    expect(parsed.message).toMatch(field);
  });

  it('refuses a bad one over a connection with an error, and the connection stays usable', async () => {
    const workDir = await workspace();
    const client = new TestClient({ runtimes: factoryWith([]), workspaces: [workDir] });
    await client.send({ type: 'elicitation_response', request_id: 'r', action: 'maybe' });
    expect(await client.next('error')).toMatchObject({ code: 'invalid_message' });
    await client.send({ type: 'elicitation_response', request_id: 'r', action: 'decline' });
    expect(client.of('error')[1]).toMatchObject({ code: 'no_session' });
    await client.send({ type: 'ping' });
    expect(await client.next('pong')).toEqual({ type: 'pong' });
  });
});

// An MCP server (the SDK's, on stdio) that asks during its `ask` tool and answers with what it
// got back.
const askServer = {
  ...elicitServerLaunch(),
  // The approval gate is not what is tested: the call goes straight to the server.
  risk: 'safe',
};

const form = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Your name', minLength: 2 },
    count: { type: 'integer', minimum: 1, default: 3 },
  },
  required: ['name'],
};

async function askingWorkspace(): Promise<string> {
  const workDir = await workspace();
  await mkdir(path.join(workDir, '.claw'));
  await writeFile(path.join(workDir, '.claw', 'mcp.json'), JSON.stringify({ mcpServers: { sdk: askServer } }));
  return workDir;
}

describe('a connection routes elicitation_response to the waiting request (MCP-7, CH-10)', () => {
  it('an observer and a wrong answer are refused; a controller\'s answer reaches the server; the first answer wins', async () => {
    const workDir = await askingWorkspace();
    const runtimes = factoryWith([
      { toolCalls: [{ id: 'c1', name: 'mcp_sdk_ask', arguments: { message: 'Who are you?', requestedSchema: form } }] },
      { text: 'thanks' },
    ], { settings: settings({ trustWorkspaces: true }) });
    const alice = new TestClient({ runtimes, workspaces: [workDir], name: 'alice' });
    const eve = new TestClient({ runtimes, workspaces: [workDir], name: 'eve' });
    await alice.send({ type: 'open', session_id: 'asked' });
    await eve.send({ type: 'open', session_id: 'asked', role: 'observer' });
    await alice.send({ type: 'prompt', content: 'who am I?' });
    const request = await alice.next('elicitation_request');
    expect(request).toMatchObject({ session_id: 'asked', server: 'sdk', message: 'Who are you?', requested_schema: form });
    expect(await eve.next('elicitation_request')).toEqual(request);
    const answer = { type: 'elicitation_response', session_id: 'asked', request_id: request.request_id };

    await eve.send({ ...answer, action: 'accept', content: { name: 'Eve' } });
    expect(await eve.next('error')).toMatchObject({
      code: 'elicitation_not_pending',
      session_id: 'asked',
      request_id: request.request_id,
    });
    expect(eve.of('error')[0]?.message).toMatch(/observer/);
    await alice.send({ ...answer, request_id: 'elicitation-unknown', action: 'decline' });
    expect(await alice.next('error')).toMatchObject({ code: 'elicitation_not_pending', request_id: 'elicitation-unknown' });
    // Too short for the form: refused, and the request still waits.
    await alice.send({ ...answer, action: 'accept', content: { name: 'A' } });
    expect(alice.of('error')[1]).toMatchObject({ code: 'invalid_elicitation_answer', request_id: request.request_id });
    expect(alice.of('elicitation_resolved')).toEqual([]);

    await alice.send({ ...answer, action: 'accept', content: { name: 'Ada' } });
    for (const client of [alice, eve]) {
      expect(await client.next('elicitation_resolved')).toMatchObject({
        request_id: request.request_id,
        action: 'accept',
        by: 'alice',
      });
    }
    await alice.send({ ...answer, action: 'decline' });
    expect(alice.of('error')[2]).toMatchObject({ code: 'elicitation_not_pending', request_id: request.request_id });
    await alice.next('task_completed');
    // What the server got back, as its tool said: the answer, with the form's default filled in.
    const result = alice.of('tool_result')[0];
    expect(JSON.parse(result?.result ?? 'null')).toEqual({ action: 'accept', content: { name: 'Ada', count: 3 } });
  });
});
