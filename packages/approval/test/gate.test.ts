import { readFile } from 'node:fs/promises';
import nodePath from 'node:path';
import type { ApprovalDecision } from '@claw/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ApprovalError,
  FileAuditLog,
  FileGrantStore,
  Gate,
  GrantStoreError,
  MemoryAuditLog,
  MemoryGrantStore,
  PendingApprovals,
  argumentDigest,
  grantKey,
  nodeFileSystem,
  type ApprovalHandler,
  type ApprovalMode,
  type AuditEntry,
  type GrantStore,
  type Policy,
} from '../src/index.js';
import { ManualClock, RecordingHandler, callRequest, never, removeTempDirs, tempDir } from './fixtures.js';

let workDir: string;
let clock: ManualClock;
let audit: MemoryAuditLog;

beforeEach(async () => {
  workDir = await tempDir();
  clock = new ManualClock();
  audit = new MemoryAuditLog();
});
afterEach(removeTempDirs);

function makeGate(options: {
  handler: ApprovalHandler;
  grants?: GrantStore;
  mode?: ApprovalMode;
  grantTtlMs?: number;
  policy?: Policy;
}): Gate {
  let next = 0;
  return new Gate({
    handler: options.handler,
    grants: options.grants ?? new MemoryGrantStore(),
    audit,
    now: clock.now,
    newRequestId: () => `request-${++next}`,
    ...(options.mode === undefined ? {} : { mode: options.mode }),
    ...(options.grantTtlMs === undefined ? {} : { grantTtlMs: options.grantTtlMs }),
    ...(options.policy === undefined ? {} : { policy: options.policy }),
  });
}

const write = (args: Record<string, unknown> | string, overrides: { workDir?: string; sessionId?: string } = {}) =>
  callRequest({ toolName: 'write_file', args, workDir: overrides.workDir ?? workDir, ...(overrides.sessionId === undefined ? {} : { sessionId: overrides.sessionId }) });
const bash = (command: string) => callRequest({ toolName: 'bash', args: { command }, workDir });
const decisions = (): string[] => audit.entries.map((entry) => entry.decision);

describe('Gate: session grants (APR-2)', () => {
  it('reuses a session grant for the same arguments and asks only once', async () => {
    const handler = new RecordingHandler(['allow_session']);
    const gate = makeGate({ handler });
    const request = write({ path: 'a.txt', content: 'x' });

    expect(await gate.check(request, { signal: never() })).toEqual({ allowed: true, decision: 'allow_session' });
    expect(await gate.check(request, { signal: never() })).toEqual({ allowed: true, decision: 'allow_session' });
    expect(await gate.check(request, { signal: never() })).toEqual({ allowed: true, decision: 'allow_session' });
    expect(handler.prompts).toHaveLength(1);
    expect(decisions()).toEqual(['allow_session', 'grant_reuse', 'grant_reuse']);
    expect(audit.entries[1]?.reason).toBe('allowed for the session by request request-1 at 2030-01-01T00:00:00.000Z');
  });

  it('asks again for other arguments', async () => {
    const handler = new RecordingHandler(['allow_session', 'allow_once']);
    const gate = makeGate({ handler });
    await gate.check(bash('npm test'), { signal: never() });
    expect(await gate.check(bash('npm run build'), { signal: never() })).toEqual({ allowed: true, decision: 'allow_once' });
    expect(handler.prompts.map((prompt) => prompt.reason.split('\n')[0])).toEqual([
      'bash will run: npm test',
      'bash will run: npm run build',
    ]);
  });

  it('treats the same arguments in another key order, nested too, as the same call', async () => {
    const handler = new RecordingHandler(['allow_session']);
    const gate = makeGate({ handler, policy: { evaluate: async () => ({ action: 'ask', reason: 'custom' }) } });
    const first = callRequest({ toolName: 'deploy', args: '{"a":1,"b":{"x":[1,2],"y":2}}', workDir });
    const reordered = callRequest({ toolName: 'deploy', args: '{"b":{"y":2,"x":[1,2]},"a":1}', workDir });
    await gate.check(first, { signal: never() });
    expect(await gate.check(reordered, { signal: never() })).toEqual({ allowed: true, decision: 'allow_session' });
    expect(handler.prompts).toHaveLength(1);
  });

  it('does not reuse a grant in another workspace', async () => {
    const otherWorkDir = await tempDir();
    const handler = new RecordingHandler(['allow_session', 'deny']);
    const gate = makeGate({ handler });
    await gate.check(write({ path: 'a.txt', content: 'x' }), { signal: never() });
    const elsewhere = await gate.check(write({ path: 'a.txt', content: 'x' }, { workDir: otherWorkDir }), { signal: never() });
    expect(elsewhere).toMatchObject({ allowed: false, decision: 'deny' });
    expect(handler.prompts.map((prompt) => prompt.workDir)).toEqual([workDir, otherWorkDir]);
  });

  it('does not reuse a grant in another session', async () => {
    const handler = new RecordingHandler(['allow_session', 'allow_once']);
    const gate = makeGate({ handler });
    await gate.check(write({ path: 'a.txt', content: 'x' }, { sessionId: 'one' }), { signal: never() });
    expect(await gate.check(write({ path: 'a.txt', content: 'x' }, { sessionId: 'two' }), { signal: never() })).toEqual({
      allowed: true,
      decision: 'allow_once',
    });
    expect(handler.prompts.map((prompt) => prompt.sessionId)).toEqual(['one', 'two']);
  });

  it('does not keep a grant for allow_once', async () => {
    const handler = new RecordingHandler(['allow_once', 'allow_once']);
    const grants = new MemoryGrantStore();
    const gate = makeGate({ handler, grants });
    await gate.check(write({ path: 'a.txt', content: 'x' }), { signal: never() });
    await gate.check(write({ path: 'a.txt', content: 'x' }), { signal: never() });
    expect(handler.prompts).toHaveLength(2);
    expect(await grants.list()).toEqual([]);
    expect(decisions()).toEqual(['allow_once', 'allow_once']);
  });

  it('counts blank arguments as {} and never lets invalid JSON match {}', async () => {
    const handler = new RecordingHandler(['allow_session', 'deny']);
    const gate = makeGate({ handler, policy: { evaluate: async () => ({ action: 'ask', reason: 'custom' }) } });
    const call = (args: string) => callRequest({ toolName: 'deploy', args, workDir });
    await gate.check(call(''), { signal: never() });
    expect(await gate.check(call('{}'), { signal: never() })).toEqual({ allowed: true, decision: 'allow_session' });
    expect(await gate.check(call('  '), { signal: never() })).toEqual({ allowed: true, decision: 'allow_session' });
    expect(await gate.check(call('{'), { signal: never() })).toMatchObject({ allowed: false, decision: 'deny' });
    expect(handler.prompts.map((prompt) => prompt.arguments)).toEqual(['', '{']);
  });

  it('keeps the grant with its audit fields and the expiry from grantTtlMs', async () => {
    const grants = new MemoryGrantStore();
    const gate = makeGate({ handler: new RecordingHandler(['allow_session']), grants, grantTtlMs: 60_000 });
    const request = write({ path: 'a.txt', content: 'x' });
    await gate.check(request, { signal: never() });
    const digest = argumentDigest(request.toolCall.arguments);
    expect(await grants.list()).toEqual([
      {
        key: grantKey({ sessionId: 'session-1', workDir, toolName: 'write_file', digest }),
        sessionId: 'session-1',
        workDir,
        toolName: 'write_file',
        digest,
        requestId: 'request-1',
        decision: 'allow_session',
        approvedAt: '2030-01-01T00:00:00.000Z',
        expiresAt: '2030-01-01T00:01:00.000Z',
      },
    ]);
  });

  it('keeps a grant without expiry when no grantTtlMs is given', async () => {
    const grants = new MemoryGrantStore();
    const gate = makeGate({ handler: new RecordingHandler(['allow_session']), grants });
    await gate.check(write({ path: 'a.txt', content: 'x' }), { signal: never() });
    const [kept] = await grants.list();
    expect(kept).toBeDefined();
    expect(kept?.expiresAt).toBeUndefined();
    clock.advance(365 * 24 * 3600 * 1000);
    expect(await gate.check(write({ path: 'a.txt', content: 'x' }), { signal: never() })).toEqual({ allowed: true, decision: 'allow_session' });
  });

  it('asks again once a grant has expired, and removes it from the file', async () => {
    const grants = new FileGrantStore({ workDir });
    const handler = new RecordingHandler(['allow_session', 'allow_once']);
    const gate = makeGate({ handler, grants, grantTtlMs: 1000 });
    const request = write({ path: 'a.txt', content: 'x' });
    await gate.check(request, { signal: never() });
    clock.advance(999);
    expect(await gate.check(request, { signal: never() })).toEqual({ allowed: true, decision: 'allow_session' });
    clock.advance(1);
    expect(await gate.check(request, { signal: never() })).toEqual({ allowed: true, decision: 'allow_once' });
    expect(handler.prompts).toHaveLength(2);
    const file = JSON.parse(await readFile(nodePath.join(workDir, '.claw', 'grants.json'), 'utf8')) as { grants: unknown[] };
    expect(file.grants).toEqual([]);
    expect(decisions()).toEqual(['allow_session', 'grant_reuse', 'allow_once']);
  });

  it('reuses a grant kept in the file by an earlier process (second store instance)', async () => {
    const request = write({ path: 'a.txt', content: 'x' });
    await makeGate({ handler: new RecordingHandler(['allow_session']), grants: new FileGrantStore({ workDir }) })
      .check(request, { signal: never() });
    const handler = new RecordingHandler([]);
    const later = makeGate({ handler, grants: new FileGrantStore({ workDir }) });
    expect(await later.check(request, { signal: never() })).toEqual({ allowed: true, decision: 'allow_session' });
    expect(handler.prompts).toEqual([]);
  });

  it('does not allow the call when the grant cannot be saved', async () => {
    const grants = new FileGrantStore({
      workDir,
      fileSystem: { ...nodeFileSystem, rename: async () => Promise.reject(Object.assign(new Error('EROFS: read-only file system'), { code: 'EROFS' })) },
    });
    const gate = makeGate({ handler: new RecordingHandler(['allow_session']), grants });
    const check = gate.check(write({ path: 'a.txt', content: 'x' }), { signal: never() });
    await expect(check).rejects.toBeInstanceOf(GrantStoreError);
    await expect(check).rejects.toMatchObject({ code: 'grant_store_write_failed' });
    expect(await grants.list()).toEqual([]);
  });
});

describe('Gate: policy decisions are final (APR-1)', () => {
  it('denies rm -rf / without calling the handler', async () => {
    const handler = new RecordingHandler([]);
    const gate = makeGate({ handler, mode: 'allow' });
    expect(await gate.check(bash('rm -rf /'), { signal: never() })).toEqual({
      allowed: false,
      reason: 'the command is destructive: recursive rm of the file-system root (/)',
      decision: 'policy_deny',
    });
    expect(handler.prompts).toEqual([]);
    expect(audit.entries).toEqual([
      {
        time: '2030-01-01T00:00:00.000Z',
        requestId: 'request-1',
        sessionId: 'session-1',
        toolName: 'bash',
        digest: argumentDigest('{"command":"rm -rf /"}'),
        decision: 'policy_deny',
        reason: 'the command is destructive: recursive rm of the file-system root (/)',
      } satisfies AuditEntry,
    ]);
  });

  it('uses the default policy when none is given', async () => {
    const handler = new RecordingHandler([]);
    const gate = new Gate({ handler, grants: new MemoryGrantStore() });
    expect(await gate.check(bash('rm -rf /'), { signal: never() })).toMatchObject({ allowed: false, decision: 'policy_deny' });
    expect(handler.prompts).toEqual([]);
  });

  it.each([
    ['read_file', { path: '/etc/passwd' }],
    ['read_file', { path: '../secret' }],
    ['write_file', { path: '../escape.txt', content: 'x' }],
    ['write_file', { path: '.claw/grants.json', content: '{}' }],
    ['edit_file', { path: '.git/hooks/pre-commit', old_string: 'a', new_string: 'b' }],
    ['bash', { command: 'cat /etc/passwd' }],
  ])('denies %s %j without calling the handler, even with a grant-friendly mode', async (toolName, args) => {
    const handler = new RecordingHandler([]);
    for (const mode of ['ask', 'allow'] as const) {
      const gate = makeGate({ handler, mode });
      expect(await gate.check(callRequest({ toolName, args, workDir }), { signal: never() })).toMatchObject({
        allowed: false,
        decision: 'policy_deny',
      });
    }
    expect(handler.prompts).toEqual([]);
    expect(decisions()).toEqual(['policy_deny', 'policy_deny']);
  });

  it('allows a safe call without asking, and audits it', async () => {
    const handler = new RecordingHandler([]);
    const gate = makeGate({ handler, mode: 'deny' });
    expect(await gate.check(callRequest({ toolName: 'read_file', args: { path: 'a.txt' }, workDir }), { signal: never() })).toEqual({
      allowed: true,
      decision: 'policy_allow',
    });
    expect(handler.prompts).toEqual([]);
    expect(audit.entries).toEqual([
      {
        time: '2030-01-01T00:00:00.000Z',
        requestId: 'request-1',
        sessionId: 'session-1',
        toolName: 'read_file',
        digest: argumentDigest('{"path":"a.txt"}'),
        decision: 'policy_allow',
      },
    ]);
  });
});

describe('Gate: approval modes (CLI-6)', () => {
  it('allows once without asking in mode allow', async () => {
    const handler = new RecordingHandler([]);
    const grants = new MemoryGrantStore();
    const gate = makeGate({ handler, grants, mode: 'allow' });
    expect(await gate.check(write({ path: 'a.txt', content: 'x' }), { signal: never() })).toEqual({ allowed: true, decision: 'allow_once' });
    expect(handler.prompts).toEqual([]);
    expect(await grants.list()).toEqual([]);
    expect(audit.entries).toMatchObject([{ decision: 'mode_allow', reason: 'write_file will write a.txt' }]);
  });

  it('still asks a human in mode allow when the policy requires one', async () => {
    const handler = new RecordingHandler(['deny']);
    const gate = makeGate({ handler, mode: 'allow' });
    expect(await gate.check(bash('npm test'), { signal: never() })).toMatchObject({ allowed: false, decision: 'deny' });
    expect(handler.prompts).toHaveLength(1);
    expect(decisions()).toEqual(['deny']);
  });

  it('denies in mode deny, saying how to allow it', async () => {
    const handler = new RecordingHandler([]);
    const gate = makeGate({ handler, mode: 'deny' });
    const result = await gate.check(write({ path: 'a.txt', content: 'x' }), { signal: never() });
    expect(result).toEqual({
      allowed: false,
      reason:
        'write_file will write a.txt\nApproval mode is deny, so calls that need approval are refused. ' +
        'To allow them, run with --approval ask (to be asked) or --approval allow.',
      decision: 'deny',
    });
    expect(handler.prompts).toEqual([]);
    expect(audit.entries).toMatchObject([{ decision: 'mode_deny', reason: 'write_file will write a.txt' }]);
  });

  it('denies a call that needs a human in mode deny, pointing at --approval ask', async () => {
    const handler = new RecordingHandler([]);
    const gate = makeGate({ handler, mode: 'deny' });
    const result = await gate.check(bash('npm test'), { signal: never() });
    expect(result).toMatchObject({ allowed: false, decision: 'deny' });
    expect(result.allowed ? '' : result.reason).toMatch(/needs a person to allow it: run with --approval ask\.$/);
    expect(handler.prompts).toEqual([]);
    expect(decisions()).toEqual(['mode_deny']);
  });

  it('honours an existing session grant in mode deny', async () => {
    const grants = new MemoryGrantStore();
    const request = write({ path: 'a.txt', content: 'x' });
    await makeGate({ handler: new RecordingHandler(['allow_session']), grants }).check(request, { signal: never() });
    const gate = makeGate({ handler: new RecordingHandler([]), grants, mode: 'deny' });
    expect(await gate.check(request, { signal: never() })).toEqual({ allowed: true, decision: 'allow_session' });
    expect(decisions()).toEqual(['allow_session', 'grant_reuse']);
  });
});

describe('Gate: asking the user (APR-5)', () => {
  it('shows the handler what the call will do', async () => {
    const handler = new RecordingHandler(['allow_once']);
    const gate = makeGate({ handler });
    const request = write({ path: 'src/a.ts', content: 'x' });
    await gate.check(request, { signal: never() });
    expect(handler.prompts).toEqual([
      {
        requestId: 'request-1',
        sessionId: 'session-1',
        toolName: 'write_file',
        risk: 'mutating',
        reason: 'write_file will write src/a.ts',
        arguments: '{"path":"src/a.ts","content":"x"}',
        workDir,
        // Which call of the conversation it is (an editor shows the question on it, ACP-3).
        toolCallId: 'call-1',
      },
    ]);
  });

  it('denies when the user denies, and audits it', async () => {
    const gate = makeGate({ handler: new RecordingHandler(['deny']) });
    expect(await gate.check(write({ path: 'a.txt', content: 'x' }), { signal: never() })).toEqual({
      allowed: false,
      reason: 'the user denied it: write_file will write a.txt',
      decision: 'deny',
    });
    expect(audit.entries).toMatchObject([{ requestId: 'request-1', decision: 'deny', reason: 'write_file will write a.txt' }]);
  });

  it('rejects with the signal reason when aborted while waiting, leaving nothing pending', async () => {
    let markShown: (requestId: string) => void = () => undefined;
    const shown = new Promise<string>((resolve) => {
      markShown = resolve;
    });
    const pending = new PendingApprovals({ onRequest: (prompt) => markShown(prompt.requestId) });
    const gate = makeGate({ handler: pending });
    const controller = new AbortController();
    const check = gate.check(write({ path: 'a.txt', content: 'x' }), { signal: controller.signal });
    expect(await shown).toBe('request-1');
    expect(pending.pending()).toEqual(['request-1']);

    const reason = new Error('Ctrl-C');
    controller.abort(reason);
    await expect(check).rejects.toBe(reason);
    expect(pending.pending()).toEqual([]);
    expect(() => pending.respond('request-1', 'allow_once')).toThrow(/No approval request "request-1" is waiting/);
    expect(audit.entries).toEqual([]);
  });

  it('is answered through PendingApprovals.respond', async () => {
    const pending = new PendingApprovals({ onRequest: (prompt) => queueMicrotask(() => pending.respond(prompt.requestId, 'allow_session')) });
    const gate = makeGate({ handler: pending });
    expect(await gate.check(write({ path: 'a.txt', content: 'x' }), { signal: never() })).toEqual({ allowed: true, decision: 'allow_session' });
  });

  it('rejects with the signal reason even when the handler ignores the signal', async () => {
    let removed = 0;
    let markAsked: () => void = () => undefined;
    const asked = new Promise<void>((resolve) => {
      markAsked = resolve;
    });
    const deaf: ApprovalHandler = {
      approve: () => {
        markAsked();
        return new Promise<ApprovalDecision>(() => undefined);
      },
    };
    const gate = makeGate({ handler: deaf });
    const controller = new AbortController();
    const signal = controller.signal;
    const remove = signal.removeEventListener.bind(signal);
    signal.removeEventListener = (...args: Parameters<typeof remove>) => {
      removed += 1;
      remove(...args);
    };
    const check = gate.check(write({ path: 'a.txt', content: 'x' }), { signal });
    await asked;
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(check).rejects.toBe(reason);
    expect(removed).toBe(1);
  });

  it('rejects at once when the signal is already aborted', async () => {
    const handler = new RecordingHandler([]);
    const reason = new Error('already gone');
    await expect(makeGate({ handler }).check(bash('rm -rf /'), { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(audit.entries).toEqual([]);
  });

  it('refuses an answer that is not a decision', async () => {
    const odd: ApprovalHandler = { approve: async () => 'sure' as ApprovalDecision };
    const check = makeGate({ handler: odd }).check(write({ path: 'a.txt', content: 'x' }), { signal: never() });
    await expect(check).rejects.toBeInstanceOf(ApprovalError);
    await expect(check).rejects.toMatchObject({ code: 'invalid_approval_decision' });
  });
});

describe('Gate with the file audit log (APR-4)', () => {
  it('records every path of a session in .claw/audit.jsonl', async () => {
    const handler = new RecordingHandler(['allow_session', 'allow_once', 'deny']);
    const gate = new Gate({
      handler,
      grants: new FileGrantStore({ workDir }),
      audit: new FileAuditLog({ workDir }),
      now: clock.now,
      newRequestId: (() => {
        let next = 0;
        return () => `r${++next}`;
      })(),
    });
    const signal = never();
    await gate.check(callRequest({ toolName: 'read_file', args: { path: 'a.txt' }, workDir }), { signal });
    await gate.check(write({ path: 'a.txt', content: 'x' }), { signal });
    await gate.check(write({ path: 'a.txt', content: 'x' }), { signal });
    await gate.check(write({ path: 'b.txt', content: 'x' }), { signal });
    await gate.check(write({ path: 'c.txt', content: 'x' }), { signal });
    await gate.check(bash('rm -rf /'), { signal });

    const lines = (await readFile(nodePath.join(workDir, '.claw', 'audit.jsonl'), 'utf8')).trim().split('\n');
    const entries = lines.map((line) => JSON.parse(line) as AuditEntry);
    expect(entries.map((entry) => [entry.requestId, entry.toolName, entry.decision])).toEqual([
      ['r1', 'read_file', 'policy_allow'],
      ['r2', 'write_file', 'allow_session'],
      ['r3', 'write_file', 'grant_reuse'],
      ['r4', 'write_file', 'allow_once'],
      ['r5', 'write_file', 'deny'],
      ['r6', 'bash', 'policy_deny'],
    ]);
    expect(entries.every((entry) => entry.time === '2030-01-01T00:00:00.000Z' && entry.sessionId === 'session-1')).toBe(true);
  });
});

describe('a handler that answers with its own reason', () => {
  it('passes the reason to the model and the audit log instead of "the user denied it"', async () => {
    const audit = new MemoryAuditLog();
    const gate = new Gate({
      handler: { approve: async () => ({ decision: 'deny' as const, reason: 'nobody was asked: this run is unattended' }) },
      grants: new MemoryGrantStore(),
      audit,
    });
    const decision = await gate.check(
      {
        sessionId: 's',
        workDir: '/virtual',
        risk: 'dangerous',
        arguments: { command: 'npm test' },
        toolCall: { id: 'c1', name: 'bash', arguments: '{"command":"npm test"}' },
      },
      { signal: new AbortController().signal },
    );
    expect(decision).toEqual({ allowed: false, reason: 'nobody was asked: this run is unattended', decision: 'deny' });
    expect(audit.entries.at(-1)).toMatchObject({ decision: 'deny', reason: 'nobody was asked: this run is unattended' });
  });
});

describe('Gate: onAsking (the engine groups the intents of the calls not waiting for a person)', () => {
  it('is called once, just before the handler is asked, and never for calls decided without a person', async () => {
    const order: string[] = [];
    const handler: ApprovalHandler = {
      approve: async () => {
        order.push('handler');
        return 'allow_session';
      },
    };
    const gate = makeGate({ handler });
    const onAsking = () => void order.push('asking');
    const call = write({ path: 'a.txt', content: 'x' });
    await gate.check(call, { signal: never(), onAsking });
    expect(order).toEqual(['asking', 'handler']);

    // A session grant, a policy denial, a safe call, mode allow and mode deny ask nobody.
    await gate.check(call, { signal: never(), onAsking });
    await gate.check(bash('rm -rf /'), { signal: never(), onAsking });
    await gate.check(callRequest({ toolName: 'read_file', args: { path: 'a.txt' }, workDir, risk: 'safe' }), { signal: never(), onAsking });
    await makeGate({ handler, mode: 'allow' }).check(write({ path: 'b.txt', content: 'x' }), { signal: never(), onAsking });
    await makeGate({ handler, mode: 'deny' }).check(write({ path: 'b.txt', content: 'x' }), { signal: never(), onAsking });
    expect(order).toEqual(['asking', 'handler']);
    expect(decisions()).toEqual(['allow_session', 'grant_reuse', 'policy_deny', 'policy_allow', 'mode_allow', 'mode_deny']);
  });
});
