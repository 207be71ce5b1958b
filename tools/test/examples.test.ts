// DIST-2: every program of examples/ runs, built, with node, against the built packages (the way
// a user runs it: the packages by name, the model's address and key from OPENAI_*), talking to
// the fake OpenAI-compatible server on 127.0.0.1; claw-server's client talks to the built
// claw-server. The global setup builds the examples (tsc: a type error fails it) and the apps.
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FakeOpenAIServer, type FakeTurn } from '@claw/testing/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Running, cleanUp, outputOf, tempFolder, type Finished } from './processes.js';

const root = path.resolve(import.meta.dirname, '../..');
const examples = path.join(root, 'examples');
const serverMain = path.join(root, 'apps/server/dist/main.js');
const names = ['engine-tool', 'runtime-resume', 'session-log', 'approval-prompt', 'channel-client'];

const servers: FakeOpenAIServer[] = [];
let home: string;

beforeAll(async () => {
  const missing = names.filter((name) => !existsSync(path.join(examples, 'dist', `${name}.js`)));
  if (missing.length > 0) {
    throw new Error(
      `examples/dist lacks ${missing.join(', ')}: the global setup builds them ` +
      '(npx -y pnpm@12.4.2 exec turbo run build --filter=@claw/examples...)',
    );
  }
  home = await tempFolder('claw-examples-home');
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

afterAll(cleanUp);

/** Every example is a file of examples/ and has a test here (a new one must be added). */
it('has a test for each example', async () => {
  const { readdir } = await import('node:fs/promises');
  const files = (await readdir(examples)).filter((name) => name.endsWith('.ts')).sort();
  expect(files).toEqual(names.map((name) => `${name}.ts`).sort());
});

it('shows engine-tool whole in the README ("Use it as a library")', async () => {
  const code = await readFile(path.join(examples, 'engine-tool.ts'), 'utf8');
  const readme = await readFile(path.join(root, 'README.md'), 'utf8');
  expect(readme).toContain(`\`\`\`ts\n${code.slice(code.indexOf('import '))}\`\`\`\n`);
});

type Body = { messages: Array<{ role: string; content?: string | null }> };

/** A model that calls `call` first and answers `answer` once it has a tool result. */
async function fakeModel(call: { name: string; arguments: object }, answer: string) {
  const server = await FakeOpenAIServer.start({
    turns: (body): FakeTurn => {
      const last = (body as Body).messages.at(-1);
      return last?.role === 'tool'
        ? { text: answer, usage: { promptTokens: 40, completionTokens: 8 } }
        : { toolCalls: [{ name: call.name, arguments: JSON.stringify(call.arguments) }] };
    },
  });
  servers.push(server);
  return server;
}

/** The messages of a recorded request. */
function messagesOf(server: FakeOpenAIServer, index: number): Body['messages'] {
  return (server.requests[index]?.body as Body | undefined)?.messages ?? [];
}

/** Where an example runs, and its environment. */
type Setup = { cwd: string; env: Record<string, string> };

/** A fresh workspace with a README, and the environment a user has (no settings of their own). */
async function workspace(model: FakeOpenAIServer): Promise<Setup> {
  const cwd = await tempFolder('claw-example');
  await writeFile(path.join(cwd, 'README.md'), '# greeter\n\nSays hello. Run: node greet.js\n');
  return {
    cwd,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, 'config'),
      XDG_STATE_HOME: path.join(home, 'state'),
      OPENAI_BASE_URL: model.baseURL,
      OPENAI_API_KEY: 'example-key',
      OPENAI_MODEL: 'fake-model',
    },
  };
}

function example(name: string, args: string[], options: Setup): Running {
  return new Running(process.execPath, [path.join(examples, 'dist', `${name}.js`), ...args], options);
}

async function runExample(name: string, args: string[], options: Setup): Promise<Finished> {
  const result = await example(name, args, options).finish(30_000);
  expect(result.status, outputOf(result)).toBe(0);
  return result;
}

describe('examples/engine-tool: the engine, the OpenAI provider and a tool of your own', () => {
  it('runs the tool the model calls and prints the answer', async () => {
    const model = await fakeModel({ name: 'get_weather', arguments: { city: 'Lisbon' } }, 'Sunny in Lisbon.');
    const result = await runExample('engine-tool', [], await workspace(model));
    expect(result.stdout).toContain('> get_weather {"city":"Lisbon"}');
    expect(result.stdout).toContain('Sunny in Lisbon.\ncompleted: 2 model calls');
    // The tool's own result went back to the model.
    expect(messagesOf(model, 1).at(-1)).toMatchObject({ role: 'tool', content: 'Lisbon: sunny, 21 °C' });
    const tools = (model.requests[0]?.body as { tools?: Array<{ function: { name: string } }> }).tools;
    expect(tools?.map((tool) => tool.function.name)).toEqual(['get_weather']);
  });
});

describe('examples/runtime-resume: RuntimeFactory, a file session, resumed', () => {
  it('stores the session in its file and resumes it in the next run', async () => {
    const model = await fakeModel({ name: 'read_file', arguments: { path: 'README.md' } }, 'A greeter.');
    const setup = await workspace(model);
    const result = await runExample('runtime-resume', [setup.cwd], setup);
    expect(result.stdout).toContain('session example-resume: 0 messages before\ncompleted: A greeter.');
    expect(result.stdout).toContain('session example-resume: 4 messages before\ncompleted: A greeter.');
    expect(existsSync(path.join(setup.cwd, '.claw/sessions/example-resume.jsonl'))).toBe(true);
    // The second task's first request carries the first task: the README the tool read, too.
    const resumed = messagesOf(model, 2);
    expect(resumed.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    expect(resumed[3]?.content).toContain('Says hello.');
    expect(resumed.at(-1)?.content).toBe('How do I run it?');
  });
});

describe('examples/session-log: a SessionLog of your own', () => {
  it('stores the session in the custom log, not in the workspace', async () => {
    const model = await fakeModel({ name: 'read_file', arguments: { path: 'README.md' } }, 'About a greeter.');
    const setup = await workspace(model);
    const result = await runExample('session-log', [setup.cwd], setup);
    expect(result.stdout).toContain('completed: About a greeter.');
    const stored = /stored sessions\/kv-example: (\d+) bytes/.exec(result.stdout);
    expect(Number(stored?.[1])).toBeGreaterThan(1000);
    expect(existsSync(path.join(setup.cwd, '.claw/sessions'))).toBe(false);
  });
});

describe('examples/approval-prompt: approvals asked in your own UI', () => {
  const notes = { name: 'write_file', arguments: { path: 'NOTES.md', content: 'A greeter.\n' } };

  it('asks in the terminal and runs the call it is allowed', async () => {
    const model = await fakeModel(notes, 'Wrote NOTES.md.');
    const setup = await workspace(model);
    const child = example('approval-prompt', [setup.cwd], setup);
    await child.waitFor('Allow? [y]es once, [s]ession, [N]o: ');
    expect(child.stdout).toContain('write_file (mutating): ');
    child.write('y\n');
    const result = await child.finish(30_000);
    expect(result.status, outputOf(result)).toBe(0);
    expect(result.stdout).toContain('completed: Wrote NOTES.md.');
    expect(await readFile(path.join(setup.cwd, 'NOTES.md'), 'utf8')).toBe('A greeter.\n');
  });

  it('gives the model the reason of a "no", and the call does not run', async () => {
    const model = await fakeModel(notes, 'I was not allowed to.');
    const setup = await workspace(model);
    const child = example('approval-prompt', [setup.cwd], setup);
    await child.waitFor('Allow?');
    child.write('n\n');
    const result = await child.finish(30_000);
    expect(result.status, outputOf(result)).toBe(0);
    expect(existsSync(path.join(setup.cwd, 'NOTES.md'))).toBe(false);
    expect(messagesOf(model, 1).at(-1)?.content).toContain('the user said no in the terminal');
  });
});

describe('examples/channel-client: the channel protocol over WebSocket, against claw-server', () => {
  it('sends a prompt, answers the approval question and prints the streamed answer', async () => {
    const model = await fakeModel(
      { name: 'write_file', arguments: { path: 'NOTES.md', content: 'from the client\n' } },
      'NOTES.md is written.',
    );
    const setup = await workspace(model);
    const portFile = path.join(await tempFolder('claw-example-ports'), 'ports.json');
    const token = 'example-token-0123456789';
    const server = new Running(
      process.execPath,
      [serverMain, '--workdir', setup.cwd, '--tcp-port', '0', '--http-port', '0', '--port-file', portFile],
      { cwd: setup.cwd, env: { ...setup.env, CLAW_SERVER_TOKEN: token } },
    );
    const ports = await portsOf(portFile, server);
    const result = await runExample('channel-client', ['write the notes'], {
      cwd: setup.cwd,
      env: { ...setup.env, CLAW_SERVER_URL: `ws://127.0.0.1:${ports.http}/ws`, CLAW_SERVER_TOKEN: token },
    });
    expect(result.stdout).toMatch(/^session \S+\n/);
    expect(result.stdout).toContain('? write_file: ');
    expect(result.stdout).toContain('NOTES.md is written.\ntask_completed');
    expect(await readFile(path.join(setup.cwd, 'NOTES.md'), 'utf8')).toBe('from the client\n');
    expect(messagesOf(model, 0).at(-1)).toMatchObject({ role: 'user', content: 'write the notes' });
    await server.kill();
  });
});

/** The ports claw-server wrote once listening. */
async function portsOf(file: string, server: Running): Promise<{ tcp: number; http: number }> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline && server.isRunning) {
    const text = await readFile(file, 'utf8').catch(() => undefined);
    if (text !== undefined) return JSON.parse(text) as { tcp: number; http: number };
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`claw-server did not listen\nstdout:\n${server.stdout}\nstderr:\n${server.stderr}`);
}
