import type { IncomingMessage, ServerResponse } from 'node:http';
import { sameToken } from '@claw/channel';
import type { A2aEndpoints } from './a2a.js';
import { serveConsoleFile } from './console-files.js';
import { sendError, sendJson } from './http-replies.js';
import { tokenInQuery, type OriginPolicy } from './security.js';

export interface HttpRoutesOptions {
  token: string;
  policy: () => OriginPolicy;
  /** Whether the server takes work (`/readyz`); false while it starts and once it stops. */
  ready: () => boolean;
  /** The sessions the authenticated `GET /api/sessions` lists (as `welcome` does). */
  sessions: () => Promise<unknown[]>;
  /** The stored sessions that cannot be read, which it names apart (as `welcome` does). */
  unreadableSessions: () => Promise<unknown[]>;
  /** The web console's built files (`index.html` and its assets); none: `/` says so. */
  consoleDir: string | undefined;
  /** claw as an A2A agent: the public card, and the token-protected `/a2a` endpoints. */
  a2a?: A2aEndpoints;
}

const bodyMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The plain HTTP side of the HTTP port (CH-6, CH-7, SEC-4): `/healthz` and `/readyz` (no session
 * data), the web console's static files at `/`, and the token-protected JSON API under `/api/`.
 * Every request must carry a Host of this server (DNS rebinding) and no token in its URL. API
 * requests need `Authorization: Bearer <token>`, are refused when a browser says they come from
 * another site (`Sec-Fetch-Site: cross-site`), and a request with a body must be
 * `application/json` — so no HTML form and no "simple" cross-origin request can reach them.
 * There are no CORS headers at all: a browser never lets another origin read an answer.
 */
export function createHttpRoutes(
  options: HttpRoutesOptions,
): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => {
    handle(options, request, response).catch((error: unknown) => {
      if (!response.headersSent) {
        sendError(response, 500, 'internal_error', `the request failed: ${String(error)}`);
      } else {
        response.destroy();
      }
    });
  };
}

async function handle(
  options: HttpRoutesOptions,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const method = request.method ?? 'GET';
  const url = new URL(request.url ?? '/', 'http://localhost');
  const hostProblem = options.policy().hostProblem(request.headers.host);
  if (hostProblem !== undefined) return sendError(response, 403, 'forbidden_host', hostProblem);
  const valueIsToken = [...url.searchParams.values()].some((v) => sameToken(v, options.token));
  if (tokenInQuery(url) || valueIsToken) {
    return sendError(
      response,
      400,
      'token_in_url',
      'never put the token in a URL: send it as "Authorization: Bearer <token>"',
    );
  }
  const path = url.pathname;
  if (path === '/healthz' || path === '/readyz') {
    if (method !== 'GET' && method !== 'HEAD') return notAllowed(response, 'GET');
    if (path === '/healthz') return sendJson(response, 200, { status: 'ok' });
    const ready = options.ready();
    return sendJson(response, ready ? 200 : 503, { status: ready ? 'ready' : 'not_ready' });
  }
  if (path === '/.well-known/agent-card.json' || path === '/a2a/agent-card') {
    if (method !== 'GET' && method !== 'HEAD') return notAllowed(response, 'GET');
    if (options.a2a === undefined) return sendError(response, 404, 'not_found', 'A2A is off');
    return options.a2a.card(request, response, path);
  }
  if (path === '/a2a' || path === '/a2a/message') {
    if (method !== 'POST') return notAllowed(response, 'POST');
    if (!guard(options, request, response)) return;
    if (options.a2a === undefined) return sendError(response, 404, 'not_found', 'A2A is off');
    return options.a2a.handle(request, response, path);
  }
  if (path === '/api' || path.startsWith('/api/')) return api(options, request, response, path);
  if (method !== 'GET' && method !== 'HEAD') return notAllowed(response, 'GET');
  return serveConsoleFile(options.consoleDir, path, method, response);
}

async function api(
  options: HttpRoutesOptions,
  request: IncomingMessage,
  response: ServerResponse,
  path: string,
): Promise<void> {
  if (!guard(options, request, response)) return;
  if (path === '/api/sessions') {
    const method = request.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') return notAllowed(response, 'GET');
    const unreadable = await options.unreadableSessions();
    return sendJson(response, 200, {
      sessions: await options.sessions(),
      // As in `welcome`: only when there are any.
      ...(unreadable.length === 0 ? {} : { unreadable_sessions: unreadable }),
    });
  }
  return sendError(response, 404, 'not_found', `no API endpoint ${path}; there is GET /api/sessions`);
}

/**
 * The checks of every token-protected endpoint (SEC-4): not from another site, the bearer token,
 * and a JSON body. Answers the refusal itself and returns false.
 */
function guard(
  options: HttpRoutesOptions,
  request: IncomingMessage,
  response: ServerResponse,
): boolean {
  const method = request.method ?? 'GET';
  if (request.headers['sec-fetch-site'] === 'cross-site') {
    sendError(response, 403, 'cross_site', 'requests from another site are refused');
    return false;
  }
  const authorization = request.headers.authorization ?? '';
  const [scheme, given] = authorization.split(' ', 2);
  if (scheme?.toLowerCase() !== 'bearer' || given === undefined || !sameToken(given, options.token)) {
    sendError(
      response,
      401,
      'unauthorized',
      'send the server token as "Authorization: Bearer <token>": the one given to claw-server, ' +
      'or the generated one, in the file that "token_file" in <workdir>/.claw/server.json names',
      { 'WWW-Authenticate': 'Bearer' },
    );
    return false;
  }
  if (bodyMethods.has(method)) {
    const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/json') {
      sendError(
        response,
        415,
        'unsupported_media_type',
        `the body must be application/json, got ${JSON.stringify(type || 'none')}`,
      );
      return false;
    }
  }
  return true;
}

function notAllowed(response: ServerResponse, allow: string): void {
  sendError(response, 405, 'method_not_allowed', `only ${allow} is allowed here`, { Allow: allow });
}
