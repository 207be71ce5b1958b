import { readFile, readdir, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { RequestError } from '@agentclientprotocol/sdk';
import { FakeOpenAIServer, type FakeTurn } from '@claw/testing/node';
import { afterEach, describe, expect, it } from 'vitest';
import { TestEditor, type EditorOptions } from './acp-helpers.js';
import { ClawProcess, cleanUp, eventually, modelEnv, tempDir } from './helpers.js';

// `claw acp` driven by the ACP SDK's client side, as an editor drives it (ACP-1 … ACP-6).

let server: FakeOpenAIServer | undefined;
const editors: TestEditor[] = [];

afterEach(async () => {
  for (const editor of editors.splice(0)) editor.kill();
  await server?.close();
  server = undefined;
  await cleanUp();
});

function editor(options: Omit<EditorOptions, 'env'> & { env?: Record<string, string> } = {}): TestEditor {
  if (server === undefined) throw new Error('no model server');
  const made = new TestEditor({ env: options.env ?? modelEnv(server.baseURL), ...options });
  editors.push(made);
  return made;
}

async function workspace(): Promise<string> {
  const dir = await realpath(await tempDir('claw-acp-'));
  await writeFile(path.join(dir, 'README.md'), '# hello\n');
  return dir;
}

type StoredMessage = {
  role: string;
  content: string;
  toolCalls?: Array<{ name: string; arguments: string }>;
};
const call = (name: string, args: Record<string, unknown>) => ({ name, arguments: JSON.stringify(args) });

/** The error a JSON-RPC request was answered with. */
async function rpcError(promise: Promise<unknown>): Promise<RequestError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(RequestError);
  return error as RequestError;
}

describe('claw acp through the SDK\'s client (ACP-1 … ACP-3)', () => {
  it('initializes, opens a session, and runs a task: a read, an edit the editor allows (with its diff), a bash call it rejects', async () => {
    server = await FakeOpenAIServer.start({
      turns: [
        { reasoning: ['Reading first.'], toolCalls: [call('read_file', { path: 'README.md' })] },
        { toolCalls: [call('edit_file', { path: 'README.md', old_string: '# hello', new_string: '# hello, editor' })] },
        { toolCalls: [call('bash', { command: 'rm -f README.md.bak' })] },
        { text: 'Edited README.md.', usage: { promptTokens: 300, completionTokens: 10 } },
      ],
    });
    const dir = await workspace();
    const acp = editor({ permissions: ['allow_once', 'reject_once'] });
    const init = await acp.initialize();
    expect(init).toMatchObject({
      protocolVersion: 1,
      agentCapabilities: { loadSession: true, promptCapabilities: { embeddedContext: true, image: false } },
      agentInfo: { name: 'claw' },
    });
    const { sessionId } = await acp.agent.request('session/new', { cwd: dir, mcpServers: [] });
    expect(sessionId).toMatch(/^acp-/);
    const { stopReason } = await acp.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'Edit the readme' }],
    });
    expect(stopReason).toBe('end_turn');
    expect(await readFile(path.join(dir, 'README.md'), 'utf8')).toBe('# hello, editor\n');

    expect(acp.of(sessionId, 'agent_thought_chunk').map((update) => update.content)).toEqual([{ type: 'text', text: 'Reading first.' }]);
    expect(acp.of(sessionId, 'agent_message_chunk').map((update) => update.content)).toEqual([{ type: 'text', text: 'Edited README.md.' }]);
    const calls = acp.of(sessionId, 'tool_call');
    expect(calls.map((update) => [update.kind, update.title, update.status])).toEqual([
      ['read', 'Read README.md', 'pending'],
      ['edit', 'Edit README.md', 'pending'],
      ['execute', 'Run rm -f README.md.bak', 'pending'],
    ]);
    expect(calls[1]?.locations).toEqual([{ path: path.join(dir, 'README.md') }]);
    expect(calls[1]?.content).toEqual([{ type: 'diff', path: path.join(dir, 'README.md'), oldText: '# hello', newText: '# hello, editor' }]);
    const updates = acp.of(sessionId, 'tool_call_update');
    const statuses = (id: string) =>
      updates.filter((update) => update.toolCallId === id).map((update) => update.status);
    expect(statuses(calls[0]?.toolCallId ?? '')).toEqual(['in_progress', 'completed']);
    expect(statuses(calls[1]?.toolCallId ?? '')).toEqual(['in_progress', 'completed']);
    expect(statuses(calls[2]?.toolCallId ?? '')).toEqual(['failed']);
    // The edit asked (its diff shown), the bash call asked and was rejected; the read asked nothing.
    const asked = acp.permissionRequests.map((request) => [request.toolCall.toolCallId, request.toolCall.title]);
    expect(asked).toEqual([
      [calls[1]?.toolCallId, 'edit_file will edit README.md'],
      [calls[2]?.toolCallId, expect.stringContaining('rm -f README.md.bak')],
    ]);
    expect(acp.permissionRequests[0]?.options.map((option) => option.kind)).toEqual(['allow_once', 'allow_always', 'reject_once']);
    expect(acp.of(sessionId, 'usage_update').at(-1)).toMatchObject({ used: 310 });
    // The answers are claw's audit too, like any client's.
    const audit = (await readFile(path.join(dir, '.claw/audit.jsonl'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { decision: string; toolName: string });
    expect(audit.map((entry) => [entry.toolName, entry.decision]))
      .toEqual([['read_file', 'policy_allow'], ['edit_file', 'allow_once'], ['bash', 'deny']]);
    expect(await acp.close()).toBe(0);
  });

  it('allow always is claw\'s grant for the session: the same call is not asked again', async () => {
    const write = call('write_file', { path: 'notes.txt', content: 'v1\n' });
    server = await FakeOpenAIServer.start({ turns: [{ toolCalls: [write] }, { toolCalls: [write] }, { text: 'twice' }] });
    const dir = await workspace();
    const acp = editor({ permissions: ['allow_always'] });
    await acp.initialize();
    const { sessionId } = await acp.agent.request('session/new', { cwd: dir, mcpServers: [] });
    expect((await acp.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'write twice' }] })).stopReason).toBe('end_turn');
    expect(acp.permissionRequests).toHaveLength(1);
    expect(acp.of(sessionId, 'tool_call_update').filter((update) => update.status === 'completed')).toHaveLength(2);
  });

  it('session/cancel mid-tool: the command stops, the prompt stops with cancelled, the history stays paired', async () => {
    server = await FakeOpenAIServer.start({
      turns: [{ toolCalls: [call('bash', { command: 'sleep 30' })] }, { text: 'never' }],
    });
    const dir = await workspace();
    const acp = editor({ permissions: ['allow_once'] });
    await acp.initialize();
    const { sessionId } = await acp.agent.request('session/new', { cwd: dir, mcpServers: [] });
    const prompt = acp.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'wait' }] });
    expect(await eventually(async () => acp.of(sessionId, 'tool_call_update').some((update) => update.status === 'in_progress'))).toBe(true);
    await acp.agent.notify('session/cancel', { sessionId });
    expect((await prompt).stopReason).toBe('cancelled');
    const [toolCall] = acp.of(sessionId, 'tool_call');
    expect(acp.of(sessionId, 'tool_call_update').at(-1)).toMatchObject({ toolCallId: toolCall?.toolCallId, status: 'failed' });
    expect(await acp.close()).toBe(0);
    // Stored, paired: the call has its "canceled" Observation.
    const file = await readFile(path.join(dir, `.claw/sessions/${sessionId}.jsonl`), 'utf8');
    expect(file).toContain('tool call canceled');
  });

  it('EOF on stdin mid-tool: the task is canceled, the session stored and let go, claw exits 0', async () => {
    server = await FakeOpenAIServer.start({
      turns: [{ toolCalls: [call('bash', { command: 'sleep 30' })] }, { text: 'after' }],
    });
    const dir = await workspace();
    const acp = editor({ permissions: ['allow_once'] });
    await acp.initialize();
    const { sessionId } = await acp.agent.request('session/new', { cwd: dir, mcpServers: [] });
    void acp.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'wait' }] })
      .catch(() => undefined);
    const running = async () => acp.of(sessionId, 'tool_call_update').some((update) => update.status === 'in_progress');
    expect(await eventually(running)).toBe(true);
    // The editor goes away without a word: claw does not wait out the 30 s command.
    expect(await acp.close()).toBe(0);
    const file = await readFile(path.join(dir, `.claw/sessions/${sessionId}.jsonl`), 'utf8');
    expect(file).toContain('tool call canceled');
    // Let go: another client takes the session at once and carries on.
    const cli = await ClawProcess.run(['-p', 'go on', '--workdir', dir, '--session', sessionId], {
      env: modelEnv(server.baseURL),
    });
    expect(cli.status, cli.stderr).toBe(0);
    expect(cli.stdout).toContain('after');
  });

  it('a permission request the editor leaves open is withdrawn when the prompt is cancelled', async () => {
    server = await FakeOpenAIServer.start({ turns: [{ toolCalls: [call('write_file', { path: 'a.txt', content: 'x' })] }] });
    const dir = await workspace();
    const acp = editor({ permissions: ['cancelled'] });
    await acp.initialize();
    const { sessionId } = await acp.agent.request('session/new', { cwd: dir, mcpServers: [] });
    const prompt = acp.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'write' }] });
    expect(await eventually(async () => acp.permissionRequests.length === 1)).toBe(true);
    await acp.agent.notify('session/cancel', { sessionId });
    expect((await prompt).stopReason).toBe('cancelled');
    expect(await readdir(dir)).not.toContain('a.txt');
  });
});

describe('session/load, errors and the end of the connection (ACP-1, ACP-5)', () => {
  it('session/load after kill -9: the history is replayed, the interrupted call shows as failed, and the session goes on', async () => {
    server = await FakeOpenAIServer.start({
      turns: [{ toolCalls: [call('bash', { command: 'sleep 30.5151' })] }, { text: 'back again' }],
    });
    const dir = await workspace();
    const first = editor({ permissions: ['allow_once'] });
    await first.initialize();
    const { sessionId } = await first.agent.request('session/new', { cwd: dir, mcpServers: [] });
    void first.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'run the long one' }] }).catch(() => undefined);
    expect(await eventually(async () => first.of(sessionId, 'tool_call_update').some((update) => update.status === 'in_progress'))).toBe(true);
    first.kill();
    await first.exited;

    const second = editor();
    await second.initialize();
    await second.agent.request('session/load', { sessionId, cwd: dir, mcpServers: [] });
    const replayed = second.updates
      .filter((entry) => entry.sessionId === sessionId)
      .map((entry) => entry.update.sessionUpdate);
    expect(replayed).toEqual(['user_message_chunk', 'tool_call', 'tool_call_update']);
    expect(second.of(sessionId, 'user_message_chunk')[0]?.content).toEqual({ type: 'text', text: 'run the long one' });
    const repaired = second.of(sessionId, 'tool_call_update')[0];
    expect(repaired?.status).toBe('failed');
    expect(JSON.stringify(repaired?.content)).toMatch(/outcome unknown|interrupted/);
    expect((await second.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'go on' }] })).stopReason).toBe('end_turn');
    expect(await second.close()).toBe(0);
  });

  it('answers bad input with JSON-RPC errors and keeps serving; a second editor on a held session gets session_locked', async () => {
    server = await FakeOpenAIServer.start({ turns: [{ text: 'slow', delayMs: 2_000 }, { text: 'ok' }] });
    const dir = await workspace();
    const acp = editor();
    await acp.initialize();
    // A cwd that is relative, or not there.
    expect((await rpcError(acp.agent.request('session/new', { cwd: 'relative/dir', mcpServers: [] }))).code).toBe(-32602);
    expect((await rpcError(acp.agent.request('session/new', { cwd: path.join(dir, 'missing'), mcpServers: [] }))).message).toContain('is not an existing folder');
    // A session claw does not know.
    expect((await rpcError(acp.agent.request('session/prompt', { sessionId: 'nope', prompt: [{ type: 'text', text: 'hi' }] }))).code).toBe(-32002);
    expect((await rpcError(acp.agent.request('session/load', { sessionId: 'nope', cwd: dir, mcpServers: [] }))).message).toContain('there is no session "nope"');
    // An unknown method.
    expect((await rpcError(acp.agent.request('session/frobnicate', {}))).code).toBe(-32601);
    // A malformed line: the process answers and goes on.
    acp.child.stdin?.write('{"jsonrpc": "2.0", "id": 99, "method": \n');
    const { sessionId } = await acp.agent.request('session/new', { cwd: dir, mcpServers: [] });
    // A prompt while a task runs.
    const first = acp.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'one' }] });
    await eventually(async () => (server?.requests.length ?? 0) > 0);
    const busy = await rpcError(acp.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'two' }] }));
    expect(busy.data).toMatchObject({ code: 'session_busy' });
    // Another editor on the same session, while this one holds it.
    const other = editor();
    await other.initialize();
    const locked = await rpcError(other.agent.request('session/load', { sessionId, cwd: dir, mcpServers: [] }));
    expect(locked.data).toMatchObject({ code: 'session_locked' });
    expect(locked.message).toMatch(/in use/);
    expect((await first).stopReason).toBe('end_turn');
    // Images are not offered.
    expect((await rpcError(acp.agent.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }],
    }))).code).toBe(-32602);
    expect(await acp.close()).toBe(0);
    expect(await other.close()).toBe(0);
  });

  it('takes embedded resources and resource links in a prompt', async () => {
    server = await FakeOpenAIServer.start({ turns: [{ text: 'seen' }] });
    const dir = await workspace();
    const acp = editor();
    await acp.initialize();
    const { sessionId } = await acp.agent.request('session/new', { cwd: dir, mcpServers: [] });
    await acp.agent.request('session/prompt', {
      sessionId,
      prompt: [
        { type: 'text', text: 'Look at this:' },
        { type: 'resource', resource: { uri: `file://${dir}/a.ts`, text: 'export const a = 1;' } },
        { type: 'resource_link', uri: `file://${dir}/b.ts`, name: 'b.ts' },
      ],
    });
    const body = server.requests[0]?.body as { messages: Array<{ role: string; content: string }> };
    expect(body.messages.find((message) => message.role === 'user')?.content).toBe(
      `Look at this:\n\n<resource uri="file://${dir}/a.ts">\nexport const a = 1;\n</resource>\n\n[b.ts: file://${dir}/b.ts]`,
    );
    expect(await acp.close()).toBe(0);
  });
});

describe('the editor\'s MCP servers (ACP-1)', () => {
  it('join the workspace\'s own for the session: their tools are offered and called through claw\'s gate', async () => {
    const testServer = fileURLToPath(new URL('../../../packages/mcp/test/fixtures/test-server.mjs', import.meta.url));
    server = await FakeOpenAIServer.start({
      turns: [{ toolCalls: [call('mcp_editors_alpha', {})] }, { text: 'called' }],
    });
    const dir = await workspace();
    const acp = editor({ permissions: ['allow_once'] });
    await acp.initialize();
    const { sessionId } = await acp.agent.request('session/new', {
      cwd: dir,
      mcpServers: [{ name: 'editors', command: process.execPath, args: [testServer], env: [] }],
    });
    const done = await acp.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'call alpha' }] });
    expect(done.stopReason).toBe('end_turn');
    const body = server.requests[0]?.body as { tools: Array<{ function: { name: string } }> };
    const tools = body.tools.map((tool) => tool.function.name);
    expect(tools).toContain('mcp_editors_alpha');
    // An MCP tool is dangerous unless configured: the editor was asked.
    expect(acp.permissionRequests.map((request) => request.toolCall.toolCallId)).toHaveLength(1);
    expect(acp.of(sessionId, 'tool_call_update').at(-1)).toMatchObject({ status: 'completed' });
    expect(await acp.close()).toBe(0);
  });
});

describe('the editor\'s file system (ACP-4)', () => {
  it('with fs offered, the file tools read the editor\'s unsaved buffer and write through it; the disk is left alone', async () => {
    server = await FakeOpenAIServer.start({
      turns: [
        { toolCalls: [call('read_file', { path: 'README.md' })] },
        { toolCalls: [call('edit_file', { path: 'README.md', old_string: 'unsaved', new_string: 'edited' })] },
        { text: 'done' },
      ],
    });
    const dir = await workspace();
    const file = path.join(dir, 'README.md');
    const buffers = new Map([[file, '# unsaved change\n']]);
    const acp = editor({ buffers, permissions: ['allow_once'] });
    await acp.initialize();
    const { sessionId } = await acp.agent.request('session/new', { cwd: dir, mcpServers: [] });
    expect((await acp.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'edit' }] })).stopReason).toBe('end_turn');
    // The model read the buffer, not the disk.
    const body = server.requests[1]?.body as { messages: Array<{ role: string; content: string }> };
    expect(body.messages.find((message) => message.role === 'tool')?.content).toContain('# unsaved change');
    expect(buffers.get(file)).toBe('# edited change\n');
    expect(acp.writes.map((write) => write.path)).toEqual([file]);
    expect(await readFile(file, 'utf8')).toBe('# hello\n');
    // A path outside the workspace never reaches the editor.
    expect(acp.reads.every((read) => read.path.startsWith(dir))).toBe(true);
    expect(await acp.close()).toBe(0);
  });
});

describe('the same task through claw acp and claw -p (ACP-6)', () => {
  it('gives the same tool calls, files and session log', async () => {
    const script = (): FakeTurn[] => [
      { toolCalls: [call('read_file', { path: 'README.md' })], usage: { promptTokens: 100, completionTokens: 5 } },
      { toolCalls: [call('write_file', { path: 'NOTES.md', content: 'notes\n' })], usage: { promptTokens: 120, completionTokens: 8 } },
      { text: 'Wrote NOTES.md.', usage: { promptTokens: 140, completionTokens: 4 } },
    ];
    server = await FakeOpenAIServer.start({ turns: [...script(), ...script()] });
    const viaAcp = await workspace();
    const acp = editor({ permissions: ['allow_once'] });
    await acp.initialize();
    const { sessionId } = await acp.agent.request('session/new', { cwd: viaAcp, mcpServers: [] });
    await acp.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'take notes' }] });
    expect(await acp.close()).toBe(0);
    const viaCli = await workspace();
    const cli = await ClawProcess.run(['-p', 'take notes', '--workdir', viaCli, '--approval', 'allow', '--session', sessionId], {
      env: modelEnv(server.baseURL),
    });
    expect(cli.status, cli.stderr).toBe(0);
    expect(await readFile(path.join(viaAcp, 'NOTES.md'), 'utf8')).toBe(await readFile(path.join(viaCli, 'NOTES.md'), 'utf8'));
    type Body = { messages: unknown[]; tools: unknown[] };
    const [first, second] = [server.requests[0], server.requests[3]].map((request) => request?.body as Body);
    // The same system prompt (bar the workspace path and the approval mode), tools and conversation.
    expect(second?.tools).toEqual(first?.tools);
    const history = async (dir: string) => {
      const lines = (await readFile(path.join(dir, `.claw/sessions/${sessionId}.jsonl`), 'utf8')).trim().split('\n');
      return lines
        .map((line) => JSON.parse(line) as { type: string; messages?: StoredMessage[] })
        .filter((record) => record.type === 'append')
        .flatMap((record) => record.messages ?? [])
        .map((message) => ({
          role: message.role,
          content: message.content,
          calls: message.toolCalls?.map((each) => [each.name, each.arguments]),
        }));
    };
    expect(await history(viaAcp)).toEqual(await history(viaCli));
  });
});
