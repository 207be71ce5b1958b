import type { ModelRequest, StreamEvent } from '@claw/core';
import { FakeOpenAIServer, type FakeTurn } from '@claw/testing/node';
import { afterEach, describe, expect, it } from 'vitest';
import {
  OpenAIProvider,
  PartialResponseError,
  RetryingProvider,
  classifyError,
  type RetryInfo,
} from '../src/index.js';
import { checkError, rawTurn } from './fixture-helpers.js';
import { fixtures, type ExpectedError, type Fixture, type WireAnswer } from './fixtures/index.js';

// The errors of real servers through RetryingProvider → OpenAIProvider → the real client: a
// retryable one is retried (and the consumer sees only the good second answer), a fatal one is
// not, and one that broke off after text was shown is a partial response (PRV-3, PRV-4, REAL-6).
const request: ModelRequest = { messages: [{ role: 'user', content: 'hi' }] };
let server: FakeOpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const recovered: FakeTurn = { text: 'recovered' };

async function setUp(answer: WireAnswer) {
  // Each request gets the fixture's answer, except that the second one (when there is a second)
  // gets a good reply: a retry must reach it, and only a retry may.
  server = await FakeOpenAIServer.start({ turns: [rawTurn(answer, 'by event'), recovered] });
  const retries: RetryInfo[] = [];
  const provider = new RetryingProvider(
    new OpenAIProvider({ apiKey: 'test-key', model: 'some-model', baseURL: server.baseURL }),
    { attempts: 2, backoffMs: 0, onRetry: (info) => retries.push(info) },
  );
  return { provider, retries, requests: server.requests };
}

type ErrorFixture = Fixture & { expect: { error: ExpectedError } };
const errorFixtures = fixtures.filter((fixture): fixture is ErrorFixture => 'error' in fixture.expect);

describe('errors of real servers through RetryingProvider, streamed', () => {
  for (const fixture of errorFixtures) {
    const answer = fixture.stream;
    if (answer === undefined) continue;
    const expected = fixture.expect.error;
    const partial = (expected.textBefore ?? '') !== '';
    const verdict = partial ? 'a partial response, not retried' : expected.retryable ? 'retried' : 'not retried';
    it(`${fixture.name} (${fixture.server}): ${verdict}`, async () => {
      const { provider, retries, requests } = await setUp(answer);
      if (provider.stream === undefined) throw new Error('the provider should stream');
      const events: StreamEvent[] = [];
      let error: unknown;
      try {
        for await (const event of provider.stream(request)) events.push(event);
      } catch (caught) {
        error = caught;
      }
      const text = events.map((event) => (event.type === 'text_delta' ? event.delta : '')).join('');
      if (partial) {
        expect(error).toBeInstanceOf(PartialResponseError);
        expect(classifyError(error)).toBe('fatal');
        checkError((error as PartialResponseError).cause, expected);
        expect(text).toBe(expected.textBefore);
        expect(requests).toHaveLength(1);
        expect(retries).toHaveLength(0);
      } else if (expected.retryable) {
        expect(error).toBeUndefined();
        // Nothing of the failed attempt reached the consumer.
        expect(text).toBe('recovered');
        expect(events.at(-1)?.type).toBe('completed');
        expect(requests).toHaveLength(2);
        expect(retries).toHaveLength(1);
        checkError(retries[0]?.error, expected);
      } else {
        checkError(error, expected);
        expect(events).toEqual([]);
        expect(requests).toHaveLength(1);
        expect(retries).toHaveLength(0);
      }
    });
  }
});

describe('errors of real servers through RetryingProvider, not streamed', () => {
  for (const fixture of errorFixtures) {
    const answer = fixture.generate;
    if (answer === undefined) continue;
    const expected = fixture.expect.error;
    it(`${fixture.name} (${fixture.server}): ${expected.retryable ? 'retried' : 'not retried'}`, async () => {
      const { provider, retries, requests } = await setUp(answer);
      const outcome = await provider.generate(request).then(
        (response) => ({ response, error: undefined }),
        (error: unknown) => ({ response: undefined, error }),
      );
      if (expected.retryable) {
        expect(outcome.error).toBeUndefined();
        expect(outcome.response?.message.content).toBe('recovered');
        expect(requests).toHaveLength(2);
        checkError(retries[0]?.error, expected);
      } else {
        checkError(outcome.error, expected);
        expect(requests).toHaveLength(1);
        expect(retries).toHaveLength(0);
      }
    });
  }
});
