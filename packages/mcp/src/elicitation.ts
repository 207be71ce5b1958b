import { abortReason, errorMessage, linkAbortSignal, raceAbort } from '@claw/core';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import {
  ErrorCode,
  McpError,
  type ClientNotification,
  type ClientRequest,
  type ElicitRequest,
  type ElicitRequestFormParams,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { McpServerError } from './errors.js';
import type { SetTimer } from './timers.js';

/** The form a server asks the user to fill in: flat, of strings, numbers, booleans and enums. */
export type McpElicitationSchema = ElicitRequestFormParams['requestedSchema'];

/** What the user entered, by the names of the schema's properties. */
export type McpElicitationContent = Record<string, string | number | boolean | string[]>;

/** A server's request for input (`elicitation/create`, form mode), as the app's handler gets it. */
export interface McpElicitationRequest {
  /** The server that asks, named as in `.claw/mcp.json`. */
  server: string;
  /** What the server tells the user it wants. */
  message: string;
  requestedSchema: McpElicitationSchema;
  /**
   * Aborted when no answer is wanted any more: the server canceled the request, the time for an
   * answer (`elicitationTimeoutMs`) is up, or the connections were closed.
   */
  signal: AbortSignal;
}

/**
 * The user's answer: `accept` with what they entered (fields they left out get the schema's
 * defaults), `decline` (they said no) or `cancel` (they dismissed the question).
 */
export type McpElicitationAnswer =
  | { action: 'accept'; content: McpElicitationContent }
  | { action: 'decline' }
  | { action: 'cancel' };

/** Asks the user on behalf of a server (MCP-7): whoever answers approvals should answer this. */
export type McpElicitationHandler = (
  request: McpElicitationRequest,
) => Promise<McpElicitationAnswer>;

/** How long a server's request for input waits for an answer before claw declines it: 5 minutes. */
export const defaultElicitationTimeoutMs = 5 * 60_000;

/**
 * Checks what the user entered against the form a server asked for: the fields left out get the
 * schema's defaults first (SEP-1034, as claw declares `applyDefaults`), then the result is
 * validated (types, `required`, enums, lengths, ranges, formats) by the MCP SDK's JSON Schema
 * validator. An app can call it to ask again before it answers; claw calls it on every answer.
 */
export function validateElicitationContent(
  requestedSchema: McpElicitationSchema,
  content: Readonly<Record<string, unknown>>,
): { valid: true; content: McpElicitationContent } | { valid: false; error: string } {
  const filled: Record<string, unknown> = { ...content };
  for (const [name, property] of Object.entries(requestedSchema.properties)) {
    if (filled[name] === undefined && 'default' in property && property.default !== undefined) {
      filled[name] = property.default;
    }
  }
  // A validator per answer: the SDK's keeps every schema it compiled, and each request brings a
  // new one; answers come at the pace of a person, so compiling anew costs nothing that matters.
  const check = new AjvJsonSchemaValidator().getValidator<McpElicitationContent>(requestedSchema);
  const result = check(filled);
  return result.valid
    ? { valid: true, content: result.data }
    : { valid: false, error: result.errorMessage ?? 'it does not match the requested schema' };
}

export interface ElicitationHandlerOptions {
  server: string;
  handler: McpElicitationHandler;
  timeoutMs: number;
  setTimer: SetTimer;
  /** Aborted when the connections are closed. */
  lifetime: AbortSignal;
  warn: (code: string, message: string) => void;
  /** Told when the user starts being asked; returns the function that says it ended. */
  asking: () => () => void;
}

type Extra = RequestHandlerExtra<ClientRequest, ClientNotification>;

/**
 * The SDK request handler of `elicitation/create` (form mode; the SDK refuses URL mode, which claw
 * does not declare) around the app's handler:
 * - no answer within `timeoutMs`, or a handler that fails: `decline` (nobody could be asked), and
 *   a warning says so;
 * - an `accept` whose content does not match the requested schema (after defaults) is not sent:
 *   the server gets a JSON-RPC error (invalid params) saying why, and the app a warning. Not
 *   `decline`, because the user did not say no, and a server that took a refusal would go on
 *   as if they had; the error makes the call that asked fail with the reason instead;
 * - the server canceled the request: nothing is sent (the handler's signal aborts).
 */
export function elicitationRequestHandler(
  options: ElicitationHandlerOptions,
): (request: ElicitRequest, extra: Extra) => Promise<ElicitResult> {
  const { server, handler, timeoutMs, setTimer, lifetime, warn, asking } = options;
  return async (request, extra) => {
    const { params } = request;
    if (params.mode === 'url') {
      throw new McpError(ErrorCode.InvalidParams, 'claw does not support URL-mode elicitation');
    }
    const timeout = new AbortController();
    const cancelTimer = setTimer(() => timeout.abort(new McpServerError(
      `MCP server "${server}" asked for input, and no answer came within ${timeoutMs} ms`,
      { code: 'mcp_elicitation_timeout', server },
    )), timeoutMs);
    const link = linkAbortSignal(extra.signal, lifetime, timeout.signal);
    const asked = `MCP server "${server}" asked for input (${quote(params.message)})`;
    const answered = asking();
    try {
      let answer: McpElicitationAnswer;
      try {
        answer = await raceAbort(
          Promise.resolve().then(() => handler({
            server,
            message: params.message,
            requestedSchema: params.requestedSchema,
            signal: link.signal,
          })),
          link.signal,
        );
      } catch (error) {
        if (extra.signal.aborted || lifetime.aborted) throw abortReason(link.signal);
        if (timeout.signal.aborted) {
          warn(
            'mcp_elicitation_timeout',
            `${asked}, and no answer came within ${timeoutMs} ms; claw declined`,
          );
        } else {
          warn(
            'mcp_elicitation_failed',
            `${asked}, and asking the user failed (${errorMessage(error)}); claw declined`,
          );
        }
        return { action: 'decline' };
      }
      return checkedAnswer(answer, params.requestedSchema, asked, warn);
    } finally {
      answered();
      cancelTimer();
      link.dispose();
    }
  };
}

function checkedAnswer(
  answer: McpElicitationAnswer,
  requestedSchema: McpElicitationSchema,
  asked: string,
  warn: (code: string, message: string) => void,
): ElicitResult {
  const action = (answer as { action?: unknown } | undefined)?.action;
  if (action === 'decline' || action === 'cancel') return { action };
  let problem: string;
  if (action === 'accept') {
    const content: unknown = (answer as { content?: unknown }).content ?? {};
    if (typeof content === 'object' && content !== null && !Array.isArray(content)) {
      const checked = validateElicitationContent(
        requestedSchema,
        content as Record<string, unknown>,
      );
      if (checked.valid) return { action: 'accept', content: checked.content };
      problem = `the answer does not match the requested schema: ${checked.error}`;
    } else {
      problem = 'the answer\'s content is not an object';
    }
  } else {
    problem = `the answer's action is ${JSON.stringify(action)}, not accept, decline or cancel`;
  }
  warn(
    'mcp_elicitation_invalid',
    `${asked}, and ${problem}; claw sent the server an error instead of the answer (check the ` +
    'answer against the schema with validateElicitationContent before giving it)',
  );
  throw new McpError(ErrorCode.InvalidParams, `the client's answer was not sent: ${problem}`);
}

function quote(message: string): string {
  const short = message.length > 120 ? `${message.slice(0, 117)}...` : message;
  return JSON.stringify(short);
}
