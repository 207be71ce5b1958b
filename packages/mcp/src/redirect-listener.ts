import { timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { abortReason, errnoCode } from '@claw/core';
import type { SetTimer } from './timers.js';

/** The path the authorization server sends the browser back to. */
const callbackPath = '/callback';

/** What came back from the browser for one authorization. */
export type RedirectAnswer =
  | { code: string }
  | { error: string; description?: string };

interface Waiter {
  state: string;
  settle: (answer: RedirectAnswer) => void;
}

/**
 * The loopback redirect of OAuth for native apps (RFC 8252): an HTTP listener on 127.0.0.1 (a
 * port the system picks, or the one asked for) that the authorization server sends the browser
 * back to with the code. Only `GET /callback` with the `state` of an authorization claw is waiting
 * for is taken: any other answer (a wrong or missing state, one nobody waits for) is refused with
 * 400 and changes nothing, so a page that sends the browser here cannot slip in a code of its own.
 */
export class RedirectListener {
  private readonly server: http.Server;
  private readonly waiters = new Set<Waiter>();
  /** Answers refused so far (a wrong state, or none awaited). */
  refused = 0;

  private constructor(server: http.Server) {
    this.server = server;
    server.on('request', (request, response) => this.answer(request, response));
  }

  /**
   * Listens on 127.0.0.1: on `port` when given and free, else on one the system picks.
   *
   * @throws the listen error when no port can be had.
   */
  static async start(options: { port?: number } = {}): Promise<RedirectListener> {
    if (options.port !== undefined) {
      try {
        return await RedirectListener.listen(options.port);
      } catch (error) {
        if (errnoCode(error) !== 'EADDRINUSE' && errnoCode(error) !== 'EACCES') throw error;
      }
    }
    return RedirectListener.listen(0);
  }

  private static listen(port: number): Promise<RedirectListener> {
    const server = http.createServer();
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve(new RedirectListener(server));
      });
    });
  }

  /** The redirect URI: `http://127.0.0.1:<port>/callback`. */
  get url(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}${callbackPath}`;
  }

  /**
   * Waits for the browser to come back with `state`: resolves with the code, or with the error
   * the authorization server sent.
   *
   * @throws the signal's reason when it aborts; `onTimeout()`'s error after `timeoutMs`.
   */
  wait(
    state: string,
    options: {
      timeoutMs: number;
      setTimer: SetTimer;
      onTimeout: () => Error;
      signal?: AbortSignal;
    },
  ): Promise<RedirectAnswer> {
    const { signal } = options;
    if (signal?.aborted === true) return Promise.reject(abortReason(signal));
    return new Promise((resolve, reject) => {
      let cancelTimer = (): void => undefined;
      const end = (): void => {
        this.waiters.delete(waiter);
        cancelTimer();
        signal?.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        state,
        settle: (answer) => {
          end();
          resolve(answer);
        },
      };
      const onAbort = (): void => {
        end();
        reject(abortReason(signal as AbortSignal));
      };
      this.waiters.add(waiter);
      cancelTimer = options.setTimer(() => {
        end();
        reject(options.onTimeout());
      }, options.timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Stops listening; waits still under way are left to their timeout or signal. */
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
    });
  }

  private answer(request: http.IncomingMessage, response: http.ServerResponse): void {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (request.method !== 'GET' || url.pathname !== callbackPath) {
      reply(response, 404, 'Not found.');
      return;
    }
    const state = url.searchParams.get('state') ?? '';
    const waiter = [...this.waiters].find((candidate) => sameText(candidate.state, state));
    if (waiter === undefined) {
      this.refused += 1;
      reply(
        response,
        400,
        'This answer is not for a login claw is waiting for (its state does not match), so ' +
        'claw ignored it. Start the login again with claw mcp login.',
      );
      return;
    }
    const code = url.searchParams.get('code');
    const error = url.searchParams.get('error');
    if (code !== null && code !== '' && error === null) {
      reply(response, 200, 'You are logged in. You can close this tab and go back to claw.');
      waiter.settle({ code });
      return;
    }
    const description = url.searchParams.get('error_description');
    reply(response, 400, 'The login did not succeed; claw says why in the terminal.');
    waiter.settle({
      error: error ?? 'no code in the answer',
      ...(description === null ? {} : { description }),
    });
  }
}

function reply(response: http.ServerResponse, status: number, text: string): void {
  const body = '<!doctype html><meta charset="utf-8"><title>claw</title>' +
    `<p>${text}</p>\n`;
  response.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(body),
  });
  response.end(body);
}

/** Compares a state in constant time (it guards against a forged answer). */
function sameText(expected: string, actual: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(actual);
  return a.length === b.length && timingSafeEqual(a, b);
}
