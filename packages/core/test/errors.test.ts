import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  ClawError,
  abortReason,
  errorMessage,
  findError,
  hasErrorCode,
  linkAbortSignal,
  sleep,
  throwIfAborted,
} from '../src/index.js';

class QuotaError extends ClawError {
  constructor(cause?: unknown) {
    super('quota', { code: 'quota', cause });
  }
}

describe('ClawError', () => {
  it('keeps code, cause, message and its subclass name', () => {
    const cause = new Error('socket reset');
    const error = new QuotaError(cause);
    expect(error).toBeInstanceOf(ClawError);
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe('quota');
    expect(error.cause).toBe(cause);
    expect(error.name).toBe('QuotaError');
    expect(new ClawError('x', { code: 'c' })).not.toHaveProperty('cause');
  });
});

describe('findError', () => {
  it('finds an error class through any depth of wrapping', () => {
    const inner = new QuotaError();
    const wrapped = new Error('outer', { cause: new ClawError('middle', { code: 'm', cause: inner }) });
    expect(findError(wrapped, QuotaError)).toBe(inner);
    expect(findError(new Error('plain'), QuotaError)).toBeUndefined();
    expect(findError(undefined, QuotaError)).toBeUndefined();
  });

  it('looks inside AggregateError and survives cause cycles', () => {
    const inner = new QuotaError();
    expect(findError(new AggregateError([new Error('a'), inner]), QuotaError)).toBe(inner);
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(findError(a, QuotaError)).toBeUndefined();
  });
});

describe('hasErrorCode and errorMessage', () => {
  it('matches codes anywhere in the chain', () => {
    const error = new Error('outer', { cause: new ClawError('inner', { code: 'budget' }) });
    expect(hasErrorCode(error, 'budget')).toBe(true);
    expect(hasErrorCode(error, 'other')).toBe(false);
  });

  it('describes anything thrown', () => {
    expect(errorMessage(new Error('boom'))).toBe('boom');
    expect(errorMessage('text')).toBe('text');
    expect(errorMessage({ a: 1 })).toBe('{"a":1}');
  });
});

describe('abort helpers', () => {
  it('abortReason returns the reason when it is an Error, and wraps other reasons', () => {
    const reason = new Error('stop');
    expect(abortReason(AbortSignal.abort(reason))).toBe(reason);
    const wrapped = abortReason(AbortSignal.abort('just a string'));
    expect(wrapped).toBeInstanceOf(ClawError);
    expect((wrapped as ClawError).code).toBe('aborted');
    expect(abortReason(AbortSignal.abort()).name).toBe('AbortError');
  });

  it('throwIfAborted throws the reason only when aborted', () => {
    const reason = new Error('stop');
    expect(() => throwIfAborted(AbortSignal.abort(reason))).toThrow(reason);
    expect(() => throwIfAborted(new AbortController().signal)).not.toThrow();
    expect(() => throwIfAborted(undefined)).not.toThrow();
  });

  it('sleep resolves after the delay and rejects at once with the abort reason', async () => {
    await expect(sleep(1)).resolves.toBeUndefined();
    const controller = new AbortController();
    const reason = new Error('stop');
    const pending = sleep(60_000, controller.signal);
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await expect(sleep(10, AbortSignal.abort(reason))).rejects.toBe(reason);
  });
});

describe('linkAbortSignal', () => {
  it('forwards the parent\'s abort with its reason, and dispose removes its listener', () => {
    const parent = new AbortController();
    const link = linkAbortSignal(parent.signal);
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(1);
    const reason = new Error('stop');
    parent.abort(reason);
    expect(link.signal.aborted).toBe(true);
    expect(link.signal.reason).toBe(reason);

    const other = new AbortController();
    const disposed = linkAbortSignal(other.signal);
    disposed.dispose();
    expect(getEventListeners(other.signal, 'abort')).toHaveLength(0);
    other.abort();
    expect(disposed.signal.aborted).toBe(false);
    expect(linkAbortSignal(AbortSignal.abort(reason)).signal.reason).toBe(reason);
  });
});
