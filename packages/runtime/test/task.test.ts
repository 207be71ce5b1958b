import { ClawError } from '@claw/core';
import { describe, expect, it } from 'vitest';
import { Task } from '../src/index.js';

describe('Task (RT-1, RT-7)', () => {
  it('turns a run that rejects, or throws at once, into a failed result; wait never rejects', async () => {
    const rejecting = new Task('t1', () => Promise.reject(new Error('boom')));
    const throwing = new Task('t2', () => {
      throw new ClawError('bad tool', { code: 'duplicate_tool' });
    });
    await expect(rejecting.wait()).resolves.toMatchObject({ status: 'failed', error: { code: 'run_failed' } });
    expect((await rejecting.wait()).error?.message).toContain('boom');
    await expect(throwing.wait()).resolves.toMatchObject({ status: 'failed', error: { code: 'duplicate_tool' } });
    expect(rejecting.status).toBe('failed');
  });

  it('cancel aborts the run\'s signal with the reason', async () => {
    const task = new Task('t3', (signal) =>
      new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error))),
    );
    const reason = new Error('stop');
    task.cancel(reason);
    expect(task.signal.reason).toBe(reason);
    expect((await task.wait()).status).toBe('failed');
  });
});
