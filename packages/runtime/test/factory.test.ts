import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ClawError } from '@claw/core';
import { PendingApprovals, staticHandler } from '@claw/approval';
import { plainCommandSpawner, type CommandSpawner } from '@claw/sandbox';
import { ScriptedProvider } from '@claw/testing';
import { FakeOpenAIServer } from '@claw/testing/node';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  SessionBusyError,
  RuntimeFactory,
  createFileTracing,
  defaultSettings,
  type Settings,
} from '../src/index.js';
// Internal (not exported by the package): no app keeps runtimes by id any more.
import { UnknownRuntimeError } from '../src/errors.js';
import { RuntimeManager } from '../src/manager.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';

interface OtlpSpan {
  name: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
}

const settings = (overrides: Partial<Settings> = {}): Settings => ({
  ...defaultSettings,
  apiKey: undefined,
  baseUrl: undefined,
  approval: 'allow',
  ...overrides,
});

describe('RuntimeFactory, Runtime, Task, RuntimeManager (RT-1, RT-2)', () => {
  let workDir: string;
  let factory: RuntimeFactory | undefined;
  let server: FakeOpenAIServer | undefined;
  beforeEach(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'claw-runtime-'));
  });
  afterEach(async () => {
    await factory?.close();
    factory = undefined;
    await server?.close();
    server = undefined;
    await rm(workDir, { recursive: true, force: true });
  });

  it('refuses to build the OpenAI provider without a key, naming the variable', () => {
    let caught: unknown;
    try {
      new RuntimeFactory({ settings: settings() });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ClawError);
    expect((caught as ClawError).code).toBe('config_missing');
    expect((caught as Error).message).toMatch(/^OPENAI_API_KEY is not set/);
  });

  it('start returns a task at once; one task at a time; wait gives the result', async () => {
    const provider = new ScriptedProvider([{ text: 'hello', delayMs: 50 }, { text: 'again' }]);
    factory = new RuntimeFactory({ settings: settings(), provider, spawner: plainCommandSpawner() });
    const runtime = await factory.createRuntime({ workDir, approvalHandler: staticHandler('deny') });
    const task = runtime.start('hi');
    expect(task.status).toBe('running');
    expect(runtime.activeTask).toBe(task);
    expect(() => runtime.start('again')).toThrow(SessionBusyError);
    const result = await task.wait();
    expect(result).toMatchObject({ status: 'completed', finalText: 'hello' });
    expect(task.status).toBe('completed');
    await new Promise((resolve) => setImmediate(resolve));
    expect(runtime.activeTask).toBeUndefined();
    expect((await runtime.start('again').wait()).finalText).toBe('again');
    expect(runtime.session.history()).toHaveLength(4);
  });

  it('offers only the built-in tools it is told to (builtinTools), and names the known ones for an unknown one', async () => {
    const provider = new ScriptedProvider([
      { toolCalls: [{ id: 'b', name: 'bash', arguments: JSON.stringify({ command: 'echo hi' }) }] },
      { text: 'done' },
    ]);
    factory = new RuntimeFactory({
      settings: settings(),
      provider,
      builtinTools: ['read_file', 'edit_file'],
      subagents: false,
    });
    const runtime = await factory.createRuntime({ workDir, approvalHandler: staticHandler('allow_once') });
    expect((await runtime.start('go').wait()).status).toBe('completed');
    expect(provider.calls[0]?.request.tools?.map((tool) => tool.name)).toEqual(['read_file', 'edit_file']);
    expect(runtime.session.history()[2]).toMatchObject({ role: 'tool', toolCallId: 'b', isError: true });
    expect(runtime.session.history()[2]?.content).toContain('unknown tool "bash"');
    await factory.close();

    factory = new RuntimeFactory({ settings: settings(), provider, builtinTools: ['read_file', 'grep'] });
    const error = await factory.createRuntime({ workDir }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'unknown_builtin_tool' });
    expect((error as Error).message).toBe(
      'unknown built-in tool "grep": the built-in tools are read_file, write_file, edit_file, bash',
    );
  });

  it('opens a session once the isolation probe is done: the first request says how bash runs (REAL-1)', async () => {
    let probed!: (spawner: CommandSpawner) => void;
    const probe = new Promise<CommandSpawner>((resolve) => {
      probed = resolve;
    });
    const provider = new ScriptedProvider([{ text: 'done' }]);
    factory = new RuntimeFactory({ settings: settings(), provider, spawner: probe });
    let opened = false;
    const opening = factory.createRuntime({ workDir, approvalHandler: staticHandler('allow_once') }).then((made) => {
      opened = true;
      return made;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(opened).toBe(false);
    probed(plainCommandSpawner());
    const runtime = await opening;
    expect((await runtime.start('go').wait()).status).toBe('completed');
    expect(provider.calls[0]?.request.messages[0]?.content).toContain('Bash: not isolated');
  });

  it('starts the isolation probe when a session opens, not before; firstModelReply tells when the model first answered', async () => {
    let answer!: () => void;
    const held = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const provider = new ScriptedProvider(
      [{ text: 'done', delayMs: 1 }],
      { sleep: () => held },
    );
    factory = new RuntimeFactory({ settings: settings(), provider, spawner: plainCommandSpawner() });
    const isolation = vi.spyOn(factory, 'isolation');
    let replied = false;
    void factory.firstModelReply().then(() => {
      replied = true;
    });
    await factory.engine();
    expect(isolation).not.toHaveBeenCalled();
    const runtime = await factory.createRuntime({ workDir, approvalHandler: staticHandler('allow_once') });
    expect(isolation).toHaveBeenCalledTimes(1);
    const task = runtime.start('go');
    await vi.waitFor(() => expect(provider.calls).toHaveLength(1));
    expect(replied).toBe(false);
    answer();
    expect((await task.wait()).status).toBe('completed');
    expect(replied).toBe(true);
  });

  it('cancel and destroy stop the running task; unknown ids are typed errors', async () => {
    const provider = new ScriptedProvider([{ text: 'slow', delayMs: 60_000 }, { text: 'slow', delayMs: 60_000 }]);
    factory = new RuntimeFactory({ settings: settings(), provider, spawner: plainCommandSpawner() });
    const manager = new RuntimeManager();
    const runtime = await factory.createRuntime({ id: 'tcp-channel-session-1', workDir, approvalHandler: staticHandler('deny') });
    manager.add(runtime);
    const first = runtime.start('one');
    first.cancel();
    expect((await first.wait()).status).toBe('canceled');
    const second = runtime.start('two');
    await manager.destroy('tcp-channel-session-1');
    expect((await second.wait()).status).toBe('canceled');
    expect(() => manager.get('tcp-channel-session-1')).toThrow(UnknownRuntimeError);
    await expect(manager.destroy('nope')).rejects.toBeInstanceOf(UnknownRuntimeError);
    expect(() => runtime.start('three')).toThrow(/closed/);
  });

  it('builds the whole stack: OpenAI provider with retries (429 then success), tools, approval, audit', async () => {
    server = await FakeOpenAIServer.start({
      turns: [
        { fault: { type: 'status', status: 429, headers: { 'retry-after-ms': '10' } } },
        { toolCalls: [{ id: 'w', name: 'write_file', arguments: JSON.stringify({ path: 'hello.txt', content: 'hi' }) }] },
        { text: 'wrote it' },
      ],
    });
    factory = new RuntimeFactory({
      settings: settings({ apiKey: 'test-key', baseUrl: server.baseURL, model: 'fake-model' }),
      spawner: plainCommandSpawner(),
    });
    const asked: string[] = [];
    const approvals = new PendingApprovals({
      onRequest: (prompt) => {
        asked.push(prompt.toolName);
        setTimeout(() => approvals.respond(prompt.requestId, 'allow_once'), 1);
      },
    });
    const runtime = await factory.createRuntime({ workDir, approvalHandler: approvals, approval: 'ask' });
    const result = await runtime.start('write hello').wait();
    expect(result).toMatchObject({ status: 'completed', finalText: 'wrote it' });
    expect(server.requests).toHaveLength(3);
    expect(asked).toEqual(['write_file']);
    expect(await readFile(join(workDir, 'hello.txt'), 'utf8')).toBe('hi');
    const audit = await readFile(join(workDir, '.claw/audit.jsonl'), 'utf8');
    expect(audit).toContain('"decision":"allow_once"');
    // The model saw the tools, subagents included.
    const body = server.requests[1]?.body as { tools: Array<{ function: { name: string } }> };
    const tools = body.tools.map((tool) => tool.function.name);
    expect(tools).toEqual(['read_file', 'write_file', 'edit_file', 'bash', 'spawn_subagent']);
  });

  it('runtimes of one workspace share one grant store: a session grant made in one is on disk for all', async () => {
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'x' } }] },
      { text: 'done' },
    ]);
    factory = new RuntimeFactory({ settings: settings({ approval: 'ask' }), provider, spawner: plainCommandSpawner() });
    const runtime = await factory.createRuntime({ workDir, approvalHandler: staticHandler('allow_session'), sessionId: 's1' });
    await runtime.start('write').wait();
    const grants = JSON.parse(await readFile(join(workDir, '.claw/grants.json'), 'utf8')) as { grants: Array<{ sessionId: string }> };
    expect(grants.grants.map((grant) => grant.sessionId)).toEqual(['s1']);
  });

  it('writes OTLP JSON traces with the run\'s figures to .claw/traces', async () => {
    const tracing = createFileTracing({ workDir });
    const provider = new ScriptedProvider([{ text: 'traced', usage: { promptTokens: 12, completionTokens: 3 } }]);
    const spawner = plainCommandSpawner();
    factory = new RuntimeFactory({ settings: settings(), provider, spawner, tracer: tracing.tracer });
    const runtime = await factory.createRuntime({ workDir, approvalHandler: staticHandler('deny') });
    await runtime.start('go').wait();
    await tracing.shutdown();
    const files = await readdir(join(workDir, '.claw/traces'));
    expect(files).toHaveLength(1);
    const lines = (await readFile(join(workDir, '.claw/traces', files[0] ?? ''), 'utf8')).trim().split('\n');
    const spans = lines.flatMap((line) => {
      const request = JSON.parse(line) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
      return request.resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans));
    });
    const run = spans.find((span) => span.name === 'Agent.Run');
    expect(run).toBeDefined();
    const attribute = (key: string) => run?.attributes.find((entry) => entry.key === key)?.value;
    expect(attribute('prompt_tokens')).toEqual({ intValue: 12 });
    expect(attribute('completion_tokens')).toEqual({ intValue: 3 });
    expect(spans.map((span) => span.name)).toContain('Thinking');
  });
});

describe('sessions through the factory (SES-6, ENG-10)', () => {
  let workDir: string;
  beforeEach(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'claw-runtime-sessions-'));
  });
  afterEach(async () => {
    await rm(workDir, { recursive: true, force: true });
  });

  it('keeps sessions on disk by default: a new factory resumes the conversation', async () => {
    const first = new RuntimeFactory({ settings: settings(), provider: new ScriptedProvider([{ text: 'one' }]), spawner: plainCommandSpawner() });
    const runtime = await first.createRuntime({ workDir, sessionId: 'work', approvalHandler: staticHandler('deny') });
    await runtime.start('first task').wait();
    await first.close();
    expect(await readdir(join(workDir, '.claw/sessions'))).toEqual(['work.jsonl']);

    const provider = new ScriptedProvider([{ text: 'two' }]);
    const second = new RuntimeFactory({ settings: settings(), provider, spawner: plainCommandSpawner() });
    const resumed = await second.createRuntime({ workDir, sessionId: 'work', approvalHandler: staticHandler('deny') });
    await resumed.start('second task').wait();
    await second.close();
    const [system, ...conversation] = provider.calls[0]?.request.messages ?? [];
    expect(system?.role).toBe('system');
    expect(conversation.map((message) => message.content)).toEqual(['first task', 'one', 'second task']);
  });
});
