// Against the real @modelcontextprotocol/server-everything, over stdio and over Streamable HTTP
// (bound to 127.0.0.1): listing, calls, content blocks, progress, cancellation, resources and
// prompts, and what close() leaves behind.
import type { ToolProgress } from '@claw/core';
import { afterEach, describe, expect, it } from 'vitest';
import { isAlive } from '../src/process-tree.js';
import {
  cleanUp,
  everythingBin,
  everythingHttp,
  eventually,
  openServers,
  readLog,
  run,
  startHttpFixture,
  tempDir,
} from './helpers.js';

afterEach(cleanUp);

type Transport = 'stdio' | 'http';

async function everything(transport: Transport, extra: Record<string, unknown> = {}) {
  if (transport === 'stdio') {
    return { config: { command: process.execPath, args: [everythingBin], ...extra }, log: undefined };
  }
  const log = `${await tempDir()}/http.log`;
  const server = await startHttpFixture(everythingHttp, ['--log', log]);
  return { config: { url: server.url, ...extra }, log };
}

describe.each<Transport>(['stdio', 'http'])('server-everything over %s', (transport) => {
  it('lists its tools as mcp_everything_<tool>, with their schemas and the configured risk', async () => {
    const { config } = await everything(transport, { tools: { echo: { risk: 'safe' } } });
    const { servers, warnings } = openServers({ everything: config });
    await servers.ready();
    expect(warnings).toEqual([]);
    const names = servers.names();
    expect(names).toEqual(expect.arrayContaining([
      'mcp_everything_echo',
      'mcp_everything_get-sum',
      'mcp_everything_trigger-long-running-operation',
      'mcp_everything_get-tiny-image',
    ]));
    expect(names.every((name) => /^[A-Za-z0-9_-]{1,64}$/.test(name))).toBe(true);
    const sum = servers.get('mcp_everything_get-sum');
    expect(sum?.definition.description).toContain('Returns the sum of two numbers');
    expect(sum?.definition.parameters).toMatchObject({
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
    });
    // Remote annotations (readOnlyHint) are not trusted: the default is dangerous.
    expect(sum?.risk).toBe('dangerous');
    expect(servers.get('mcp_everything_echo')?.risk).toBe('safe');
    const [status] = servers.status();
    expect(status).toMatchObject({ name: 'everything', transport, state: 'ready' });
    expect(status?.tools).toEqual(names.filter((name) => name.startsWith('mcp_everything_')));
  });

  it('calls echo and get-sum', async () => {
    const { config } = await everything(transport);
    const { servers } = openServers({ everything: config });
    await servers.ready();
    expect(await run(servers.get('mcp_everything_echo'), { message: 'hello' }))
      .toEqual({ content: 'Echo: hello', isError: false });
    expect(await run(servers.get('mcp_everything_get-sum'), { a: 2, b: 40 }))
      .toEqual({ content: 'The sum of 2 and 40 is 42.', isError: false });
  });

  it('describes an image block by its type and size, and keeps the text blocks', async () => {
    const { config } = await everything(transport);
    const { servers } = openServers({ everything: config });
    await servers.ready();
    const result = await run(servers.get('mcp_everything_get-tiny-image'), {});
    expect(result.content).toMatch(/\[image: image\/png, \d+ bytes\]/);
    expect(result.content).not.toMatch(/iVBOR/); // no base64 for the model to read
    expect(result.content.split('\n').length).toBeGreaterThanOrEqual(3);
  });

  it('sends progress notifications to the progress callback', async () => {
    const { config } = await everything(transport);
    const { servers } = openServers({ everything: config });
    await servers.ready();
    const progress: ToolProgress[] = [];
    const result = await run(
      servers.get('mcp_everything_trigger-long-running-operation'),
      { duration: 0.3, steps: 3 },
      { progress },
    );
    expect(result.content).toContain('Long running operation completed');
    expect(progress).toEqual([
      { progress: 1, total: 3 },
      { progress: 2, total: 3 },
      { progress: 3, total: 3 },
    ]);
  });

  it('a long-running call canceled mid-way returns at once with the abort reason', async () => {
    const { config } = await everything(transport);
    const { servers } = openServers({ everything: config });
    await servers.ready();
    const controller = new AbortController();
    const progress: ToolProgress[] = [];
    // 10 minutes of work: only the cancellation can end this call within the test's time.
    const call = run(
      servers.get('mcp_everything_trigger-long-running-operation'),
      { duration: 600, steps: 6000 },
      { signal: controller.signal, progress },
    );
    await eventually(() => progress.length > 0, 'the operation reported progress');
    const reason = new Error('the user pressed Ctrl-C');
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
    // The connection is still usable afterwards.
    expect((await run(servers.get('mcp_everything_echo'), { message: 'still here' })).content)
      .toBe('Echo: still here');
  });

  it('reaches resources and prompts through mcp_everything_list_resources, _read_resource and _get_prompt', async () => {
    const { config } = await everything(transport);
    const { servers } = openServers({ everything: config });
    await servers.ready();
    const listing = await run(servers.get('mcp_everything_list_resources'), {});
    const uri = /- (demo:\/\/\S+)/.exec(listing.content)?.[1];
    expect(uri).toBeDefined();
    const read = await run(servers.get('mcp_everything_read_resource'), { uri });
    expect(read.content).toContain(`[resource ${uri ?? ''} (`);
    const prompt = servers.get('mcp_everything_get_prompt');
    expect(prompt?.definition.description).toContain('args-prompt(city*, state)');
    const filled = await run(prompt, { name: 'args-prompt', arguments: { city: 'Lyon' } });
    expect(filled.content).toBe('user: What\'s weather in Lyon?');
  });

  it('close() ends the connection: the child is killed, the HTTP session deleted', async () => {
    const { config, log } = await everything(transport);
    const { servers } = openServers({ everything: config });
    await servers.ready();
    const [status] = servers.status();
    await servers.close();
    if (transport === 'stdio') {
      expect(status?.pid).toBeTypeOf('number');
      expect(isAlive(status?.pid ?? -1)).toBe(false);
    } else {
      const events = await readLog(log ?? '');
      expect(events.filter((event) => event.event === 'session_deleted')).toHaveLength(1);
    }
    expect(servers.status()[0]?.state).toBe('closed');
    expect(servers.names()).toEqual([]);
  });
});
