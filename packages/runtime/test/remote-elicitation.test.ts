// A request for input of an MCP server (MCP-7) in a session another process owns (SCALE-4): the
// owner's server asks, the follower's clients see the request and answer it, and the answer
// reaches the owner through the relay's inbox, checked there like its own clients' (first answer
// wins, one that does not fit the form is refused and may be given again). Two instances on one
// MemoryRelay; the server is a real SDK server on stdio.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Message, SessionEvent, SessionEventOf } from '@claw/core';
import { MemoryRelay } from '@claw/session-store';
import { afterEach, describe, expect, it } from 'vitest';
import { RemoteRuntime, Runtime, SessionLifecycle } from '../src/index.js';
import {
  cleanUp,
  eventually,
  isTaskEnd,
  scriptedFactory,
  sessionsIn,
  settings,
  tempWorkspace,
  until,
} from './helpers.js';
import { elicitServerLaunch } from './fixtures/elicit-server-launch.mjs';

const askServer = {
  ...elicitServerLaunch(),
  risk: 'safe',
};

const form = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 2 },
    count: { type: 'integer', minimum: 1, default: 3 },
  },
  required: ['name'],
};

const lifecycles: SessionLifecycle[] = [];

afterEach(async () => {
  await Promise.allSettled(lifecycles.splice(0).map((lifecycle) => lifecycle.close()));
  await cleanUp();
});

/** One claw instance on the shared log, its workspaces trusted (their MCP servers start). */
function instanceOn(log: MemoryRelay, options: { idleTimeoutMs?: number } = {}) {
  const { factory } = scriptedFactory([
    { toolCalls: [{ id: 'c1', name: 'mcp_sdk_ask', arguments: { message: 'Who are you?', requestedSchema: form } }] },
    { text: 'done' },
  ], { settings: settings({ trustWorkspaces: true }), sessions: sessionsIn(log) });
  const lifecycle = new SessionLifecycle({ factory, relay: { log, pollMs: 5 }, ...options });
  lifecycles.push(lifecycle);
  return lifecycle;
}

async function askingWorkspace(): Promise<string> {
  const workDir = await tempWorkspace('claw-remote-elicit-');
  await mkdir(path.join(workDir, '.claw'));
  await writeFile(path.join(workDir, '.claw', 'mcp.json'), JSON.stringify({ mcpServers: { sdk: askServer } }));
  return workDir;
}

const typeIs = <T extends SessionEvent['type']>(type: T) =>
  (event: SessionEvent): event is SessionEventOf<T> => event.type === type;

describe('requests for input in a session another process owns (MCP-7, SCALE-4)', () => {
  it('a follower\'s client answers: refused when it does not fit, then taken by the owner; a later answer is refused', async () => {
    const workDir = await askingWorkspace();
    const shared = new MemoryRelay({ instanceId: 'a' });
    const a = instanceOn(shared, { idleTimeoutMs: 60_000 });
    const b = instanceOn(shared.instance('b'));
    const owner = await a.open({ workDir, sessionId: 's', id: 'client-a' });
    const follower = await b.open({ workDir, sessionId: 's', id: 'client-b' });
    expect(owner).toBeInstanceOf(Runtime);
    expect(follower).toBeInstanceOf(RemoteRuntime);
    // The owner's own client leaves: the session stays loaded there (the idle time), and the
    // follower's client is the only one who can answer. The owner must not decline for want of
    // someone to ask.
    await owner.close();
    expect(a.loaded).toBe(1);

    const events = follower.events({ after: follower.snapshot().seq });
    const started = await follower.start('who am I?');
    const request = (await until(events, (event) => event.type === 'elicitation_request'))
      .find(typeIs('elicitation_request'))!;
    expect(request).toMatchObject({ task_id: started.id, server: 'sdk', requested_schema: form });

    await expect(follower.respondElicitation!(request.request_id, { action: 'accept', content: { name: 'A' } }, 'client-b'))
      .rejects.toMatchObject({ code: 'invalid_elicitation_answer', requestId: request.request_id });
    await expect(follower.respondElicitation!('elicitation-unknown', { action: 'decline' }, 'client-b'))
      .rejects.toMatchObject({ code: 'elicitation_not_pending' });
    await follower.respondElicitation!(request.request_id, { action: 'accept', content: { name: 'Ada' } }, 'client-b');
    await expect(follower.respondElicitation!(request.request_id, { action: 'decline' }, 'client-b'))
      .rejects.toMatchObject({ code: 'elicitation_not_pending' });

    const rest = await until(events, isTaskEnd);
    expect(rest.find(typeIs('elicitation_resolved'))).toMatchObject({
      request_id: request.request_id,
      action: 'accept',
      by: 'client-b',
    });
    expect(rest.at(-1)).toMatchObject({ type: 'task_completed', task_id: started.id });
    // What the owner's MCP server got: the answer, with the form's default filled in.
    const result = follower.snapshot().history.find((message: Message) => message.role === 'tool');
    expect(JSON.parse(result?.content ?? 'null')).toEqual({ action: 'accept', content: { name: 'Ada', count: 3 } });
  });

  it('a follower opened while the owner\'s request waits lists it as the owner does, until it is answered', async () => {
    const workDir = await askingWorkspace();
    const shared = new MemoryRelay({ instanceId: 'a' });
    const a = instanceOn(shared);
    const b = instanceOn(shared.instance('b'));
    const owner = await a.open({ workDir, sessionId: 's', id: 'client-a' });
    const events = owner.events({ after: owner.snapshot().seq });
    const started = await owner.start('who am I?');
    const request = (await until(events, (event) => event.type === 'elicitation_request'))
      .find(typeIs('elicitation_request'))!;
    expect(owner.snapshot().pendingElicitations).toEqual([request]);

    // Opened (no cursor) on the other instance: its view is rebuilt from the stored records.
    const follower = await b.open({ workDir, sessionId: 's', id: 'client-b' });
    expect(follower).toBeInstanceOf(RemoteRuntime);
    await eventually(() => follower.snapshot().seq >= request.seq, 'the follower to read the request');
    expect(follower.snapshot().pendingElicitations).toEqual(owner.snapshot().pendingElicitations);
    expect(follower.snapshot().pendingElicitations).toEqual([
      expect.objectContaining({ request_id: request.request_id, task_id: started.id, server: 'sdk', requested_schema: form }),
    ]);

    const followed = follower.events({ after: follower.snapshot().seq });
    await owner.respondElicitation!(request.request_id, { action: 'decline' }, 'client-a');
    await until(followed, (event) => event.type === 'elicitation_resolved');
    expect(follower.snapshot().pendingElicitations).toEqual([]);
    await until(followed, isTaskEnd);
    expect(owner.snapshot().pendingElicitations).toEqual([]);
    expect(follower.snapshot().pendingElicitations).toEqual([]);
  });
});
