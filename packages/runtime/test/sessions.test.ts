import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  ApprovalNotPendingError,
  MemoryAuditLog,
  MemoryGrantStore,
  staticHandler,
  type ApprovalHandler,
  type Policy,
} from '@claw/approval';
import type { SessionEvent } from '@claw/core';
import { MemorySessionManager, SessionLockedError, type UnreadableSession } from '@claw/session-store';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  RuntimeClosedError,
  SessionBusyError,
  WorkspaceSessions,
} from '../src/index.js';
import { cleanUp, eventually, isTaskEnd, scriptedFactory, settings, tempWorkspace, until } from './helpers.js';

afterEach(cleanUp);

/** A handler that waits until the test answers. */
function heldHandler(): ApprovalHandler & { asked: string[]; answer: (decision: 'allow_once' | 'deny') => void } {
  const waiting: Array<(decision: 'allow_once' | 'deny') => void> = [];
  const asked: string[] = [];
  return {
    asked,
    answer: (decision) => waiting.shift()?.(decision),
    approve: (prompt, signal) =>
      new Promise((resolve, reject) => {
        asked.push(prompt.toolName);
        waiting.push(resolve);
        signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
      }),
  };
}

const writeCall = (id: string) => ({ toolCalls: [{ id, name: 'write_file', arguments: { path: `${id}.txt`, content: id } }] });

describe('one owner per session in a process (RT-5)', () => {
  it('shares one session between runtimes: a second task is refused and histories never interleave', async () => {
    const workDir = await tempWorkspace();
    const { factory } = scriptedFactory([{ text: 'first', delayMs: 30 }, { text: 'second' }]);
    const a = await factory.createRuntime({ workDir, sessionId: 'shared' });
    const b = await factory.createRuntime({ workDir, sessionId: 'shared' });
    expect(b.session).toBe(a.session);
    const task = a.start('from a');
    expect(() => b.start('from b')).toThrow(SessionBusyError);
    expect(b.activeTask).toBe(task);
    await task.wait();
    await b.start('from b').wait();
    expect(a.session.history().map((message) => message.content)).toEqual(['from a', 'first', 'from b', 'second']);
    expect(factory.openSessions).toBe(1);
  });

  it('releases the session, its lock, its store and its grant store when the last runtime leaves', async () => {
    const workDir = await tempWorkspace();
    const sessions = new WorkspaceSessions();
    const { factory } = scriptedFactory([{ text: 'one' }], { sessions });
    const a = await factory.createRuntime({ workDir, sessionId: 's1' });
    const b = await factory.createRuntime({ workDir, sessionId: 's1' });
    await a.start('go').wait();
    expect((await readdir(join(workDir, '.claw/sessions'))).sort()).toEqual(['s1.jsonl', 's1.lock']);
    await a.close();
    expect(factory.openSessions).toBe(1);
    await b.close();
    expect(factory.openSessions).toBe(0);
    expect(sessions.openWorkspaces).toBe(0);
    expect(await readdir(join(workDir, '.claw/sessions'))).toEqual(['s1.jsonl']);
    // Another process (here: another factory) can have it now.
    const other = scriptedFactory([{ text: 'two' }]).factory;
    const resumed = await other.createRuntime({ workDir, sessionId: 's1' });
    expect(resumed.session.history().map((message) => message.content)).toEqual(['go', 'one']);
  });

  it('refuses a session another factory (as another process would) holds, at once', async () => {
    const workDir = await tempWorkspace();
    const first = scriptedFactory([]).factory;
    await first.createRuntime({ workDir, sessionId: 's1' });
    const second = scriptedFactory([]).factory;
    const error = await second.createRuntime({ workDir, sessionId: 's1' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SessionLockedError);
    expect(second.openSessions).toBe(0);
  });

  it('keeps a task running when its runtime leaves without canceling, and releases after it ends', async () => {
    const workDir = await tempWorkspace();
    const { factory } = scriptedFactory([{ text: 'late', delayMs: 40 }]);
    const runtime = await factory.createRuntime({ workDir });
    const task = runtime.start('keep going');
    await runtime.close({ cancel: false });
    expect(factory.openSessions).toBe(1);
    expect((await task.wait()).status).toBe('completed');
    await eventually(() => factory.openSessions === 0);
  });

  it('a run that rejects is a failed task, never a busy runtime (RT-7)', async () => {
    const workDir = await tempWorkspace();
    const { factory } = scriptedFactory([{ text: 'fine' }]);
    const runtime = await factory.createRuntime({ workDir });
    // A tool registered after the engine was built that collides with spawn_subagent.
    const engine = await factory.engine();
    engine.tools.register({
      definition: { name: 'spawn_subagent', description: 'x', parameters: { type: 'object' } },
      risk: 'safe',
      execute: async () => 'x',
    });
    const failed = await runtime.start('go').wait();
    expect(failed.status).toBe('failed');
    expect(failed.error?.code).toBe('duplicate_tool');
    engine.tools.unregister('spawn_subagent');
    await new Promise((resolve) => setImmediate(resolve));
    expect(runtime.activeTask).toBeUndefined();
    expect((await runtime.start('again').wait()).status).toBe('completed');
  });

  it('createRuntime racing close() leaks nothing: it is refused and the session released', async () => {
    const workDir = await tempWorkspace();
    const { factory } = scriptedFactory([]);
    const creating = factory.createRuntime({ workDir, sessionId: 'race' });
    const closing = factory.close();
    const error = await creating.catch((caught: unknown) => caught);
    await closing;
    expect(error).toBeInstanceOf(RuntimeClosedError);
    expect(factory.openSessions).toBe(0);
    const names = await readdir(join(workDir, '.claw/sessions')).catch(() => []);
    expect(names.filter((name) => name.endsWith('.lock'))).toEqual([]);
  });
});

describe('approvals shared by every client of a session (CH-10)', () => {
  it('asks every attached handler; the first answer wins and is recorded as approval_resolved', async () => {
    const workDir = await tempWorkspace();
    const { factory } = scriptedFactory([writeCall('w1'), { text: 'done' }], { settings: settings({ approval: 'ask' }) });
    const first = heldHandler();
    const second = heldHandler();
    const a = await factory.createRuntime({ id: 'terminal', workDir, approvalHandler: first });
    const b = await factory.createRuntime({ id: 'console', workDir, approvalHandler: second });
    const events = a.events();
    const task = a.start('write');
    const asked = await until(events, (event) => event.type === 'approval_request');
    expect(first.asked).toEqual(['write_file']);
    expect(second.asked).toEqual(['write_file']);
    second.answer('allow_once');
    const resolved = await until(events, (event) => event.type === 'approval_resolved');
    expect(resolved.at(-1)).toMatchObject({ decision: 'allow_once', by: 'console' });
    const request = asked.at(-1);
    const requestId = request?.type === 'approval_request' ? request.request_id : '';
    expect(() => b.respond(requestId, 'deny')).toThrow(ApprovalNotPendingError);
    first.answer('deny');
    await task.wait();
    expect((await until(events, isTaskEnd)).at(-1)).toMatchObject({ type: 'task_completed' });
  });

  it('lets a client without a handler answer with respond; cancel denies what waits', async () => {
    const workDir = await tempWorkspace();
    const { factory } = scriptedFactory([writeCall('w1'), writeCall('w2'), { text: 'done' }], {
      settings: settings({ approval: 'ask' }),
    });
    const runtime = await factory.createRuntime({ workDir });
    const events = runtime.events();
    const task = runtime.start('write twice');
    const seen = await until(events, (event) => event.type === 'approval_request');
    const first = seen.at(-1);
    runtime.respond(first?.type === 'approval_request' ? first.request_id : '', 'allow_once', 'web');
    seen.push(...(await until(events, (event) => event.type === 'approval_request')));
    runtime.cancel(new Error('interrupted'));
    const rest = await until(events, isTaskEnd);
    seen.push(...rest);
    expect(rest.find((event) => event.type === 'approval_resolved')).toMatchObject({ decision: 'deny', by: 'canceled' });
    expect(rest.at(-1)).toMatchObject({ type: 'task_canceled', reason: 'interrupted' });
    expect((await task.wait()).status).toBe('canceled');
    // The canceled call still has a result event: the stream stays paired.
    const ids = (type: string) =>
      seen.filter((event) => event.type === type).map((event) => ('tool_call_id' in event ? event.tool_call_id : ''));
    expect(ids('tool_call')).toEqual(['w1', 'w2']);
    expect(ids('tool_result')).toEqual(['w1', 'w2']);
  });
});

describe('injectable approval parts, one engine for many sessions (RT-2)', () => {
  it('uses the given grant store, audit log and policy, and one engine for every session', async () => {
    const workDir = await tempWorkspace();
    const grants = new MemoryGrantStore();
    const audit = new MemoryAuditLog();
    const policies: string[] = [];
    const policy: Policy = { evaluate: async () => ({ action: 'ask', reason: 'the test asks' }) };
    const { factory } = scriptedFactory([writeCall('a'), { text: 'one' }, writeCall('b'), { text: 'two' }], {
      settings: settings({ approval: 'ask' }),
      sessions: new WorkspaceSessions(),
      grantStore: () => grants,
      auditLog: () => audit,
      policy: (context) => {
        policies.push(context.workDir);
        return policy;
      },
    });
    const one = await factory.createRuntime({ workDir, sessionId: 'one', approvalHandler: staticHandler('allow_session') });
    const two = await factory.createRuntime({ workDir, sessionId: 'two', approvalHandler: staticHandler('allow_once') });
    await one.start('a').wait();
    await two.start('b').wait();
    expect((await grants.list()).map((grant) => grant.sessionId)).toEqual(['one']);
    expect(audit.entries.map((entry) => [entry.sessionId, entry.decision, entry.reason])).toEqual([
      ['one', 'allow_session', 'the test asks'],
      ['two', 'allow_once', 'the test asks'],
    ]);
    expect(policies).toEqual([workDir, workDir]);
    expect(await factory.engine()).toBe(await factory.engine());
  });

  it('takes any session store, e.g. memory', async () => {
    const workDir = await tempWorkspace();
    const store = new MemorySessionManager();
    const { factory } = scriptedFactory([{ text: 'kept in memory' }], {
      sessions: { open: (id, options) => store.open(id, options), list: () => store.list() },
    });
    const runtime = await factory.createRuntime({ workDir, sessionId: 'm' });
    await runtime.start('hi').wait();
    expect(await factory.listSessions(workDir)).toMatchObject([{ id: 'm', messageCount: 2 }]);
    expect(await readdir(workDir)).toEqual([]);
  });

  it('names the session files it cannot read, whether a session of the workspace is open or not', async () => {
    const workDir = await tempWorkspace();
    const { factory } = scriptedFactory([{ text: 'done' }]);
    await mkdir(join(workDir, '.claw', 'sessions'), { recursive: true });
    await writeFile(join(workDir, '.claw', 'sessions', 'broken.jsonl'), 'not a session\n');
    const listing = async () => {
      const unreadable: UnreadableSession[] = [];
      const ids = (await factory.listSessions(workDir, { onUnreadable: (session) => unreadable.push(session) }))
        .map((summary) => summary.id);
      return { ids, unreadable: unreadable.map((session) => [session.id, session.location]) };
    };
    const named = [['broken', join(workDir, '.claw', 'sessions', 'broken.jsonl')]];

    expect(await listing()).toEqual({ ids: [], unreadable: named });
    const runtime = await factory.createRuntime({ workDir, sessionId: 'ok' });
    await runtime.start('hi').wait();
    expect(await listing()).toEqual({ ids: ['ok'], unreadable: named });
  });
});

describe('one grant store per real workspace folder, while it is used (APR-3)', () => {
  it('shares the store between sessions and spellings of one folder, and lets it go after', async () => {
    const { symlink } = await import('node:fs/promises');
    const workDir = await tempWorkspace();
    const other = await tempWorkspace();
    const link = join(other, 'link-to-workspace');
    await symlink(workDir, link);
    const made: string[] = [];
    const { factory } = scriptedFactory([], {
      grantStore: (folder) => {
        made.push(folder);
        return new MemoryGrantStore();
      },
    });
    const a = await factory.createRuntime({ workDir, sessionId: 'a' });
    const b = await factory.createRuntime({ workDir: link, sessionId: 'b' });
    expect(made).toHaveLength(1);
    await a.close();
    await b.close();
    await factory.createRuntime({ workDir, sessionId: 'c' });
    // Nothing kept while unused: a new use makes a new store.
    expect(made).toHaveLength(2);
  });
});

describe('the isolation probe and the start-up path (PERF-2, REAL-1)', () => {
  it('probes while the session opens (in parallel with it), once for every session of the factory', async () => {
    const first = await tempWorkspace();
    const second = await tempWorkspace();
    const { plainCommandSpawner } = await import('@claw/sandbox');
    let asked = 0;
    let finishProbe!: () => void;
    const probing = new Promise<ReturnType<typeof plainCommandSpawner>>((resolve) => {
      finishProbe = () => resolve(plainCommandSpawner());
    });
    const { factory, provider } = scriptedFactory(
      [{ toolCalls: [{ id: 'b1', name: 'bash', arguments: { command: 'echo ran' } }] }, { text: 'done' }, { text: 'b' }],
      { spawner: probing },
    );
    const isolation = factory.isolation.bind(factory);
    factory.isolation = () => {
      asked += 1;
      return isolation();
    };
    const opening = factory.createRuntime({ workDir: first, approvalHandler: staticHandler('allow_once') });
    // The session is being opened (its lock taken) while the probe runs.
    await vi.waitFor(async () => expect(await readdir(join(first, '.claw/sessions'))).toContain('default.lock'));
    expect(asked).toBe(1);
    finishProbe();
    const runtime = await opening;
    const result = await runtime.start('run it').wait();
    expect(result.status).toBe('completed');
    expect(runtime.session.history().find((message) => message.role === 'tool')?.content).toContain('ran');
    expect(provider.calls[0]?.request.messages[0]?.content).toContain('Bash: not isolated');
    const other = await factory.createRuntime({ workDir: second });
    await other.start('again').wait();
    expect(provider.calls[2]?.request.messages[0]?.content).toContain('Bash: not isolated');
  });
});

describe('letting a session go at once (closeSession)', () => {
  it('cancels its task, delivers the last events to its followers, then opens it afresh from the store', async () => {
    const workDir = await tempWorkspace();
    const { factory } = scriptedFactory([{ text: 'never', delayMs: 60_000 }, { text: 'again' }]);
    const a = await factory.createRuntime({ workDir, sessionId: 's' });
    const other = await factory.createRuntime({ workDir, sessionId: 'other' });
    const events = a.events({ after: 0 });
    a.start('long');
    await until(events, (event) => event.type === 'thinking');
    await factory.closeSession('s', new Error('the lease was lost'));
    // The follower gets the task's end, then its iteration ends with why (LIFE-2).
    const rest: SessionEvent[] = [];
    const ended = await (async () => {
      try {
        for await (const event of events) rest.push(event);
        return undefined;
      } catch (error) {
        return error;
      }
    })();
    expect(ended).toMatchObject({ code: 'session_dropped' });
    expect(rest.filter(isTaskEnd)).toEqual([
      expect.objectContaining({ type: 'task_canceled', reason: 'the lease was lost' }),
    ]);
    // The other session is left alone.
    expect(factory.openSessions).toBe(1);
    expect(other.session.id).toBe('other');
    expect(() => a.start('on the old host')).toThrow(/released/);
    // This one is opened again, from what the store holds.
    const b = await factory.createRuntime({ workDir, sessionId: 's' });
    expect(b.session).not.toBe(a.session);
    expect(b.session.history().map((message) => message.content)).toContain('long');
    await b.close();
    await other.close();
    await a.close().catch(() => undefined);
  });
});
