// The channel protocol (CH-1, CH-2) as zod schemas: what clients send and what servers answer.
// Browser-safe: the web console imports this file (`@claw/channel/protocol`) and nothing else.
import {
  approvalDecisions,
  compactionReasons,
  elicitationActions,
  riskLevels,
  sessionRunStates,
  type Message,
  type SessionEvent,
} from '@claw/core';
import { z } from 'zod';

// How the text of a model or a tool is shown to people, the same in every client.
export { promptTitle, visible, withoutColourCodes } from '@claw/core';

/** The protocol version `hello` names and `welcome` answers with. */
export const protocolVersion = 1;

/** Default cap on one client message, in bytes (UTF-8): 1 MiB (SEC-6). */
export const defaultMaxMessageBytes = 1024 * 1024;

const sessionId = z.string().min(1).max(128);
const optionalSession = { session_id: sessionId.optional() };

// ---- CH-1: messages a client sends ------------------------------------------------------------

/** Every message a client may send (CH-1), told apart by `type`. */
export const clientMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('hello'), token: z.string(), protocol: z.number().int() }),
  z.object({
    type: z.literal('open'),
    ...optionalSession,
    after: z.number().int().nonnegative().optional(),
    role: z.enum(['controller', 'observer']).optional(),
    workdir: z.string().min(1).optional(),
  }),
  z.object({ type: z.literal('prompt'), ...optionalSession, content: z.string().trim().min(1) }),
  z.object({ type: z.literal('interrupt'), ...optionalSession }),
  z.object({
    type: z.literal('approval_response'),
    ...optionalSession,
    request_id: z.string().min(1),
    decision: z.enum(approvalDecisions),
  }),
  /**
   * Answers an MCP server's request for input (MCP-7, an `elicitation_request` event): `accept`
   * with `content` (the form's fields by name; fields left out get the form's defaults), or
   * `decline`, or `cancel`. Controllers only; the first answer wins. An `accept` whose content
   * does not fit the form is refused (`invalid_elicitation_answer`) and may be sent again.
   */
  z.object({
    type: z.literal('elicitation_response'),
    ...optionalSession,
    request_id: z.string().min(1),
    action: z.enum(elicitationActions),
    content: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]))
      .optional(),
  }),
  z.object({ type: z.literal('close'), ...optionalSession, end: z.boolean().optional() }),
  /**
   * Compact the session's conversation now (CMP-5): controllers only, on an idle session.
   * `focus` says what the summary must keep.
   */
  z.object({
    type: z.literal('compact'),
    ...optionalSession,
    focus: z.string().max(4000).optional(),
  }),
  z.object({ type: z.literal('ping') }),
]);

/** A message a client sends, as `parseClientMessage` returns it (CH-1). */
export type ClientMessage = z.infer<typeof clientMessageSchema>;
/** The `type` of a client message: `hello`, `open`, `prompt`, `interrupt`… */
export type ClientMessageType = ClientMessage['type'];
/** The client message of one `type`, e.g. `ClientMessageOf<'prompt'>`. */
export type ClientMessageOf<T extends ClientMessageType> = Extract<ClientMessage, { type: T }>;

// ---- CH-2: session events (RT-3), the runtime's events as they go on the wire ----------------

const eventFields = { session_id: sessionId, seq: z.number().int().positive(), at: z.string() };
const taskFields = { ...eventFields, task_id: z.string() };
const wireUsage = z.object({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
  cached_tokens: z.number().optional(),
});

/** A tool call that waits for a controller's yes or no (`approval_request`, CH-2). */
export const approvalRequestSchema = z.object({
  type: z.literal('approval_request'),
  ...taskFields,
  request_id: z.string(),
  tool_name: z.string(),
  risk: z.enum(riskLevels),
  reason: z.string(),
  arguments: z.string(),
});

/** An MCP server's question to the user that waits for a controller's answer (CH-2). */
export const elicitationRequestSchema = z.object({
  type: z.literal('elicitation_request'),
  ...taskFields,
  request_id: z.string(),
  server: z.string(),
  message: z.string(),
  requested_schema: z.object({
    type: z.literal('object'),
    properties: z.record(z.string(), z.record(z.string(), z.unknown())),
    required: z.array(z.string()).optional(),
  }),
});

/** One file of project instructions the model is given (REAL-2), as `session_opened` lists it. */
export const instructionFileSchema = z.object({
  path: z.string(),
  bytes: z.number().int().nonnegative(),
  truncated: z.boolean().optional(),
});

/** One file of project instructions, as `session_opened` lists it. */
export type InstructionFile = z.infer<typeof instructionFileSchema>;

/** The events of a session's work on the wire (CH-2): the runtime's events in snake_case. */
export const sessionEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('task_started'), ...taskFields, content: z.string() }),
  z.object({
    type: z.literal('thinking'),
    ...taskFields,
    turn: z.number().int().positive(),
    purpose: z.literal('summary').optional(),
  }),
  z.object({ type: z.literal('text_delta'), ...taskFields, content: z.string() }),
  z.object({ type: z.literal('thinking_delta'), ...taskFields, content: z.string() }),
  z.object({ type: z.literal('text_completed'), ...taskFields, content: z.string() }),
  z.object({
    type: z.literal('tool_call'),
    ...taskFields,
    tool_call_id: z.string(),
    tool_name: z.string(),
    arguments: z.string(),
  }),
  z.object({
    type: z.literal('tool_result'),
    ...taskFields,
    tool_call_id: z.string(),
    tool_name: z.string(),
    result: z.string(),
    is_error: z.boolean(),
  }),
  approvalRequestSchema,
  z.object({
    type: z.literal('approval_resolved'),
    ...taskFields,
    request_id: z.string(),
    decision: z.enum(approvalDecisions),
    by: z.string(),
  }),
  elicitationRequestSchema,
  z.object({
    type: z.literal('elicitation_resolved'),
    ...taskFields,
    request_id: z.string(),
    action: z.enum(elicitationActions),
    by: z.string(),
  }),
  z.object({
    type: z.literal('state'),
    ...eventFields,
    task_id: z.string().optional(),
    state: z.enum(sessionRunStates),
  }),
  z.object({
    type: z.literal('model_retry'),
    ...taskFields,
    attempt: z.number().int().positive(),
    attempts: z.number().int().positive(),
    delay_ms: z.number().nonnegative(),
    error: z.string(),
  }),
  z.object({
    type: z.literal('usage'),
    ...taskFields,
    call: wireUsage,
    run: wireUsage,
    session: wireUsage,
    cost: z.object({
      call_usd: z.number().nullable(),
      run_usd: z.number(),
      session_usd: z.number(),
      unpriced_calls: z.number().int(),
    }),
    budgets_left: z
      .object({
        session_tokens: z.number(),
        run_tokens: z.number(),
        session_cost_usd: z.number(),
        run_cost_usd: z.number(),
        tool_time_ms: z.number(),
        subagents: z.number(),
      })
      .partial(),
  }),
  z.object({
    type: z.literal('context_compacted'),
    ...taskFields,
    reason: z.enum(compactionReasons),
    tokens_before: z.number().int().nonnegative(),
    tokens_after: z.number().int().nonnegative(),
    pruned_results: z.number().int().nonnegative(),
    summarised_messages: z.number().int().nonnegative(),
    summary: z.string().optional(),
    error: z.string().optional(),
  }),
  z.object({ type: z.literal('task_completed'), ...taskFields, content: z.string() }),
  z.object({ type: z.literal('task_canceled'), ...taskFields, reason: z.string().optional() }),
  z.object({ type: z.literal('task_failed'), ...taskFields, error: z.string(), code: z.string() }),
]);

// Compile-time proof that the schemas describe the runtime's events exactly.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const sessionEventsMatch: Same<z.infer<typeof sessionEventSchema>, SessionEvent> = true;
void sessionEventsMatch;

// ---- CH-2: what a connection answers -----------------------------------------------------------

/** A message of the history on the wire (snake_case, like every field of the protocol). */
export const wireMessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string() }),
  z.object({ role: z.literal('user'), content: z.string() }),
  z.object({
    role: z.literal('assistant'),
    content: z.string(),
    tool_calls: z
      .array(z.object({ id: z.string(), name: z.string(), arguments: z.string() }))
      .optional(),
    /** What the model reasoned before this reply (REAL-4); absent when it streamed none. */
    reasoning: z.string().optional(),
  }),
  z.object({
    role: z.literal('tool'),
    tool_call_id: z.string(),
    content: z.string(),
    is_error: z.boolean().optional(),
  }),
]);

/** A message of a session's history as the wire carries it. */
export type WireMessage = z.infer<typeof wireMessageSchema>;

const sessionState = z.enum(sessionRunStates);

/**
 * The sessions a server lists: in `welcome`, and as the answer of its `GET /api/sessions`.
 */
export const sessionListingSchema = z.object({
  sessions: z.array(
    z.object({
      session_id: sessionId,
      state: sessionState,
      last_seq: z.number().int().nonnegative(),
      updated_at: z.string(),
      /** The first line of its first prompt, at most 80 characters; absent: none yet. */
      title: z.string().optional(),
    }),
  ),
  /** Stored sessions that cannot be read (damaged), left out of `sessions`; absent: none. */
  unreadable_sessions: z
    .array(z.object({ session_id: z.string(), reason: z.string() }))
    .optional(),
});

/** The sessions a server lists: in `welcome` and from `GET /api/sessions`. */
export type SessionListing = z.infer<typeof sessionListingSchema>;

/** The events a server sends about the connection rather than a session's work (CH-2). */
export const connectionEventSchema = z.discriminatedUnion('type', [
  sessionListingSchema.extend({
    type: z.literal('welcome'),
    protocol: z.number().int(),
    server: z.object({ name: z.string(), version: z.string() }),
  }),
  z.object({
    type: z.literal('session_opened'),
    session_id: sessionId,
    state: sessionState,
    last_seq: z.number().int().nonnegative(),
    pending_approvals: z.array(approvalRequestSchema),
    /** The MCP servers' requests for input waiting for an answer (MCP-7); absent: none known. */
    pending_elicitations: z.array(elicitationRequestSchema).optional(),
    role: z.enum(['controller', 'observer']),
    workdir: z.string(),
    /**
     * The project instructions the model is given in this session (REAL-2), in the order it gets
     * them: each file's path as people know it (relative to the workspace, `~/` for the home
     * folder), its size in bytes, and `truncated` when only its start fit. Absent: none.
     */
    instructions: z.array(instructionFileSchema).optional(),
  }),
  z.object({
    type: z.literal('history'),
    session_id: sessionId,
    /** The history is the session as of this seq; the live events follow after it. */
    seq: z.number().int().nonnegative(),
    messages: z.array(wireMessageSchema),
    /**
     * Where the conversation was last compacted (CMP-4): the model sees the messages before
     * `up_to` only as `summary` (and the user's own, verbatim). Absent: never compacted.
     */
    compaction: z
      .object({ up_to: z.number().int().nonnegative(), summary: z.string().optional() })
      .optional(),
  }),
  z.object({ type: z.literal('session_closed'), session_id: sessionId, ended: z.boolean() }),
  /**
   * How far a running tool has got, as it said (a bash command: how long it has run and its last
   * output line; an MCP tool: its own figures). Not a session event: no seq, never replayed, and
   * a connection that cannot take it at once does not get it.
   */
  z.object({
    type: z.literal('tool_progress'),
    session_id: sessionId,
    task_id: z.string(),
    tool_call_id: z.string(),
    tool_name: z.string(),
    progress: z.number(),
    total: z.number().optional(),
    message: z.string().optional(),
  }),
  z.object({
    type: z.literal('error'),
    /** What went wrong; one of `sessionEndCodes` ends the session's events (open it again). */
    code: z.string(),
    message: z.string(),
    session_id: sessionId.optional(),
    request_id: z.string().optional(),
    /** With `cursor_expired`: the oldest seq the session can replay from. */
    oldest_seq: z.number().int().nonnegative().optional(),
  }),
  z.object({ type: z.literal('pong') }),
  z.object({ type: z.literal('server_stopping'), grace_ms: z.number().int().nonnegative() }),
]);

/** An event about the connection itself rather than a session's work (`welcome`, `error`…). */
export type ConnectionEvent = z.infer<typeof connectionEventSchema>;

/**
 * The codes of the `error` (with `session_id`) that tells a session's clients the server let the
 * session go while they followed it (LIFE-2): `lease_lost` (another instance owns it now,
 * SCALE-2), `store_unavailable` (its store cannot be reached or written), `session_dropped` (let
 * go for another reason). The session's events end there, and its prompts, interrupts and answers
 * on the connection get the same error, until the client sends `open` for it again, which reads
 * it afresh (from the store, or from the instance that owns it now).
 */
export const sessionEndCodes = ['lease_lost', 'store_unavailable', 'session_dropped'] as const;
/** Why the server let a session go: one of `sessionEndCodes`. */
export type SessionEndCode = (typeof sessionEndCodes)[number];

/** True for the code of an `error` that ended a session on the connection (see above). */
export function isSessionEndCode(code: string): code is SessionEndCode {
  return (sessionEndCodes as readonly string[]).includes(code);
}

/** Everything a server sends (CH-2). */
export const serverEventSchema = z.union([sessionEventSchema, connectionEventSchema]);
export type { SessionEvent };
/** Any event a server sends: a session's or the connection's (CH-2). */
export type ServerEvent = SessionEvent | ConnectionEvent;
/** The `type` of a server event: `welcome`, `session_opened`, `text_delta`… */
export type ServerEventType = ServerEvent['type'];
/** The server event of one `type`, e.g. `ServerEventOf<'task_completed'>`. */
export type ServerEventOf<T extends ServerEventType> = Extract<ServerEvent, { type: T }>;

/**
 * A `model_retry` event for people, the same in every client: when and how often the call is
 * tried again, and why. `model call failed, trying again in 0.2 s (attempt 2 of 3): <error>`.
 */
export function describeModelRetry(
  retry: Pick<ServerEventOf<'model_retry'>, 'attempt' | 'attempts' | 'delay_ms' | 'error'>,
): string {
  const wait = `${(retry.delay_ms / 1000).toFixed(1)} s`;
  return `model call failed, trying again in ${wait} (attempt ${retry.attempt + 1} of ` +
    `${retry.attempts}): ${retry.error}`;
}

/**
 * A compaction for people, the same in every client (CMP-5): `context compacted (threshold):
 * 15,200 → 6,100 tokens · 12 old tool results pruned · 40 messages summarised`; a failed summary
 * says so (`… · 40 messages left out: the summary failed (…)`).
 */
export function describeCompacted(
  event: Pick<
    ServerEventOf<'context_compacted'>,
    'reason' | 'tokens_before' | 'tokens_after' | 'pruned_results' | 'summarised_messages' | 'error'
  >,
): string {
  const count = (n: number, noun: string): string =>
    `${n.toLocaleString('en-US')} ${noun}${n === 1 ? '' : 's'}`;
  const parts = [
    `context compacted (${event.reason}): ${event.tokens_before.toLocaleString('en-US')} → ` +
    `${event.tokens_after.toLocaleString('en-US')} tokens`,
  ];
  if (event.pruned_results > 0) parts.push(`${count(event.pruned_results, 'old tool result')} pruned`);
  if (event.summarised_messages > 0) {
    parts.push(event.error === undefined
      ? `${count(event.summarised_messages, 'message')} summarised`
      : `${count(event.summarised_messages, 'message')} left out: the summary failed (${event.error})`);
  }
  return parts.join(' · ');
}

/** How long a model call must be silent before a client says so, in milliseconds. */
export const modelWaitNoticeMs = 5000;

/**
 * A silent model call for people, the same in every client: `waiting for the model: 12 s so far`
 * (`still waiting …` when said again).
 */
export function describeModelWait(seconds: number, again = false): string {
  return `${again ? 'still ' : ''}waiting for the model: ${seconds} s so far`;
}

/**
 * A tool's progress for people, the same in every client: `Downloading (30 of 100)`,
 * `Downloading`, `30 of 100` or `30`.
 */
export function describeToolProgress(
  progress: Pick<ServerEventOf<'tool_progress'>, 'progress' | 'total' | 'message'>,
): string {
  const amount = progress.total === undefined
    ? `${progress.progress}`
    : `${progress.progress} of ${progress.total}`;
  const message = progress.message?.trim() ?? '';
  if (message === '') return amount;
  return progress.total === undefined ? message : `${message} (${amount})`;
}

/**
 * Money for people, the same in every client: `$1.25`, `$0.0042` under a cent, `unpriced` when
 * no call had a price, `$0.12 + 2 unpriced` when some had none (the true cost is then higher).
 */
export function describeCost(usd: number, unpricedCalls: number): string {
  if (unpricedCalls > 0 && usd === 0) return 'unpriced';
  const dollars = `$${usd < 0.01 && usd > 0 ? usd.toFixed(4) : usd.toFixed(2)}`;
  return unpricedCalls > 0 ? `${dollars} + ${unpricedCalls} unpriced` : dollars;
}

/** What a task did, for {@link describeTaskSummary}. */
export interface TaskSummary {
  /** Model calls, the summary calls of compactions included. */
  modelCalls: number;
  /** Of `modelCalls`, those that summarised the conversation (CMP-6). */
  summaryCalls: number;
  /** Times the conversation was compacted (CMP-5). */
  compactions: number;
  toolCalls: number;
  /** Tool calls that failed or were denied. */
  failedToolCalls: number;
  /** Tokens of the task, its subagents' included. */
  tokens: number;
  /** Of the task's prompt tokens, those read from the server's prompt cache (REAL-5). */
  cachedTokens: number;
  costUsd: number;
  /** Model calls of the task that had no price. */
  unpricedCalls: number;
  elapsedMs: number;
}

/**
 * What a task did, in one line, the same in every client: `3 model calls · 2 tool calls (1 failed
 * or denied) · 12,345 tokens (8,000 cached) · cost $0.0042 · 14.2 s`. Cached tokens are named
 * only when there were some; compactions too (`12 model calls (1 to summarise) · … · context
 * compacted once · …`).
 */
export function describeTaskSummary(summary: TaskSummary): string {
  const count = (n: number, noun: string): string =>
    `${n.toLocaleString('en-US')} ${noun}${n === 1 ? '' : 's'}`;
  const calls = count(summary.toolCalls, 'tool call') +
    (summary.failedToolCalls > 0 ? ` (${summary.failedToolCalls} failed or denied)` : '');
  const compacted = summary.compactions === 0
    ? []
    : [`context compacted ${summary.compactions === 1 ? 'once' : `${summary.compactions} times`}`];
  return [
    count(summary.modelCalls, 'model call') +
    (summary.summaryCalls > 0 ? ` (${summary.summaryCalls} to summarise)` : ''),
    calls,
    count(summary.tokens, 'token') +
    (summary.cachedTokens > 0 ? ` (${summary.cachedTokens.toLocaleString('en-US')} cached)` : ''),
    ...compacted,
    `cost ${describeCost(summary.costUsd, summary.unpricedCalls)}`,
    `${(summary.elapsedMs / 1000).toFixed(1)} s`,
  ].join(' · ');
}

/** What a task has done so far, counted from its events ({@link tallyTask}). */
export interface TaskTally extends Omit<TaskSummary, 'elapsedMs'> {
  taskId: string;
  /** Its `task_started` time, in ms since the epoch. */
  startedAt: number;
}

/**
 * The tally after `event` (which came at `at`, ms): a new one at `task_started`, counted on by
 * the task's model calls (`thinking`), tool calls and failed results, and usage (its tokens and
 * cost so far; a call without a price counts as unpriced); other events leave it as it is.
 */
export function tallyTask(
  tally: TaskTally | undefined,
  event: SessionEvent,
  at: number,
): TaskTally | undefined {
  if (event.type === 'task_started') {
    return {
      taskId: event.task_id,
      startedAt: at,
      modelCalls: 0,
      summaryCalls: 0,
      compactions: 0,
      toolCalls: 0,
      failedToolCalls: 0,
      tokens: 0,
      cachedTokens: 0,
      costUsd: 0,
      unpricedCalls: 0,
    };
  }
  if (tally === undefined || !('task_id' in event) || event.task_id !== tally.taskId) return tally;
  if (event.type === 'thinking') {
    return {
      ...tally,
      modelCalls: tally.modelCalls + 1,
      summaryCalls: tally.summaryCalls + (event.purpose === 'summary' ? 1 : 0),
    };
  }
  if (event.type === 'context_compacted') return { ...tally, compactions: tally.compactions + 1 };
  if (event.type === 'tool_call') return { ...tally, toolCalls: tally.toolCalls + 1 };
  if (event.type === 'tool_result' && event.is_error) {
    return { ...tally, failedToolCalls: tally.failedToolCalls + 1 };
  }
  if (event.type === 'usage') {
    return {
      ...tally,
      tokens: event.run.total_tokens,
      cachedTokens: event.run.cached_tokens ?? 0,
      costUsd: event.cost.run_usd,
      unpricedCalls: tally.unpricedCalls + (event.cost.call_usd === null ? 1 : 0),
    };
  }
  return tally;
}

/** What a tallied task did, once it ended at `endedAt` (ms). */
export function summaryOfTally(tally: TaskTally, endedAt: number): TaskSummary {
  const { taskId: _taskId, startedAt, ...counts } = tally;
  return { ...counts, elapsedMs: Math.max(0, endedAt - startedAt) };
}

/** The message of the history as it goes on the wire. */
export function toWireMessage(message: Message): WireMessage {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content,
        ...(message.toolCalls === undefined
          ? {}
          : {
              tool_calls: message.toolCalls.map(({ id, name, arguments: args }) => ({
                id,
                name,
                arguments: args,
              })),
            }),
        ...(message.reasoning === undefined ? {} : { reasoning: message.reasoning }),
      };
    case 'tool':
      return {
        role: 'tool',
        tool_call_id: message.toolCallId,
        content: message.content,
        ...(message.isError === undefined ? {} : { is_error: message.isError }),
      };
  }
}

/** Why a client message was refused (the `code` of the `error` it gets). */
export type ParseProblem = 'message_too_large' | 'invalid_json' | 'unknown_type' | 'invalid_message';

/** What `parseClientMessage` returns: the message, or why it was refused. */
export type ParsedClientMessage =
  | { ok: true; message: ClientMessage }
  | { ok: false; code: ParseProblem; message: string };

const utf8 = new TextEncoder();
const knownTypes = clientMessageSchema.options.map((option) => option.shape.type.value);

/**
 * Parses one client message (a JSON line, or a WebSocket text frame). Never throws: a message
 * that is too large, not JSON, of an unknown type or with a missing or bad field gives
 * `{ ok: false, code, message }`, the message saying what is wrong and what is expected, and the
 * connection goes on (CH-1).
 */
export function parseClientMessage(
  line: string,
  options: { maxBytes?: number } = {},
): ParsedClientMessage {
  const maxBytes = options.maxBytes ?? defaultMaxMessageBytes;
  // Cheap bound first: a UTF-8 byte count is at least the UTF-16 length, at most three times it.
  const size = line.length * 3 <= maxBytes ? line.length : utf8.encode(line).length;
  if (size > maxBytes) {
    return {
      ok: false,
      code: 'message_too_large',
      message: `message too large: ${size} bytes, the limit is ${maxBytes}`,
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return {
      ok: false,
      code: 'invalid_json',
      message: 'invalid JSON: send one JSON object per line (or per WebSocket message)',
    };
  }
  const result = clientMessageSchema.safeParse(value);
  if (result.success) return { ok: true, message: result.data };
  const type = (value as { type?: unknown } | null)?.type;
  if (typeof type !== 'string' || !(knownTypes as string[]).includes(type)) {
    return {
      ok: false,
      code: 'unknown_type',
      message:
        `unknown message type ${describeType(type)}: expected one of ` +
        knownTypes.join(', '),
    };
  }
  return {
    ok: false,
    code: 'invalid_message',
    message: `invalid ${type} message: ${z.prettifyError(result.error)}`,
  };
}

/**
 * The `type` a message gave, for an error message: a string (cut at 64 characters) or what kind
 * of value it was. Never the value itself: a client controls it, and stringifying an array nested
 * 100,000 deep would overflow the stack.
 */
function describeType(type: unknown): string {
  if (typeof type === 'string') return JSON.stringify(type.length > 64 ? `${type.slice(0, 64)}…` : type);
  if (type === undefined) return 'missing';
  if (type === null) return 'null';
  if (Array.isArray(type)) return '(an array)';
  return typeof type === 'object' ? '(an object)' : `(a ${typeof type})`;
}
