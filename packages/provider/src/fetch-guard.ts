type Fetch = typeof globalThis.fetch;

/** Headers of the responses `guardFetch` made from a 200 error reply (to name it in messages). */
const errorReplies = new WeakSet<object>();

/** True when an SDK error carries the headers of a 200 error reply that `guardFetch` rewrote. */
export function cameAsErrorReply(headers: unknown): boolean {
  return typeof headers === 'object' && headers !== null && errorReplies.has(headers);
}

/**
 * Wraps the `fetch` the `openai` client uses (the caller's own, or the global one read at call
 * time) to make two kinds of answers real servers give readable to it (REAL-6). Every other
 * response passes through untouched.
 *
 * - `mode: 'stream'`: a 200 JSON body (not `text/event-stream`) that holds an `error` (a gateway
 *   answering a streaming request with `200 {"error": …}`) is handed on as one SSE `data:` event
 *   with that body, so the client reports the server's error, as for an error sent mid-stream,
 *   instead of parsing no events and ending the stream "incomplete".
 * - Both modes: an error status whose JSON body has its message at the top level instead of
 *   under `error` (older vLLM: `{"object": "error", "message": …, "code": 400}`) is handed on
 *   with the body nested as `{"error": …}`, where the client looks for it; otherwise it would
 *   report "status code (no body)" and lose what the server said.
 *
 * A 200 JSON reply to a non-streaming request is left alone: the provider reads its `error`.
 */
export function guardFetch(base: Fetch | undefined, mode: 'stream' | 'json'): Fetch {
  return async (input, init) => {
    const response = await (base ?? globalThis.fetch)(input, init);
    if (!isJson(response)) return response;
    if (response.ok) return mode === 'stream' ? errorReplyAsEvent(response) : response;
    return nestTopLevelError(response);
  };
}

function isJson(response: Response): boolean {
  const type = response.headers.get('content-type')?.toLowerCase() ?? '';
  // Only a declared JSON body is read here: anything else may be a stream to pass on as it comes.
  return !type.includes('text/event-stream') && type.includes('json');
}

async function readJson(response: Response): Promise<{ text: string; body: unknown }> {
  const text = await response.clone().text();
  try {
    return { text, body: JSON.parse(text) as unknown };
  } catch {
    return { text, body: undefined };
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Headers for a rebuilt body: the length and encoding of the original no longer apply. */
function rebuiltHeaders(response: Response, contentType: string): Headers {
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  headers.delete('content-encoding');
  headers.set('content-type', contentType);
  return headers;
}

async function errorReplyAsEvent(response: Response): Promise<Response> {
  const { body } = await readJson(response);
  const error = isRecord(body) ? body.error : undefined;
  if (error === undefined || error === null || error === false) return response;
  const event = new Response(`data: ${JSON.stringify(body)}\n\n`, {
    status: response.status,
    statusText: response.statusText,
    headers: rebuiltHeaders(response, 'text/event-stream'),
  });
  // A response keeps one Headers object, which the client hands to the error it throws.
  errorReplies.add(event.headers);
  return event;
}

async function nestTopLevelError(response: Response): Promise<Response> {
  const { body } = await readJson(response);
  if (!isRecord(body) || 'error' in body || typeof body.message !== 'string') return response;
  return new Response(JSON.stringify({ error: body }), {
    status: response.status,
    statusText: response.statusText,
    headers: rebuiltHeaders(response, 'application/json'),
  });
}
