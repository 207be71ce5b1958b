import type { ModelRequest, StreamEvent } from '@claw/core';
import { ScriptedProvider } from '@claw/testing';
import { describe, expect, it } from 'vitest';
import { FirstReplyProvider } from '../src/first-reply.js';

const request: ModelRequest = { messages: [{ role: 'user', content: 'hi' }] };

async function collect(events: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const all: StreamEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

/** A sleep that waits until `release` is called: the scripted model answers when told to. */
function heldSleep(): { sleep: () => Promise<void>; release: () => void; asked: () => boolean } {
  let release!: () => void;
  let asked = false;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    sleep: () => {
      asked = true;
      return held;
    },
    release,
    asked: () => asked,
  };
}

describe('FirstReplyProvider', () => {
  it('tells once the first stream has sent an event, not when it was asked, and passes every event on', async () => {
    const held = heldSleep();
    const provider = new FirstReplyProvider(
      new ScriptedProvider([{ text: 'one', delayMs: 1 }, { text: 'two' }], { sleep: held.sleep }),
    );
    let replied = false;
    void provider.replied.then((answered) => {
      replied = answered;
    });
    const first = collect(provider.stream!(request));
    await expect.poll(held.asked).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(replied).toBe(false);
    held.release();
    expect((await first).map((event) => event.type)).toEqual(['text_delta', 'completed']);
    expect(replied).toBe(true);
    const second = await collect(provider.stream!(request));
    expect(second[0]).toEqual({ type: 'text_delta', delta: 'two' });
  });

  it('tells when the first call fails, streamed or not, and that it failed', async () => {
    const failing = new FirstReplyProvider(
      new ScriptedProvider([{ error: new Error('refused') }, { text: 'later' }]),
    );
    await expect(collect(failing.stream!(request))).rejects.toThrow('refused');
    expect(await failing.replied).toBe(false);
    // What it tells is the first call's: a later answer does not change it.
    await collect(failing.stream!(request));
    expect(await failing.replied).toBe(false);

    const generating = new FirstReplyProvider(
      new ScriptedProvider([{ error: new Error('down') }], { streaming: false }),
    );
    expect(generating.stream).toBeUndefined();
    await expect(generating.generate(request)).rejects.toThrow('down');
    expect(await generating.replied).toBe(false);
  });

  it('tells once a generate call has answered', async () => {
    const held = heldSleep();
    const provider = new FirstReplyProvider(
      new ScriptedProvider([{ text: 'done', delayMs: 1 }], { streaming: false, sleep: held.sleep }),
    );
    let replied = false;
    void provider.replied.then((answered) => {
      replied = answered;
    });
    const answer = provider.generate(request);
    await expect.poll(held.asked).toBe(true);
    expect(replied).toBe(false);
    held.release();
    expect((await answer).message.content).toBe('done');
    await provider.replied;
    expect(provider.name).toBe('scripted');
  });
});
