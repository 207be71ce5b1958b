import { z } from 'zod';
import { riskLevels } from './tools.js';

/**
 * The channel protocol: JSON lines between a client (terminal in stream-json mode, TCP or
 * WebSocket client, web console) and a claw session. Field names are snake_case on the wire.
 */

export const approvalDecisions = ['allow_once', 'allow_session', 'deny'] as const;
export type ApprovalDecision = (typeof approvalDecisions)[number];

// ---- CH-2: events a session sends -------------------------------------------------------------

export const serverEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('thinking'), turn: z.number().int().positive().optional() }),
  z.object({ type: z.literal('text_delta'), content: z.string() }),
  z.object({ type: z.literal('text_completed'), content: z.string() }),
  z.object({
    type: z.literal('tool_call'),
    tool_call_id: z.string(),
    tool_name: z.string(),
    arguments: z.string(),
  }),
  z.object({
    type: z.literal('tool_result'),
    tool_call_id: z.string(),
    tool_name: z.string(),
    result: z.string(),
    is_error: z.boolean(),
  }),
  z.object({ type: z.literal('task_completed'), content: z.string() }),
  z.object({ type: z.literal('task_canceled'), reason: z.string().optional() }),
  z.object({ type: z.literal('task_failed'), error: z.string(), code: z.string().optional() }),
  z.object({ type: z.literal('error'), error: z.string(), code: z.string().optional() }),
  z.object({ type: z.literal('pong') }),
  z.object({
    type: z.literal('approval_request'),
    request_id: z.string(),
    tool_name: z.string(),
    risk: z.enum(riskLevels),
    reason: z.string(),
    arguments: z.string().optional(),
  }),
]);

export type ServerEvent = z.infer<typeof serverEventSchema>;
export type ServerEventType = ServerEvent['type'];
export type ServerEventOf<T extends ServerEventType> = Extract<ServerEvent, { type: T }>;

/** The event types that end a task; exactly one of them closes every task's event stream. */
export const taskEndEventTypes = ['task_completed', 'task_canceled', 'task_failed'] as const;

// ---- CH-1: messages a client sends ------------------------------------------------------------

export const clientMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('prompt'), content: z.string().trim().min(1) }),
  z.object({ type: z.literal('interrupt') }),
  z.object({ type: z.literal('close') }),
  z.object({ type: z.literal('ping') }),
  z.object({
    type: z.literal('approval_response'),
    request_id: z.string().min(1),
    decision: z.enum(approvalDecisions),
  }),
]);

export type ClientMessage = z.infer<typeof clientMessageSchema>;

/** Default cap on one client line, in bytes (UTF-8). */
export const defaultMaxClientLineBytes = 1024 * 1024;

const utf8Encoder = new TextEncoder();

export type ParsedClientMessage =
  | { ok: true; message: ClientMessage }
  | { ok: false; error: string };

/**
 * Parses one JSON line from a client. Never throws: a line that is too long, not JSON, of an
 * unknown type or missing a field gives `{ ok: false, error }` with a message meant for the
 * client, and the connection can go on (CH-1).
 */
export function parseClientMessage(
  line: string,
  options: { maxBytes?: number } = {},
): ParsedClientMessage {
  const maxBytes = options.maxBytes ?? defaultMaxClientLineBytes;
  // Cheap bound first: a UTF-8 byte is at least a UTF-16 unit and at most three per unit.
  const size = line.length * 3 <= maxBytes ? line.length : utf8Encoder.encode(line).length;
  if (size > maxBytes) {
    return { ok: false, error: `message too large: ${size} bytes, the limit is ${maxBytes}` };
  }
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, error: 'invalid JSON: send one JSON object per line' };
  }
  const result = clientMessageSchema.safeParse(value);
  if (result.success) return { ok: true, message: result.data };
  const type = (value as { type?: unknown } | null)?.type;
  const known = clientMessageSchema.options.map((option) => option.shape.type.value);
  if (typeof type !== 'string' || !(known as string[]).includes(type)) {
    return {
      ok: false,
      error: `unknown message type ${JSON.stringify(type)}: expected one of ${known.join(', ')}`,
    };
  }
  return { ok: false, error: `invalid ${type} message: ${z.prettifyError(result.error)}` };
}
