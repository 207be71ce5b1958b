/**
 * What a model server said about a failure, read from the `error` field it sent (an object, or
 * a bare string on some local servers), and how to classify it. Servers differ in the shape:
 * OpenAI-style `{message, type, param, code}`, OpenRouter `{code: 502, message, metadata}`,
 * llama.cpp `{code: 500, message, type: "server_error"}`, LM Studio `"…"`.
 */
export interface ServerErrorInfo {
  /** The server's own words; empty when it gave none. */
  message: string;
  /** `error.code`: a number (an HTTP-like status) or a string (`"rate_limit_exceeded"`). */
  code: string | number | undefined;
  /** `error.type`, e.g. `"server_error"`, `"invalid_request_error"`. */
  type: string | undefined;
}

const maxMessageLength = 600;

/** Reads an `error` payload; anything unexpected gives an empty message rather than a throw. */
export function readServerError(payload: unknown): ServerErrorInfo {
  if (typeof payload === 'string') return { message: clip(payload), code: undefined, type: undefined };
  if (typeof payload !== 'object' || payload === null) {
    return { message: '', code: undefined, type: undefined };
  }
  const fields = payload as { message?: unknown; code?: unknown; type?: unknown };
  let message = '';
  if (typeof fields.message === 'string') message = fields.message;
  else if (fields.message !== undefined && fields.message !== null) {
    message = safeJson(fields.message);
  }
  const code =
    typeof fields.code === 'number' || (typeof fields.code === 'string' && fields.code !== '')
      ? fields.code
      : undefined;
  const type = typeof fields.type === 'string' && fields.type !== '' ? fields.type : undefined;
  return { message: clip(message), code, type };
}

/** HTTP-like statuses worth another attempt (the same set as `classifyError` uses for HTTP). */
function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || (status >= 500 && status <= 599);
}

/**
 * String codes (or types) that name a transient failure on the server's side. Anything else,
 * `invalid_request_error` above all, is a problem with the request that a retry hits again.
 */
const retryableNames = new Set([
  'server_error',
  'internal_error',
  'internal_server_error',
  'api_error',
  'rate_limit_exceeded',
  'rate_limit_error',
  'too_many_requests',
  'overloaded',
  'overloaded_error',
  'timeout',
  'timeout_error',
  'request_timeout',
  'service_unavailable',
  'unavailable',
]);

/**
 * True when the error is worth another attempt: by `code` when the server gave one (a numeric
 * 408/409/429/5xx, or a numeric string such as `"502"`, or a name such as `server_error`), by
 * `type` when it gave no code (OpenAI's mid-stream `{"type": "server_error"}`); false otherwise.
 */
export function isRetryableServerError(info: ServerErrorInfo): boolean {
  const { code } = info;
  if (typeof code === 'number') return isRetryableStatus(code);
  if (code !== undefined) {
    if (/^\d{3}$/.test(code)) return isRetryableStatus(Number(code));
    return retryableNames.has(code.toLowerCase());
  }
  return info.type !== undefined && retryableNames.has(info.type.toLowerCase());
}

/**
 * What servers say when the request no longer fits the model's context window:
 * - OpenAI, DeepSeek, vLLM, OpenRouter: "(This model's|This endpoint's) maximum context length
 *   is N tokens. However, …"; Groq, OpenAI: code `context_length_exceeded`;
 * - llama.cpp: "request (N tokens) exceeds the available context size (M tokens)", type
 *   `exceed_context_size_error`;
 * - LM Studio: "The number of tokens to keep from the initial prompt is greater than the context
 *   length", "Trying to keep the first N tokens when context the overflows", "Reached context
 *   length of N tokens … mid-generation context overflow";
 * - Ollama and others: "… exceeds the context length/window", "context window exceeded";
 * - Anthropic-compatible servers: "prompt is too long: N tokens > M maximum".
 */
const contextLengthPatterns: readonly RegExp[] = [
  /maximum context length is \d+/i,
  /exceeds? (?:the )?available context size/i,
  /(?:greater than|longer than|larger than|exceeds?|exceeded|exceeding|more than)\b.{0,40}\bcontext (?:length|window|size)/i,
  /context (?:length|window|size)\b.{0,20}\b(?:exceeded|overflow)/i,
  /\bcontext (?:the )?overflows?\b/i,
  /prompt is too long/i,
];

const contextLengthNames = new Set([
  'context_length_exceeded',
  'exceed_context_size_error',
  'context_window_exceeded',
]);

/** True when the server said the request does not fit the model's context window. */
export function isContextLengthError(info: ServerErrorInfo): boolean {
  const code = typeof info.code === 'string' ? info.code.toLowerCase() : undefined;
  const type = info.type?.toLowerCase();
  if (code !== undefined && contextLengthNames.has(code)) return true;
  if (type !== undefined && contextLengthNames.has(type)) return true;
  return contextLengthPatterns.some((pattern) => pattern.test(info.message));
}

/** `(code 502)`, `(type server_error)` or nothing: how the server named the error. */
export function describeServerCode(info: ServerErrorInfo): string {
  if (info.code !== undefined) return ` (code ${info.code})`;
  if (info.type !== undefined) return ` (type ${info.type})`;
  return '';
}

function clip(text: string): string {
  const trimmed = text.trim();
  return trimmed.length <= maxMessageLength ? trimmed : `${trimmed.slice(0, maxMessageLength)}…`;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}
