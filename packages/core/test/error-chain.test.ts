import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  ClawError,
  ClawUserError,
  causeChain,
  errnoCode,
  findError,
  hasErrorCode,
  isUserError,
  linkAbortSignal,
} from '../src/index.js';

class QuotaError extends ClawError {
  constructor(cause?: unknown) {
    super('quota', { code: 'quota', cause });
  }
}

describe('causeChain: one walk for findError and hasErrorCode', () => {
  it('finds a code inside an AggregateError member, as findError finds the class there', () => {
    // Before the walks were one, hasErrorCode followed only `cause` and missed AggregateErrors.
    const wrapped = new ClawError('outer', {
      code: 'outer',
      cause: new AggregateError([new Error('a'), new QuotaError()], 'both failed'),
    });
    expect(findError(wrapped, QuotaError)).toBeInstanceOf(QuotaError);
    expect(hasErrorCode(wrapped, 'quota')).toBe(true);
    expect(hasErrorCode(wrapped, 'missing')).toBe(false);
  });

  it('visits breadth first, skips repeats and cycles, and stops after 32 errors', () => {
    const first = new Error('first');
    const second = new Error('second', { cause: first });
    (first as { cause?: unknown }).cause = second;
    expect([...causeChain(second)].map((error) => (error as Error).message)).toEqual([
      'second',
      'first',
    ]);
    let deep: Error = new QuotaError();
    for (let index = 0; index < 40; index += 1) deep = new Error(`level ${index}`, { cause: deep });
    expect([...causeChain(deep)]).toHaveLength(32);
    expect(findError(deep, QuotaError)).toBeUndefined();
    expect([...causeChain(undefined)]).toEqual([]);
  });
});

describe('user errors', () => {
  it('are marked by the code that throws them, not by a list of codes', () => {
    expect(isUserError(new ClawUserError('bad flag', { code: 'usage' }))).toBe(true);
    expect(isUserError(new ClawError('locked', { code: 'x', userError: true }))).toBe(true);
    expect(isUserError(new ClawError('model down', { code: 'usage' }))).toBe(false);
    expect(isUserError(new Error('plain'))).toBe(false);
    expect(new ClawUserError('bad', { code: 'usage' })).toBeInstanceOf(ClawError);
  });
});

describe('errnoCode', () => {
  it('reads the code of a system error and nothing else', () => {
    expect(errnoCode(Object.assign(new Error('x'), { code: 'ENOENT' }))).toBe('ENOENT');
    expect(errnoCode(new Error('x'))).toBeUndefined();
    expect(errnoCode({ code: 3 })).toBeUndefined();
    expect(errnoCode(null)).toBeUndefined();
    expect(errnoCode(undefined)).toBeUndefined();
  });
});

describe('linkAbortSignal with several parents', () => {
  it('aborts with the first parent\'s reason and removes every listener', () => {
    const run = new AbortController();
    const budget = new AbortController();
    const link = linkAbortSignal(run.signal, undefined, budget.signal);
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(1);
    expect(getEventListeners(budget.signal, 'abort')).toHaveLength(1);
    const reason = new Error('budget');
    budget.abort(reason);
    expect(link.signal.reason).toBe(reason);
    // The abort itself took the listeners off the other parent too.
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(0);
    run.abort(new Error('later'));
    expect(link.signal.reason).toBe(reason);
  });

  it('is aborted at once when a parent already is, and dispose leaves no listener', () => {
    const reason = new Error('already');
    const live = new AbortController();
    expect(linkAbortSignal(live.signal, AbortSignal.abort(reason)).signal.reason).toBe(reason);
    expect(getEventListeners(live.signal, 'abort')).toHaveLength(0);
    const link = linkAbortSignal(live.signal);
    link.dispose();
    link.dispose();
    expect(getEventListeners(live.signal, 'abort')).toHaveLength(0);
    expect(linkAbortSignal().signal.aborted).toBe(false);
  });
});

describe('raceAbort and closeIterator', () => {
  it('raceAbort settles like the promise, or rejects with the reason at once, leaving no listener', async () => {
    const { raceAbort } = await import('../src/index.js');
    const controller = new AbortController();
    await expect(raceAbort(Promise.resolve(1), controller.signal)).resolves.toBe(1);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    const never = new Promise<never>(() => undefined);
    const raced = raceAbort(never, controller.signal);
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(raced).rejects.toBe(reason);
    // A promise that rejects after an abort is handled (no unhandled rejection).
    await expect(raceAbort(Promise.reject(new Error('late')), AbortSignal.abort(reason))).rejects.toBe(reason);
    await expect(raceAbort(Promise.resolve(2), undefined)).resolves.toBe(2);
  });

  it('closeIterator ends an iteration, and never waits on a next() still in flight', async () => {
    const { closeIterator } = await import('../src/index.js');
    let returned = 0;
    const iterator: AsyncIterator<number> = {
      next: () => new Promise(() => undefined),
      return: async () => {
        returned += 1;
        return { done: true, value: undefined };
      },
    };
    await closeIterator(iterator, false);
    await closeIterator(iterator, true);
    expect(returned).toBe(2);
    await closeIterator({ next: () => Promise.resolve({ done: true, value: undefined }) }, false);
    await closeIterator({
      next: () => Promise.resolve({ done: true, value: undefined }),
      return: () => Promise.reject(new Error('broken')),
    }, false);
  });
});

describe('writeAll', () => {
  it('calls write again after a short write until every byte is written', async () => {
    const { writeAll } = await import('../src/index.js');
    const written: number[] = [];
    const calls: Array<[number, number]> = [];
    writeAll('héllo wörld', (bytes, offset, length) => {
      calls.push([offset, length]);
      const part = Math.min(3, length);
      written.push(...bytes.subarray(offset, offset + part));
      return part;
    });
    expect(new TextDecoder().decode(new Uint8Array(written))).toBe('héllo wörld');
    expect(calls[0]).toEqual([0, 13]);
    expect(calls).toHaveLength(5);
  });
});
