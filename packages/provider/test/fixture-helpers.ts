import { splitIntoPieces } from '@claw/testing';
import type { FakeTurn } from '@claw/testing/node';
import { expect } from 'vitest';
import {
  ContextLengthExceededError,
  HttpError,
  ModelServerError,
  classifyError,
  findHttpError,
  isContextLengthExceeded,
} from '../src/index.js';
import { readFixture, type ExpectedError, type WireAnswer } from './fixtures/index.js';

/** How a fixture's text is cut into the pieces the fake server writes. */
export type Split = 'by event' | 'at random';

/**
 * The fake server's turn for a fixture: its text as it is, one piece per SSE event (or the
 * whole body), or cut at seeded random places with a pause between pieces, so that events and
 * even lines arrive split over several reads.
 */
export function rawTurn(answer: WireAnswer, split: Split): FakeTurn {
  const text = readFixture(answer.file);
  const body = split === 'at random'
    ? splitIntoPieces(text, { min: 20, max: 90, seed: text.length })
    : text.split(/(?<=\n\n)/);
  return {
    raw: {
      status: answer.status ?? 200,
      contentType: answer.contentType ?? (answer.file.endsWith('.sse') ? 'text/event-stream' : 'application/json'),
      body,
      ...(split === 'at random' ? { chunkDelayMs: 1 } : {}),
    },
  };
}

const classes = { ModelServerError, ContextLengthExceededError, HttpError } as const;

/** `error` is the fixture's error: its class, code, status, classification and the server's words. */
export function checkError(error: unknown, expected: ExpectedError): void {
  expect(error).toBeInstanceOf(classes[expected.class]);
  const clawError = error as ModelServerError | HttpError;
  expect(clawError.code).toBe(expected.code);
  expect(clawError.message).toContain(expected.says);
  expect(classifyError(error)).toBe(expected.retryable ? 'retryable' : 'fatal');
  expect(isContextLengthExceeded(error)).toBe(expected.class === 'ContextLengthExceededError');
  if (expected.status !== undefined) expect(findHttpError(error)?.status).toBe(expected.status);
  if (expected.class === 'ContextLengthExceededError') {
    expect(clawError.message).toContain("the conversation no longer fits the model's context window");
  }
  if (expected.class === 'ModelServerError') {
    expect(clawError.message).toMatch(/^the model server (reported an error in the stream|answered with an error instead of a reply)/);
    expect((error as ModelServerError).retryable).toBe(expected.retryable);
  }
}
