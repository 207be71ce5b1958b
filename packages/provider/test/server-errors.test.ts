import { ClawError } from '@claw/core';
import { describe, expect, it } from 'vitest';
import {
  ContextLengthExceededError,
  HttpError,
  ModelServerError,
  PartialResponseError,
  classifyError,
  findHttpError,
  isContextLengthExceeded,
} from '../src/index.js';
import { serverReportedError } from '../src/errors.js';
import { isContextLengthError, isRetryableServerError, readServerError } from '../src/server-errors.js';

describe('readServerError', () => {
  it('reads OpenAI-style objects, numeric codes and bare strings', () => {
    expect(readServerError({ message: 'Provider disconnected', code: 502 })).toEqual({ message: 'Provider disconnected', code: 502, type: undefined });
    expect(readServerError({ message: 'x', type: 'server_error', param: null, code: null })).toEqual({ message: 'x', code: undefined, type: 'server_error' });
    expect(readServerError('The number of tokens to keep …')).toEqual({ message: 'The number of tokens to keep …', code: undefined, type: undefined });
    expect(readServerError(undefined)).toEqual({ message: '', code: undefined, type: undefined });
    expect(readServerError({ message: { detail: 'nested' } }).message).toBe('{"detail":"nested"}');
    expect(readServerError({ message: 'y'.repeat(5000) }).message.length).toBeLessThan(700);
  });
});

describe('isRetryableServerError: classified by the code the server gave', () => {
  const retryable: unknown[] = [
    { code: 408 }, { code: 409 }, { code: 429 }, { code: 500 }, { code: 502 }, { code: 503 },
    { code: '502' }, { code: 'server_error' }, { code: 'rate_limit_exceeded' }, { code: 'overloaded' },
    { code: 'overloaded_error' }, { code: 'timeout' }, { code: 'service_unavailable' },
    { code: 'SERVER_ERROR' },
    // No code: the type decides (OpenAI's mid-stream error has only a type).
    { type: 'server_error', message: 'The server had an error while processing your request.' },
  ];
  const fatal: unknown[] = [
    { code: 400 }, { code: 401 }, { code: 403 }, { code: 404 }, { code: '400' },
    { code: 'invalid_request_error' }, { code: 'invalid_api_key' }, { type: 'invalid_request_error' },
    { message: 'something went wrong' }, 'a bare string',
  ];
  for (const payload of retryable) {
    it(`retryable: ${JSON.stringify(payload)}`, () => {
      expect(isRetryableServerError(readServerError(payload))).toBe(true);
      expect(classifyError(serverReportedError(payload, { source: 'stream' }))).toBe('retryable');
    });
  }
  for (const payload of fatal) {
    it(`fatal: ${JSON.stringify(payload)}`, () => {
      expect(isRetryableServerError(readServerError(payload))).toBe(false);
      expect(classifyError(serverReportedError(payload, { source: 'stream' }))).toBe('fatal');
    });
  }
});

describe('isContextLengthError: what servers say when the conversation no longer fits', () => {
  const overflows: Array<[string, unknown]> = [
    ['OpenAI', { message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.", type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' }],
    ['Groq (code only)', { message: 'Please reduce the length of the messages or completion.', type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' }],
    ['DeepSeek', { message: "This model's maximum context length is 131072 tokens. However, you requested 140000 tokens (132000 in the messages, 8000 in the completion). Please reduce the length of the messages or completion.", type: 'invalid_request_error', param: null, code: 'invalid_request_error' }],
    ['vLLM', { message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.", type: 'BadRequestError', param: null, code: 400 }],
    ['OpenRouter', { message: "This endpoint's maximum context length is 163840 tokens. However, you requested about 204800 tokens (196608 of text input, 8192 in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.", code: 400 }],
    ['llama.cpp (type)', { code: 400, message: 'request (4476 tokens) exceeds the available context size (4096 tokens), try increasing it', type: 'exceed_context_size_error' }],
    ['llama.cpp (older wording)', { code: 400, message: 'the request exceeds the available context size, try increasing it', type: 'invalid_request_error' }],
    ['LM Studio (n_keep)', 'The number of tokens to keep from the initial prompt is greater than the context length (n_keep: 13055>= n_ctx: 4096). Try to load the model with a larger context length, or provide a shorter input.'],
    ['LM Studio (overflow)', 'Trying to keep the first 15857 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input.'],
    ['LM Studio (mid-generation)', 'Reached context length of 4096 tokens with model (arch: qwen3vlmoe) that does not currently support mid-generation context overflow. Try reloading with a larger context length or shortening the prompt/chat.'],
    ['Ollama-style', { message: 'the input length exceeds the context length', type: 'invalid_request_error', code: null }],
    ['context window', { message: 'context window exceeded: prompt has 9000 tokens' }],
    ['Anthropic-compatible', { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' }],
  ];
  for (const [server, payload] of overflows) {
    it(`recognises ${server}`, () => {
      expect(isContextLengthError(readServerError(payload))).toBe(true);
    });
  }

  const others: Array<[string, unknown]> = [
    ['Groq tokens-per-minute limit (413)', { message: 'Request too large for model `llama-3.1-8b-instant` in organization `org_1` service tier `on_demand` on tokens per minute (TPM): Limit 6000, Requested 9000, please reduce your message size and try again.', type: 'tokens', code: 'rate_limit_exceeded' }],
    ['an unknown model', { message: 'The model `gpt-9` does not exist or you do not have access to it.', type: 'invalid_request_error', code: 'model_not_found' }],
    ['too many output tokens', { message: 'max_tokens is too large: 100000. This model supports at most 16384 completion tokens, whereas you provided 100000.', code: null }],
    ['a server failure', { code: 500, message: 'Provider disconnected' }],
  ];
  for (const [what, payload] of others) {
    it(`does not mistake ${what} for it`, () => {
      expect(isContextLengthError(readServerError(payload))).toBe(false);
    });
  }
});

describe('ContextLengthExceededError and isContextLengthExceeded', () => {
  it('says what happened and what to do, keeps the status for findHttpError, and is fatal', () => {
    const error = new ContextLengthExceededError({
      status: 400,
      serverMessage: "This model's maximum context length is 4096 tokens.",
      source: 'http',
    });
    expect(error).toBeInstanceOf(HttpError);
    expect(error.code).toBe('context_length_exceeded');
    expect(error.message).toMatch(/^the conversation no longer fits the model's context window: the server said "This model's maximum context length is 4096 tokens\." \(HTTP 400\)\. /);
    expect(error.message).toContain('Start a new session or shorten the conversation');
    expect(findHttpError(new ClawError('turn 3', { code: 'run_failed', cause: error }))?.status).toBe(400);
    expect(classifyError(error)).toBe('fatal');
  });

  it('is fatal whatever status it came with', () => {
    const inStream = serverReportedError({ code: 500, message: 'context window exceeded' }, { source: 'stream' });
    expect(inStream).toBeInstanceOf(ContextLengthExceededError);
    expect((inStream as ContextLengthExceededError).status).toBe(400);
    expect(classifyError(inStream)).toBe('fatal');
  });

  it('takes a 4xx code of an error reported in the stream as its status', () => {
    const error = serverReportedError(
      { code: 413, message: 'prompt is too long: 210000 tokens > 200000 maximum' },
      { source: 'reply' },
    );
    expect((error as ContextLengthExceededError).status).toBe(413);
    expect(error.message).toContain('(in its reply)');
  });

  it('isContextLengthExceeded looks through the cause chain, and only says yes for it', () => {
    const error = new ContextLengthExceededError({ status: 400, serverMessage: '', source: 'stream' });
    expect(isContextLengthExceeded(error)).toBe(true);
    expect(isContextLengthExceeded(new Error('model call failed', { cause: new ClawError('turn', { code: 'x', cause: error }) }))).toBe(true);
    expect(isContextLengthExceeded(PartialResponseError.wrap(error))).toBe(true);
    expect(isContextLengthExceeded(new HttpError('model API returned HTTP 400', { status: 400 }))).toBe(false);
    expect(isContextLengthExceeded(new ModelServerError({ message: 'x', code: 500, type: undefined }, { source: 'stream' }))).toBe(false);
    expect(isContextLengthExceeded(undefined)).toBe(false);
    expect(isContextLengthExceeded('context_length_exceeded')).toBe(false);
  });
});

describe('ModelServerError messages', () => {
  it('names the server\'s message and code, and what to do', () => {
    const retryable = serverReportedError({ code: 502, message: 'Provider disconnected' }, { source: 'stream' });
    expect(retryable.message).toBe('the model server reported an error in the stream: Provider disconnected (code 502); it failed on its side; retry later');
    const fatal = serverReportedError({ type: 'invalid_request_error', message: 'bad tool schema' }, { source: 'reply' });
    expect(fatal.message).toMatch(/^the model server answered with an error instead of a reply: bad tool schema \(type invalid_request_error\); it will not accept this request as it is; check /);
    expect(fatal).toMatchObject({ serverType: 'invalid_request_error', serverMessage: 'bad tool schema', retryable: false });
  });
});
