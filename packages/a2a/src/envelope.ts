import { abortReason, errorMessage, throwIfAborted } from '@claw/core';
import { A2aRemoteError } from './errors.js';

/**
 * The seed's own envelope (claw-to-claw, beside the official protocol): every answer is
 * `{code, message, data}`, `code` 0 on success.
 */
export interface Envelope<Data = unknown> {
  code: number;
  message: string;
  data: Data;
}

/** `data` of a `POST /a2a/message` answer. */
export interface EnvelopeTaskResult {
  session_id: string;
  /** How the claw task ended: completed, failed or canceled. */
  status: string;
  /** The final report: the last assistant text, and the tool calls that were denied. */
  report: string;
}

export interface SendEnvelopeOptions {
  /** The claw-server's base URL (its HTTP port). */
  url: string;
  message: string;
  headers?: Readonly<Record<string, string>>;
  signal?: AbortSignal;
  fetch?: typeof fetch;
}

/**
 * Sends a task to another claw over the seed's envelope (`POST <url>/a2a/message`) and waits for
 * its report. Aborting the call drops the request; the remote server then cancels the task.
 *
 * @throws A2aRemoteError `a2a_unreachable`, `a2a_auth_failed`, `a2a_request_failed` (the
 *   envelope's `code` was not 0; its message is kept); the signal's reason on abort.
 */
export async function sendEnvelopeMessage(
  options: SendEnvelopeOptions,
): Promise<EnvelopeTaskResult> {
  throwIfAborted(options.signal);
  const endpoint = new URL('a2a/message', options.url.endsWith('/') ? options.url : `${options.url}/`).href;
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(endpoint, {
      method: 'POST',
      headers: { ...options.headers, 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: options.message }),
      signal: options.signal ?? null,
    });
  } catch (error) {
    if (options.signal?.aborted === true) throw abortReason(options.signal);
    throw new A2aRemoteError(
      `could not reach the claw peer at ${endpoint} (${errorMessage(error)}): check the URL ` +
      '(the claw-server\'s HTTP address) and that the server is running',
      { code: 'a2a_unreachable', url: endpoint, cause: error },
    );
  }
  if (response.status === 401 || response.status === 403) {
    throw new A2aRemoteError(
      `the claw peer at ${endpoint} refused claw's credentials (HTTP ${response.status}): put its ` +
      'server token in the peer\'s "headers" in .claw/a2a.json ("Authorization": "Bearer ${TOKEN}")',
      { code: 'a2a_auth_failed', url: endpoint },
    );
  }
  let body: Partial<Envelope<EnvelopeTaskResult>>;
  try {
    body = (await response.json()) as Partial<Envelope<EnvelopeTaskResult>>;
  } catch (error) {
    if (options.signal?.aborted === true) throw abortReason(options.signal);
    throw new A2aRemoteError(
      `the claw peer at ${endpoint} answered HTTP ${response.status} without a JSON envelope`,
      { code: 'a2a_request_failed', url: endpoint, cause: error },
    );
  }
  if (body.code !== 0 || body.data === undefined || body.data === null) {
    throw new A2aRemoteError(
      `the claw peer at ${endpoint} refused the task (code ${String(body.code)}): ${body.message ?? 'no message'}`,
      { code: 'a2a_request_failed', url: endpoint },
    );
  }
  return body.data;
}
