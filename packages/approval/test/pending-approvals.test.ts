import { ClawError } from '@claw/core';
import { describe, expect, it } from 'vitest';
import {
  ApprovalError,
  ApprovalNotPendingError,
  PendingApprovals,
  staticHandler,
  type ApprovalPrompt,
} from '../src/index.js';
import { never } from './fixtures.js';

function prompt(requestId: string): ApprovalPrompt {
  return {
    requestId,
    sessionId: 'session-1',
    toolName: 'write_file',
    risk: 'mutating',
    reason: 'write_file will write a.txt',
    arguments: '{"path":"a.txt","content":"x"}',
    workDir: '/workspace',
  };
}

function notPending(action: () => void): ApprovalNotPendingError {
  try {
    action();
  } catch (error) {
    if (error instanceof ApprovalNotPendingError) return error;
    throw error;
  }
  throw new Error('expected ApprovalNotPendingError');
}

describe('PendingApprovals (APR-5)', () => {
  it('shows the request, waits for respond, and resolves with the decision', async () => {
    const shown: ApprovalPrompt[] = [];
    const pending = new PendingApprovals({ onRequest: (asked) => void shown.push(asked) });
    const answer = pending.approve(prompt('r1'), never());

    expect(shown).toEqual([prompt('r1')]);
    expect(pending.pending()).toEqual(['r1']);
    expect(pending.pendingPrompts()).toEqual([prompt('r1')]);
    pending.respond('r1', 'allow_session');
    await expect(answer).resolves.toBe('allow_session');
    expect(pending.pending()).toEqual([]);
  });

  it('matches answers to requests by id', async () => {
    const pending = new PendingApprovals({ onRequest: () => undefined });
    const first = pending.approve(prompt('r1'), never());
    const second = pending.approve(prompt('r2'), never());
    expect(pending.pending()).toEqual(['r1', 'r2']);
    pending.respond('r2', 'deny');
    pending.respond('r1', 'allow_once');
    await expect(first).resolves.toBe('allow_once');
    await expect(second).resolves.toBe('deny');
  });

  it('refuses an answer to an unknown or already answered request with a clear error', async () => {
    const pending = new PendingApprovals({ onRequest: () => undefined });
    const unknown = notPending(() => pending.respond('nope', 'allow_once'));
    expect(unknown.code).toBe('approval_not_pending');
    expect(unknown.requestId).toBe('nope');
    expect(unknown.message).toContain('"nope"');
    expect(unknown.message).toContain('No request is waiting now');

    const answer = pending.approve(prompt('r1'), never());
    const waiting = pending.approve(prompt('r2'), never());
    pending.respond('r1', 'allow_once');
    await expect(answer).resolves.toBe('allow_once');
    const twice = notPending(() => pending.respond('r1', 'deny'));
    expect(twice.message).toContain('already answered');
    expect(twice.message).toContain('Waiting now: "r2"');
    pending.respond('r2', 'deny');
    await expect(waiting).resolves.toBe('deny');
  });

  it('on abort rejects with the signal reason, leaves nothing pending and refuses a late answer', async () => {
    const pending = new PendingApprovals({ onRequest: () => undefined });
    const controller = new AbortController();
    let listeners = 0;
    const signal = controller.signal;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = (...args: Parameters<typeof add>) => {
      listeners += 1;
      add(...args);
    };
    signal.removeEventListener = (...args: Parameters<typeof remove>) => {
      listeners -= 1;
      remove(...args);
    };

    const answer = pending.approve(prompt('r1'), signal);
    expect(listeners).toBe(1);
    const reason = new Error('user pressed Ctrl-C');
    controller.abort(reason);
    await expect(answer).rejects.toBe(reason);
    expect(pending.pending()).toEqual([]);
    expect(listeners).toBe(0);
    expect(notPending(() => pending.respond('r1', 'allow_once')).code).toBe('approval_not_pending');
  });

  it('removes its abort listener when answered', async () => {
    const pending = new PendingApprovals({ onRequest: () => undefined });
    const controller = new AbortController();
    const answer = pending.approve(prompt('r1'), controller.signal);
    pending.respond('r1', 'allow_once');
    await expect(answer).resolves.toBe('allow_once');
    // An abort after the answer changes nothing.
    controller.abort(new Error('late'));
    await expect(answer).resolves.toBe('allow_once');
    expect(pending.pending()).toEqual([]);
  });

  it('rejects at once, without showing anything, when the signal is already aborted', async () => {
    const shown: string[] = [];
    const pending = new PendingApprovals({ onRequest: (asked) => void shown.push(asked.requestId) });
    const reason = new Error('gone');
    await expect(pending.approve(prompt('r1'), AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(shown).toEqual([]);
    expect(pending.pending()).toEqual([]);
  });

  it('cancelAll rejects every pending request', async () => {
    const pending = new PendingApprovals({ onRequest: () => undefined });
    const first = pending.approve(prompt('r1'), never());
    const second = pending.approve(prompt('r2'), never());
    pending.cancelAll('connection closed');
    await expect(first).rejects.toMatchObject({ code: 'approval_canceled', message: expect.stringContaining('connection closed') as unknown });
    await expect(second).rejects.toBeInstanceOf(ApprovalError);
    expect(pending.pending()).toEqual([]);

    const third = pending.approve(prompt('r3'), never());
    const reason = new Error('Ctrl-C');
    pending.cancelAll(reason);
    await expect(third).rejects.toBe(reason);
  });

  it('fails the approval when the request cannot be shown, and it is no longer pending', async () => {
    const cause = new Error('socket closed');
    const pending = new PendingApprovals({
      onRequest: async () => {
        throw cause;
      },
    });
    const answer = pending.approve(prompt('r1'), never());
    await expect(answer).rejects.toMatchObject({ code: 'approval_request_failed', cause });
    expect(pending.pending()).toEqual([]);

    const failing = new ClawError('sink closed', { code: 'sink_closed' });
    const throwing = new PendingApprovals({
      onRequest: () => {
        throw failing;
      },
    });
    await expect(throwing.approve(prompt('r2'), never())).rejects.toBe(failing);
    expect(throwing.pending()).toEqual([]);
  });

  it('refuses a second request with the same id while the first waits', async () => {
    const pending = new PendingApprovals({ onRequest: () => undefined });
    const first = pending.approve(prompt('r1'), never());
    await expect(pending.approve(prompt('r1'), never())).rejects.toMatchObject({ code: 'approval_already_pending' });
    pending.respond('r1', 'allow_once');
    await expect(first).resolves.toBe('allow_once');
  });

  it('refuses a decision that is not one', async () => {
    const pending = new PendingApprovals({ onRequest: () => undefined });
    const answer = pending.approve(prompt('r1'), never());
    expect(() => pending.respond('r1', 'yes' as never)).toThrow(/"yes" is not an approval decision/);
    expect(pending.pending()).toEqual(['r1']);
    pending.respond('r1', 'deny');
    await expect(answer).resolves.toBe('deny');
  });
});

describe('staticHandler', () => {
  it('always answers the same', async () => {
    const handler = staticHandler('deny');
    await expect(handler.approve(prompt('r1'), never())).resolves.toBe('deny');
    await expect(staticHandler('allow_session').approve(prompt('r2'), never())).resolves.toBe('allow_session');
  });

  it('rejects with the reason of an aborted signal', async () => {
    const reason = new Error('stop');
    await expect(staticHandler('allow_once').approve(prompt('r1'), AbortSignal.abort(reason))).rejects.toBe(reason);
  });

  it('refuses a decision that is not one', () => {
    expect(() => staticHandler('maybe' as never)).toThrow(ApprovalError);
  });
});
