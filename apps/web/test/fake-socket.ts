// A WebSocket the test drives: it opens, receives server events and drops when told to.
import type { ClientMessage, ServerEvent } from '@claw/channel/protocol';
import type { SocketLike } from '../src/protocol-client.js';

export class FakeSocket implements SocketLike {
  readyState = 0;
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onclose: ((event: { code: number; reason: string }) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  readonly sent: string[] = [];
  closedWith: { code: number | undefined; reason: string | undefined } | undefined;

  constructor(readonly url: string) {}

  /** What the page sent, parsed. */
  get messages(): ClientMessage[] {
    return this.sent.map((text) => JSON.parse(text) as ClientMessage);
  }

  send(data: string): void {
    if (this.readyState !== 1) throw new Error('InvalidStateError: the socket is not open');
    this.sent.push(data);
  }

  /** The page closes it; the browser reports the close later (like a real socket). */
  close(code?: number, reason?: string): void {
    this.closedWith = { code, reason };
    this.readyState = 3;
  }

  open(): void {
    this.readyState = 1;
    this.onopen?.({});
  }

  receive(event: ServerEvent): void {
    this.onmessage?.({ data: JSON.stringify(event) });
  }

  receiveRaw(data: string): void {
    this.onmessage?.({ data });
  }

  /** The server or the network closed it. */
  drop(code = 1006, reason = ''): void {
    this.readyState = 3;
    this.onclose?.({ code, reason });
  }
}

/** A createSocket that keeps every socket it made. */
export function socketFactory(): {
  sockets: FakeSocket[];
  create: (url: string) => FakeSocket;
  last: () => FakeSocket;
} {
  const sockets: FakeSocket[] = [];
  return {
    sockets,
    create: (url) => {
      const socket = new FakeSocket(url);
      sockets.push(socket);
      return socket;
    },
    last: () => {
      const socket = sockets.at(-1);
      if (socket === undefined) throw new Error('no socket was made');
      return socket;
    },
  };
}
