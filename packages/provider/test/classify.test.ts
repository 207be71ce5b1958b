import { ClawError, findError } from '@claw/core';
import { describe, expect, it } from 'vitest';
import {
  HttpError,
  ModelTimeoutError,
  NetworkError,
  PartialResponseError,
  classifyError,
  findHttpError,
} from '../src/index.js';

const http = (status: number) => new HttpError(`model API returned HTTP ${status}`, { status });
/** How the engine would wrap a model failure: a message prefix, the error kept as cause. */
const wrap = (error: Error) => new ClawError(`turn 3: ${error.message}`, { code: 'run_failed', cause: error });

describe('classifyError (PRV-2)', () => {
  it.each([429, 408, 409, 500, 502, 503, 504, 599])('HTTP %i is retryable', (status) => {
    expect(classifyError(http(status))).toBe('retryable');
  });

  it.each([400, 401, 403, 404, 422, 499, 600])('HTTP %i is fatal', (status) => {
    expect(classifyError(http(status))).toBe('fatal');
  });

  it.each(['network_error', 'network_timeout', 'stream_incomplete'] as const)('NetworkError %s is retryable', (code) => {
    expect(classifyError(new NetworkError('connection reset', { code }))).toBe('retryable');
  });

  it('both model timeouts are retryable', () => {
    expect(classifyError(new ModelTimeoutError('call', 60_000))).toBe('retryable');
    expect(classifyError(new ModelTimeoutError('first_token', 15_000))).toBe('retryable');
  });

  it('local errors are fatal: plain errors, invalid tool JSON, an unbuildable request, non-errors', () => {
    expect(classifyError(new Error('something broke'))).toBe('fatal');
    expect(classifyError(new SyntaxError('Unexpected token } in JSON'))).toBe('fatal');
    expect(classifyError(new ClawError('cannot build the request', { code: 'invalid_request' }))).toBe('fatal');
    expect(classifyError(new ClawError('bad data', { code: 'invalid_response' }))).toBe('fatal');
    expect(classifyError('a string')).toBe('fatal');
    expect(classifyError(undefined)).toBe('fatal');
  });

  it('aborts are canceled: AbortError, a deadline, and ClawError "aborted"', () => {
    expect(classifyError(new DOMException('This operation was aborted', 'AbortError'))).toBe('canceled');
    expect(classifyError(new DOMException('The operation timed out', 'TimeoutError'))).toBe('canceled');
    expect(classifyError(new ClawError('model request aborted', { code: 'aborted' }))).toBe('canceled');
    const named = new Error('aborted');
    named.name = 'AbortError';
    expect(classifyError(named)).toBe('canceled');
  });

  it('an aborted signal makes any error canceled, even a retryable one', () => {
    const signal = AbortSignal.abort(new Error('Ctrl-C'));
    expect(classifyError(http(429), { signal })).toBe('canceled');
    expect(classifyError(new ModelTimeoutError('call', 20), { signal })).toBe('canceled');
    expect(classifyError(http(429), { signal: new AbortController().signal })).toBe('retryable');
  });

  it('wrapped errors keep their class, however deep', () => {
    expect(classifyError(wrap(http(429)))).toBe('retryable');
    expect(classifyError(wrap(wrap(http(503))))).toBe('retryable');
    expect(classifyError(wrap(http(401)))).toBe('fatal');
    expect(classifyError(new Error('outer', { cause: new NetworkError('reset', {}) }))).toBe('retryable');
    expect(classifyError(wrap(new ModelTimeoutError('first_token', 20)))).toBe('retryable');
    expect(classifyError(wrap(new ClawError('aborted', { code: 'aborted' })))).toBe('canceled');
    expect(classifyError(wrap(PartialResponseError.wrap(http(429))))).toBe('fatal');
    expect(classifyError(new AggregateError([new Error('x'), http(502)]))).toBe('retryable');
  });

  it('the outermost HTTP/network error decides', () => {
    expect(classifyError(new HttpError('HTTP 401', { status: 401, cause: http(500) }))).toBe('fatal');
    expect(classifyError(new HttpError('HTTP 503', { status: 503, cause: http(401) }))).toBe('retryable');
  });

  it('a cyclic cause chain does not hang', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(classifyError(a)).toBe('fatal');
  });
});

describe('PartialResponseError (PRV-4)', () => {
  it('is fatal whatever it wraps: a 429, a timeout, a network error', () => {
    for (const cause of [http(429), new ModelTimeoutError('call', 20), new NetworkError('cut', { code: 'stream_incomplete' })]) {
      expect(classifyError(cause)).toBe('retryable');
      expect(classifyError(PartialResponseError.wrap(cause))).toBe('fatal');
    }
  });

  it('keeps its cause: the 429 is still reachable', () => {
    const cause = http(429);
    const partial = PartialResponseError.wrap(cause);
    expect(partial).toBeInstanceOf(ClawError);
    expect(partial.code).toBe('partial_response');
    expect(partial.cause).toBe(cause);
    expect(findHttpError(wrap(partial))?.status).toBe(429);
    expect(partial.message).toContain('HTTP 429');
    expect(partial.message).toContain('not retried');
  });

  it('is never wrapped twice', () => {
    const partial = PartialResponseError.wrap(http(500));
    expect(PartialResponseError.wrap(partial)).toBe(partial);
    expect(PartialResponseError.wrap(wrap(partial))).toBe(partial);
    expect(findError(PartialResponseError.wrap(partial).cause, PartialResponseError)).toBeUndefined();
  });
});

describe('ModelTimeoutError (PRV-5)', () => {
  it('names the limit in seconds, with its own code per kind', () => {
    const call = new ModelTimeoutError('call', 60_000);
    expect(call.code).toBe('model_call_timeout');
    expect(call.message).toMatch(/^model call timed out after 60s/);
    expect(call.timeoutMs).toBe(60_000);
    const first = new ModelTimeoutError('first_token', 20);
    expect(first.code).toBe('model_first_token_timeout');
    expect(first.message).toMatch(/^model first token timed out after 0\.02s/);
    expect(first.kind).toBe('first_token');
    expect(new ModelTimeoutError('call', 1500).message).toContain('after 1.5s');
  });
});
