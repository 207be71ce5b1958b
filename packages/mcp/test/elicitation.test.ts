// MCP-7 (library part): a real SDK server sends elicitation/create during a tool call; the app's
// handler answers, claw fills in defaults, checks the answer against the requested schema, and
// declines when nobody answers in time.
import { afterEach, describe, expect, it } from 'vitest';
import {
  McpTimeoutError,
  defaultCallTimeoutMs,
  defaultElicitationTimeoutMs,
  validateElicitationContent,
  type McpElicitationAnswer,
  type McpElicitationRequest,
  type McpElicitationSchema,
} from '../src/index.js';
import { ManualTimers, cleanUp, eventually, openServers, run } from './helpers.js';
import { startSdkHttpServer, type SdkHttpServer } from './sdk-http-server.js';

const started: SdkHttpServer[] = [];

afterEach(async () => {
  await cleanUp();
  await Promise.all(started.splice(0).map((server) => server.close()));
});

const requestedSchema: McpElicitationSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Name', default: 'Ann' },
    age: { type: 'integer', minimum: 0 },
    color: { type: 'string', enum: ['red', 'green'], default: 'green' },
    subscribe: { type: 'boolean', default: true },
  },
  required: ['name', 'age'],
};

/** A server with sessions, and claw's servers connected to it as "remote". */
async function connect(options: Parameters<typeof openServers>[1] = {}) {
  const server = await startSdkHttpServer();
  started.push(server);
  const opened = openServers({ remote: { url: server.url } }, options);
  await opened.servers.ready();
  expect(opened.servers.status()[0]?.state).toBe('ready');
  return { server, ...opened };
}

/** Calls the server's `ask` tool; what the server got back from claw, parsed. */
async function ask(
  servers: Awaited<ReturnType<typeof connect>>['servers'],
  options: { signal?: AbortSignal } = {},
): Promise<{ isError: boolean; result: Record<string, unknown> }> {
  const result = await run(
    servers.get('mcp_remote_ask'),
    { message: 'Who are you?', requestedSchema },
    options,
  );
  return { isError: result.isError === true, result: JSON.parse(result.content) as Record<string, unknown> };
}

/** Connected with timers under the test and a user who answers when `answer` is called. */
async function connectAskingUser() {
  const timers = new ManualTimers();
  let resolveAnswer: ((answer: McpElicitationAnswer) => void) | undefined;
  const { servers } = await connect({
    setTimer: timers.setTimer,
    elicitation: () => new Promise((resolve) => {
      resolveAnswer = resolve;
    }),
  });
  const answer = (given: McpElicitationAnswer): void => {
    if (resolveAnswer === undefined) throw new Error('the user was not asked');
    resolveAnswer(given);
  };
  return { timers, servers, answer };
}

describe('with a handler', () => {
  it('declares elicitation (form mode, applyDefaults); the handler is asked, and the defaults fill what the user left out', async () => {
    const requests: McpElicitationRequest[] = [];
    const { server, servers, warnings } = await connect({
      elicitation: (request) => {
        requests.push(request);
        return Promise.resolve({ action: 'accept', content: { age: 42, color: 'red' } });
      },
    });
    expect(server.initializations).toEqual([
      { roots: { listChanged: true }, elicitation: { form: { applyDefaults: true } } },
    ]);
    expect(await ask(servers)).toEqual({
      isError: false,
      result: { action: 'accept', content: { age: 42, color: 'red', name: 'Ann', subscribe: true } },
    });
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ server: 'remote', message: 'Who are you?', requestedSchema });
    expect(requests[0]?.signal.aborted).toBe(false);
    expect(warnings).toEqual([]);
  });

  for (const action of ['decline', 'cancel'] as const) {
    it(`${action} is passed on as it is`, async () => {
      const { servers } = await connect({ elicitation: () => Promise.resolve({ action }) });
      expect(await ask(servers)).toEqual({ isError: false, result: { action } });
    });
  }

  const invalid: Array<[string, Record<string, unknown>, RegExp]> = [
    ['a wrong type', { age: 'old' }, /age.*must be integer/],
    ['a missing required field without a default', { name: 'Bo' }, /must have required property 'age'/],
    ['a value out of range', { age: -1 }, /age.*must be >= 0/],
    ['a value not in the enum', { age: 3, color: 'blue' }, /color.*must be equal to one of the allowed values/],
  ];
  for (const [what, content, reason] of invalid) {
    it(`an answer with ${what} is not sent: the server gets an error saying why, the app a warning`, async () => {
      const { servers, warnings } = await connect({
        elicitation: () => Promise.resolve({ action: 'accept', content } as McpElicitationAnswer),
      });
      const { isError, result } = await ask(servers);
      expect(isError).toBe(true);
      expect(result.code).toBe(-32602);
      expect(result.error).toMatch(/the client's answer was not sent: the answer does not match the requested schema: /);
      expect(result.error).toMatch(reason);
      expect(warnings.map((warning) => warning.code)).toEqual(['mcp_elicitation_invalid']);
      expect(warnings[0]?.message).toMatch(/^MCP server "remote" asked for input \("Who are you\?"\), and the answer does not match/);
    });
  }

  it('an answer that is not one of accept, decline, cancel is not sent either', async () => {
    const { servers, warnings } = await connect({
      elicitation: () => Promise.resolve({ action: 'maybe' } as unknown as McpElicitationAnswer),
    });
    const { isError, result } = await ask(servers);
    expect(isError).toBe(true);
    expect(result.code).toBe(-32602);
    expect(result.error).toContain('the client\'s answer was not sent: the answer\'s action is "maybe", not accept, decline or cancel');
    expect(warnings.map((warning) => warning.code)).toEqual(['mcp_elicitation_invalid']);
  });

  it('no answer within elicitationTimeoutMs: declined, the handler\'s signal aborted, a warning (timer under the test)', async () => {
    const timers = new ManualTimers();
    let signal: AbortSignal | undefined;
    const { servers, warnings } = await connect({
      setTimer: timers.setTimer,
      elicitationTimeoutMs: 1234,
      elicitation: (request) => {
        signal = request.signal;
        return new Promise(() => undefined);
      },
    });
    const asking = ask(servers);
    await eventually(() => timers.waiting(1234).length === 1, 'the handler was asked');
    expect(signal?.aborted).toBe(false);
    timers.fire(1234);
    expect(await asking).toEqual({ isError: false, result: { action: 'decline' } });
    expect(signal?.aborted).toBe(true);
    expect((signal?.reason as { code?: string }).code).toBe('mcp_elicitation_timeout');
    expect(warnings.map((warning) => warning.code)).toEqual(['mcp_elicitation_timeout']);
    expect(warnings[0]?.message).toBe(
      'MCP server "remote" asked for input ("Who are you?"), and no answer came within 1234 ms; claw declined',
    );
  });

  it(`the time for an answer is ${defaultElicitationTimeoutMs} ms unless the app says otherwise`, async () => {
    const timers = new ManualTimers();
    const { servers } = await connect({
      setTimer: timers.setTimer,
      elicitation: () => new Promise(() => undefined),
    });
    const asking = ask(servers);
    await eventually(() => timers.waiting(defaultElicitationTimeoutMs).length === 1, 'the handler was asked');
    timers.fire(defaultElicitationTimeoutMs);
    expect((await asking).result).toEqual({ action: 'decline' });
  });

  it('the call that asks does not time out while the user is asked', async () => {
    const { timers, servers, answer } = await connectAskingUser();
    const first = ask(servers);
    await eventually(() => timers.waiting(defaultElicitationTimeoutMs).length === 1, 'the user is asked');
    // The call's time runs out while the user is still thinking: the call goes on.
    expect(timers.fire(defaultCallTimeoutMs)).toBe(1);
    answer({ action: 'accept', content: { age: 1 } });
    expect((await first).result).toMatchObject({ action: 'accept', content: { age: 1 } });
    // Its clock, started again at the answer, stopped with the result.
    expect(timers.waiting(defaultCallTimeoutMs)).toHaveLength(0);
  });

  it('a call that times out while the user is asked gets its full time again after the answer', async () => {
    const { timers, servers, answer } = await connectAskingUser();
    // `wait` never answers; `ask` asks the user.
    const waiting = run(servers.get('mcp_remote_wait'), {}).catch((error: unknown) => error);
    const asking = ask(servers);
    await eventually(() => timers.waiting(defaultElicitationTimeoutMs).length === 1, 'the user is asked');
    expect(timers.fire(defaultCallTimeoutMs)).toBe(2);
    expect(timers.waiting(defaultCallTimeoutMs)).toHaveLength(0);
    answer({ action: 'decline' });
    expect((await asking).result).toEqual({ action: 'decline' });
    // Only `wait` is left, with its clock started again at the answer.
    expect(timers.waiting(defaultCallTimeoutMs)).toHaveLength(1);
    expect(timers.fire(defaultCallTimeoutMs)).toBe(1);
    const error = await waiting;
    expect(error).toBeInstanceOf(McpTimeoutError);
    expect((error as Error).message).toContain(`did not answer the call within ${defaultCallTimeoutMs} ms`);
  });

  it('a handler that fails: declined (nobody could be asked), and a warning says why', async () => {
    const { servers, warnings } = await connect({
      elicitation: () => Promise.reject(new Error('no terminal to ask on')),
    });
    expect(await ask(servers)).toEqual({ isError: false, result: { action: 'decline' } });
    expect(warnings.map((warning) => warning.message)).toEqual([
      'MCP server "remote" asked for input ("Who are you?"), and asking the user failed (no terminal to ask on); claw declined',
    ]);
  });

  it('a canceled call withdraws the question: the handler\'s signal aborts', async () => {
    let asked!: () => void;
    const wasAsked = new Promise<void>((resolve) => {
      asked = resolve;
    });
    let withdrawn!: () => void;
    const wasWithdrawn = new Promise<void>((resolve) => {
      withdrawn = resolve;
    });
    const { servers, warnings } = await connect({
      elicitation: ({ signal }) => {
        signal.addEventListener('abort', () => withdrawn(), { once: true });
        asked();
        return new Promise(() => undefined);
      },
    });
    // The SDK ignores a cancellation of request id 0 (modelcontextprotocol/typescript-sdk#2283),
    // the id of a server's first request to the client: that one goes to roots/list.
    await run(servers.get('mcp_remote_roots'), {});
    const controller = new AbortController();
    const asking = ask(servers, { signal: controller.signal });
    await wasAsked;
    const reason = new Error('the user pressed Ctrl-C');
    controller.abort(reason);
    await expect(asking).rejects.toBe(reason);
    await wasWithdrawn;
    expect(warnings).toEqual([]);
  });
});

describe('without a handler', () => {
  it('elicitation is not declared, and a server that asks anyway gets "method not found"', async () => {
    const { server, servers } = await connect();
    expect(server.initializations).toEqual([{ roots: { listChanged: true } }]);
    const { isError, result } = await ask(servers);
    expect(isError).toBe(true);
    expect(result.code).toBe(-32601);
  });
});

describe('validateElicitationContent', () => {
  it('fills in defaults and accepts what matches; says what does not', () => {
    expect(validateElicitationContent(requestedSchema, { age: 7 })).toEqual({
      valid: true,
      content: { age: 7, name: 'Ann', color: 'green', subscribe: true },
    });
    const email: McpElicitationSchema = {
      type: 'object',
      properties: { email: { type: 'string', format: 'email' } },
    };
    expect(validateElicitationContent(email, { email: 'a@example.org' }).valid).toBe(true);
    expect(validateElicitationContent(email, { email: 'not an address' })).toEqual({
      valid: false,
      error: 'data/email must match format "email"',
    });
  });
});
