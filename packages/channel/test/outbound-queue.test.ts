import { describe, expect, it, vi } from 'vitest';
import { OutboundQueue, type CloseReason, type ServerEvent } from '../src/index.js';

const delta = (seq: number, content: string, task = 't1'): ServerEvent => ({
  type: 'text_delta', task_id: task, content, session_id: 's', seq, at: '2030-01-01T00:00:00.000Z',
});

describe('OutboundQueue (CH-5)', () => {
  it('writes one event at a time, in order', async () => {
    const written: string[] = [];
    let active = 0;
    const queue = new OutboundQueue({
      write: async (json) => {
        active += 1;
        expect(active).toBe(1);
        await new Promise((resolve) => setTimeout(resolve, 1));
        written.push(json);
        active -= 1;
      },
      close: () => undefined,
    });
    for (let seq = 1; seq <= 5; seq += 1) queue.push(delta(seq, `${seq}`));
    await queue.drain();
    expect(written.map((json) => (JSON.parse(json) as { seq: number }).seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it('merges consecutive deltas of one task when full, keeping the last seq, before closing', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const written: ServerEvent[] = [];
    const closed: CloseReason[] = [];
    const queue = new OutboundQueue(
      {
        write: async (_json, event) => {
          await gate;
          written.push(event);
        },
        close: (reason) => void closed.push(reason),
      },
      { maxEvents: 4 },
    );
    for (let seq = 1; seq <= 10; seq += 1) queue.push(delta(seq, `${seq},`));
    expect(closed).toEqual([]);
    release();
    await queue.drain();
    // The first was being written as it is; runs of the rest were merged whenever the queue was
    // over its bound, each merged delta with the last seq it holds. No text is lost.
    expect(written).toEqual([delta(1, '1,'), delta(8, '2,3,4,5,6,7,8,'), delta(9, '9,'), delta(10, '10,')]);
  });

  it('merges reasoning deltas like answer deltas, never one into the other (REAL-4)', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const written: ServerEvent[] = [];
    const queue = new OutboundQueue(
      {
        write: async (_json, event) => {
          await gate;
          written.push(event);
        },
        close: () => undefined,
      },
      { maxEvents: 3 },
    );
    const thought = (seq: number, content: string): ServerEvent => ({
      type: 'thinking_delta', task_id: 't1', content, session_id: 's', seq, at: '2030-01-01T00:00:00.000Z',
    });
    for (let seq = 1; seq <= 5; seq += 1) queue.push(thought(seq, `t${seq},`));
    for (let seq = 6; seq <= 8; seq += 1) queue.push(delta(seq, `a${seq},`));
    release();
    await queue.drain();
    expect(written).toEqual([thought(1, 't1,'), thought(5, 't2,t3,t4,t5,'), delta(8, 'a6,a7,a8,')]);
  });

  it('closes with client_too_slow when merging cannot make room, and drops what waits', async () => {
    const closed: CloseReason[] = [];
    const queue = new OutboundQueue(
      { write: () => new Promise(() => undefined), close: (reason) => void closed.push(reason) },
      { maxEvents: 3 },
    );
    for (let seq = 1; seq <= 5; seq += 1) queue.push(delta(seq, 'x', `task-${seq}`));
    expect(closed).toHaveLength(1);
    expect(closed[0]?.code).toBe('client_too_slow');
    expect(queue.length).toBe(0);
    queue.push(delta(6, 'ignored'));
    expect(queue.length).toBe(0);
  });

  it('paces a subscription: room() waits while full and resolves as the writes drain it', async () => {
    const releases: Array<() => void> = [];
    const written: number[] = [];
    const queue = new OutboundQueue(
      {
        write: (_json, event) =>
          new Promise<void>((resolve) => {
            releases.push(() => {
              written.push((event as { seq: number }).seq);
              resolve();
            });
          }),
        close: () => undefined,
      },
      { maxEvents: 2 },
    );
    // Deltas of different tasks cannot be merged: the queue really is full.
    queue.push(delta(1, 'a', 'task-1'));
    queue.push(delta(2, 'b', 'task-2'));
    expect(queue.hasRoom).toBe(false);
    let roomy = false;
    const room = queue.room().then(() => {
      roomy = true;
    });
    await Promise.resolve();
    expect(roomy).toBe(false);
    releases.shift()?.();
    await room;
    expect(roomy).toBe(true);
    expect(written).toEqual([1]);
    expect(queue.closed).toBeUndefined();
  });

  it('merges deltas only up to 64 KiB of text each, so a huge answer costs linear time', async () => {
    const written: ServerEvent[] = [];
    let release!: () => void;
    const stuck = new Promise<void>((resolve) => {
      release = resolve;
    });
    const queue = new OutboundQueue(
      {
        write: async (_json, event) => {
          await stuck;
          written.push(event);
        },
        close: () => undefined,
      },
      { maxEvents: 4 },
    );
    const piece = 'z'.repeat(16 * 1024);
    for (let seq = 1; seq <= 40; seq += 1) queue.push(delta(seq, piece), { paced: true });
    // The first is in flight; the other 39 became merged deltas of at most four pieces each.
    expect(queue.length).toBe(1 + Math.ceil(39 / 4));
    release();
    await queue.drain();
    const sizes = written.map((event) => (event.type === 'text_delta' ? event.content.length / piece.length : 0));
    expect(sizes).toHaveLength(11);
    expect(Math.max(...sizes)).toBe(4);
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBe(40);
  });

  it('room() merges text deltas first when that makes room', async () => {
    const queue = new OutboundQueue(
      { write: () => new Promise(() => undefined), close: () => undefined },
      { maxEvents: 3 },
    );
    for (let seq = 1; seq <= 3; seq += 1) queue.push(delta(seq, `${seq}`));
    expect(queue.hasRoom).toBe(false);
    await queue.room();
    // The first is being written; the other two became one.
    expect(queue.length).toBe(2);
  });

  it('a queue that stays full for maxStallMs closes the connection as too slow', async () => {
    vi.useFakeTimers();
    try {
      const closed: CloseReason[] = [];
      const queue = new OutboundQueue(
        { write: () => new Promise(() => undefined), close: (reason) => void closed.push(reason) },
        { maxEvents: 2, maxStallMs: 500 },
      );
      queue.push(delta(1, 'a', 'task-1'));
      queue.push(delta(2, 'b', 'task-2'));
      const room = queue.room();
      await vi.advanceTimersByTimeAsync(499);
      expect(closed).toEqual([]);
      await vi.advanceTimersByTimeAsync(1);
      await room;
      expect(closed).toHaveLength(1);
      expect(closed[0]).toMatchObject({ code: 'client_too_slow' });
      expect(closed[0]?.message).toContain('nothing could be sent for 500 ms');
    } finally {
      vi.useRealTimers();
    }
  });

  it('a paced event larger than the byte bound still goes out; an unpaced one closes', async () => {
    const written: string[] = [];
    const closed: CloseReason[] = [];
    const writer = {
      write: (json: string) => void written.push(json),
      close: (reason: CloseReason) => void closed.push(reason),
    };
    const paced = new OutboundQueue(writer, { maxBytes: 100 });
    paced.push(delta(1, 'x'.repeat(500)), { paced: true });
    await paced.drain();
    expect(closed).toEqual([]);
    expect(written).toHaveLength(1);
    const unpaced = new OutboundQueue(writer, { maxBytes: 100 });
    unpaced.push(delta(2, 'y'.repeat(500)));
    expect(closed).toHaveLength(1);
    expect(closed[0]?.code).toBe('client_too_slow');
  });

  it('closes with write_failed when the transport cannot write', async () => {
    const closed: CloseReason[] = [];
    const queue = new OutboundQueue({
      write: () => Promise.reject(new Error('EPIPE')),
      close: (reason) => void closed.push(reason),
    });
    queue.push(delta(1, 'x'));
    await queue.drain();
    expect(closed).toEqual([{ code: 'write_failed', message: 'could not send to the client: EPIPE' }]);
  });
});

describe('OutboundQueue with writeBatch', () => {
  it('hands over everything waiting at once, and never merges what is being written', async () => {
    let release!: () => void;
    let gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const batches: string[][] = [];
    const queue = new OutboundQueue(
      {
        write: () => {
          throw new Error('not used when writeBatch is given');
        },
        writeBatch: async (items) => {
          batches.push(items.map((item) => (item.event.type === 'text_delta' ? item.event.content : '')));
          await gate;
        },
        close: () => undefined,
      },
      { maxEvents: 4 },
    );
    queue.push(delta(1, 'a'));
    queue.push(delta(2, 'b'));
    queue.push(delta(3, 'c'));
    await new Promise((resolve) => setImmediate(resolve));
    // The first batch took what was there: 1 (2 and 3 came before the pump ran).
    const inFlight = batches[0]?.length ?? 0;
    for (let seq = 4; seq <= 9; seq += 1) queue.push(delta(seq, String.fromCharCode(96 + seq)));
    const next = gate;
    gate = Promise.resolve();
    release();
    await next;
    await queue.drain();
    expect(batches.flat().join('')).toBe('abcdefghi');
    expect(batches[0]).toHaveLength(inFlight);
  });
});

describe('OutboundQueue timing of writes', () => {
  it('writes what one tick pushed, a few promise steps apart, in one batch at its end', async () => {
    const batches: number[][] = [];
    const queue = new OutboundQueue({
      write: () => {
        throw new Error('not used when writeBatch is given');
      },
      writeBatch: (items) => {
        batches.push(items.map((item) => (item.event as { seq: number }).seq));
      },
      close: () => undefined,
    });
    // As a session's subscription yields the events of one stored batch: each a few awaits on.
    const pushed = (async () => {
      for (let seq = 1; seq <= 4; seq += 1) {
        queue.push(delta(seq, 'x'), { paced: true });
        await Promise.resolve();
        await Promise.resolve();
      }
    })();
    await pushed;
    expect(batches).toEqual([]);
    await new Promise((resolve) => process.nextTick(resolve));
    expect(batches).toEqual([[1, 2, 3, 4]]);
    // Pushed after it: another write, at the end of that tick.
    queue.push(delta(5, 'y'), { paced: true });
    await queue.drain();
    expect(batches).toEqual([[1, 2, 3, 4], [5]]);
  });

  it('hands an event that is not paced (an answer to the client) to the writer at once', () => {
    const written: number[] = [];
    const queue = new OutboundQueue({
      write: (_json, event) => {
        written.push((event as { seq: number }).seq);
      },
      close: () => undefined,
    });
    queue.push(delta(1, 'x'));
    expect(written).toEqual([1]);
  });

  it('waits in drain() for a write that is due but has not started', async () => {
    const written: number[] = [];
    const queue = new OutboundQueue({
      write: (_json, event) => {
        written.push((event as { seq: number }).seq);
      },
      close: () => undefined,
    });
    queue.push(delta(1, 'x'), { paced: true });
    expect(written).toEqual([]);
    await queue.drain();
    expect(written).toEqual([1]);
  });
});
