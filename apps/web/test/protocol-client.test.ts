import type { ServerEvent } from '@claw/channel/protocol';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ProtocolClient, backoffDelay, socketUrl } from '../src/protocol-client.js';
import type { ConnectionStatus } from '../src/state/types.js';
import { socketFactory } from './fake-socket.js';
import { errorEvent, sessionOpened, welcome } from './fixtures.js';

const url = 'ws://127.0.0.1:8081/ws';

function client(options: { random?: () => number } = {}) {
  const factory = socketFactory();
  const events: ServerEvent[] = [];
  const statuses: Array<[ConnectionStatus, string | undefined]> = [];
  const log = vi.fn<(message: string, detail?: unknown) => void>();
  const protocol = new ProtocolClient({
    url,
    token: 'the-token',
    onEvent: (event) => events.push(event),
    onStatus: (status, detail) => statuses.push([status, detail]),
    createSocket: factory.create,
    random: options.random ?? (() => 0),
    log,
  });
  return { protocol, events, statuses, log, ...factory };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('the protocol client', () => {
  it('sends hello with the token first, and nothing else before welcome', () => {
    const { protocol, sockets, last, statuses } = client();
    protocol.start();
    expect(sockets.map((socket) => socket.url)).toEqual([url]);
    expect(statuses).toEqual([['connecting', undefined]]);
    // Not open yet: nothing can go.
    expect(protocol.send({ type: 'open' })).toBe(false);
    last().open();
    expect(last().sent).toEqual(['{"type":"hello","token":"the-token","protocol":1}']);
    expect(protocol.connected).toBe(false);
    expect(protocol.send({ type: 'open' })).toBe(false);
    expect(protocol.send({ type: 'ping' })).toBe(false);
    expect(last().sent).toHaveLength(1);

    last().receive(welcome());
    expect(protocol.connected).toBe(true);
    expect(statuses.at(-1)).toEqual(['connected', undefined]);
    expect(protocol.send({ type: 'open', session_id: 's1', after: 4 })).toBe(true);
    expect(last().messages).toEqual([
      { type: 'hello', token: 'the-token', protocol: 1 },
      { type: 'open', session_id: 's1', after: 4 },
    ]);
  });

  it('passes on the events that match the protocol and drops the rest', () => {
    const { protocol, last, events, log } = client();
    protocol.start();
    last().open();
    last().receive(welcome());
    last().receiveRaw('not json');
    last().receiveRaw(JSON.stringify({ type: 'text_delta', content: 'no session, no seq' }));
    last().receiveRaw(JSON.stringify({ type: 'made_up' }));
    last().receive(sessionOpened('s1'));
    expect(events.map((event) => event.type)).toEqual(['welcome', 'session_opened']);
    expect(log).toHaveBeenCalledTimes(3);
    expect(log.mock.calls[0]?.[0]).toBe('dropped a message that is not JSON');
    expect(log.mock.calls[1]?.[0]).toBe('dropped an event that does not match the protocol');
  });

  it('reconnects with backoff after a close, and says hello again', () => {
    const { protocol, sockets, last, statuses } = client({ random: () => 0 });
    protocol.start();
    last().open();
    last().receive(welcome());
    last().drop(1006, '');
    expect(statuses.at(-1)).toEqual(['reconnecting', undefined]);
    expect(protocol.connected).toBe(false);
    expect(protocol.send({ type: 'ping' })).toBe(false);

    // Attempt 0: 500 ms × 0.5.
    vi.advanceTimersByTime(249);
    expect(sockets).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(sockets).toHaveLength(2);

    // The server is still away: attempt 1 waits 1000 ms × 0.5, attempt 2 2000 ms × 0.5.
    last().drop(1006);
    vi.advanceTimersByTime(499);
    expect(sockets).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(sockets).toHaveLength(3);
    last().drop(1006);
    vi.advanceTimersByTime(999);
    expect(sockets).toHaveLength(3);
    vi.advanceTimersByTime(1);
    expect(sockets).toHaveLength(4);

    last().open();
    expect(last().messages).toEqual([{ type: 'hello', token: 'the-token', protocol: 1 }]);
    last().receive(welcome());
    expect(statuses.at(-1)).toEqual(['connected', undefined]);
    expect(statuses.map(([status]) => status)).toEqual(['connecting', 'connected', 'reconnecting', 'connected']);

    // A welcome resets the backoff.
    last().drop(1001, 'server stopping');
    expect(statuses.at(-1)).toEqual(['reconnecting', 'server stopping']);
    vi.advanceTimersByTime(250);
    expect(sockets).toHaveLength(5);
  });

  it('stops on close code 4001 (unauthorized): no reconnect', () => {
    const { protocol, sockets, last, statuses } = client();
    protocol.start();
    last().open();
    last().drop(4001, 'unauthorized');
    expect(statuses.at(-1)).toEqual(['unauthorized', 'unauthorized']);
    vi.advanceTimersByTime(120_000);
    expect(sockets).toHaveLength(1);
    expect(protocol.send({ type: 'ping' })).toBe(false);
  });

  it('stops on an unauthorized error, passing it on and closing the socket', () => {
    const { protocol, sockets, last, statuses, events } = client();
    protocol.start();
    last().open();
    const refused = errorEvent({ code: 'unauthorized', message: 'unauthorized: the token is wrong' });
    last().receive(refused);
    expect(events).toEqual([refused]);
    expect(statuses.at(-1)).toEqual(['unauthorized', 'unauthorized: the token is wrong']);
    expect(last().closedWith?.code).toBe(1000);
    // The server's close that follows changes nothing.
    last().drop(4001, 'unauthorized');
    vi.advanceTimersByTime(120_000);
    expect(sockets).toHaveLength(1);
    expect(statuses.filter(([status]) => status === 'unauthorized')).toHaveLength(1);
  });

  it('stops on another protocol version (4002)', () => {
    const { protocol, sockets, last, statuses } = client();
    protocol.start();
    last().open();
    last().drop(4002, '');
    expect(statuses.at(-1)).toEqual(['disconnected', 'the server speaks another protocol version']);
    vi.advanceTimersByTime(60_000);
    expect(sockets).toHaveLength(1);
  });

  it('stop() closes the socket and no reconnect follows; start() connects again', () => {
    const { protocol, sockets, last, statuses } = client();
    protocol.start();
    last().open();
    last().receive(welcome());
    protocol.stop();
    expect(last().closedWith).toEqual({ code: 1000, reason: 'closed by the page' });
    expect(statuses.at(-1)).toEqual(['disconnected', undefined]);
    last().drop(1000);
    vi.advanceTimersByTime(60_000);
    expect(sockets).toHaveLength(1);
    protocol.start();
    expect(sockets).toHaveLength(2);
  });

  it('retryNow() skips the wait of the backoff', () => {
    const { protocol, sockets, last } = client({ random: () => 1 });
    protocol.start();
    last().drop(1006);
    protocol.retryNow();
    expect(sockets).toHaveLength(2);
    // The timer of the skipped wait does not make a third socket.
    vi.advanceTimersByTime(10_000);
    expect(sockets).toHaveLength(2);
  });

  it('pings while connected, and closes a socket that stopped answering', () => {
    const { protocol, sockets, last, statuses } = client();
    protocol.start();
    last().open();
    last().receive(welcome());
    vi.advanceTimersByTime(25_000);
    expect(last().messages.at(-1)).toEqual({ type: 'ping' });
    last().receive({ type: 'pong' });
    vi.advanceTimersByTime(25_000);
    expect(last().messages.filter((message) => message.type === 'ping')).toHaveLength(2);
    expect(last().closedWith).toBeUndefined();

    // No answer to that ping: the next beat gives up on the socket.
    vi.advanceTimersByTime(25_000);
    expect(sockets[0]?.closedWith?.code).toBe(4000);
    expect(statuses.at(-1)).toEqual(['reconnecting', 'no answer from the server']);
    vi.advanceTimersByTime(250);
    expect(sockets).toHaveLength(2);
  });
});

describe('backoffDelay', () => {
  it('doubles from 500 ms up to 10 s, with 50–100 % jitter', () => {
    expect(backoffDelay(0, () => 0)).toBe(250);
    expect(backoffDelay(0, () => 1)).toBe(500);
    expect(backoffDelay(1, () => 1)).toBe(1000);
    expect(backoffDelay(3, () => 0.5)).toBe(3000);
    expect(backoffDelay(4, () => 1)).toBe(8000);
    expect(backoffDelay(5, () => 1)).toBe(10_000);
    expect(backoffDelay(5, () => 0)).toBe(5000);
    expect(backoffDelay(1000, () => 1)).toBe(10_000);
    expect(backoffDelay(1000, () => 0)).toBe(5000);
  });

  it('stays within its bounds with the real random', () => {
    for (let attempt = 0; attempt < 30; attempt += 1) {
      const ceiling = Math.min(10_000, 500 * 2 ** attempt);
      for (let sample = 0; sample < 20; sample += 1) {
        const delay = backoffDelay(attempt);
        expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
        expect(delay).toBeLessThanOrEqual(ceiling);
      }
    }
  });
});

describe('socketUrl', () => {
  it('is the page origin’s /ws, wss under https', () => {
    expect(socketUrl({ protocol: 'http:', host: '127.0.0.1:8081' })).toBe('ws://127.0.0.1:8081/ws');
    expect(socketUrl({ protocol: 'https:', host: 'claw.example:443' })).toBe('wss://claw.example:443/ws');
  });
});
