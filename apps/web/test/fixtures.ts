// Server events for the console's tests, built through the protocol's own schemas: a fixture
// with a wrong or missing field fails here instead of testing something no server sends.
import {
  connectionEventSchema,
  sessionEventSchema,
  type ServerEvent,
  type ServerEventOf,
  type SessionEvent,
  type WireMessage,
} from '@claw/channel/protocol';
import { initialState, reduce } from '../src/state/reducer.js';
import { compactionText } from '../src/state/selectors.js';
import type {
  ApprovalItem,
  ConsoleState,
  SessionView,
  TranscriptItem,
} from '../src/state/types.js';

type SessionEventType = SessionEvent['type'];
type SessionEventOf<T extends SessionEventType> = Extract<SessionEvent, { type: T }>;

/** A session event's own fields; `task_id` defaults to the script's task, `at` to its clock. */
export type EventFields<T extends SessionEventType> = Omit<
  SessionEventOf<T>,
  'type' | 'session_id' | 'seq' | 'at' | 'task_id'
> & { task_id?: string; at?: string };

/** Parses like a client would, and refuses fields the schema does not know (zod drops them). */
function strictParse<E>(schema: { parse(value: unknown): unknown }, value: Record<string, unknown>): E {
  const parsed = schema.parse(value) as Record<string, unknown>;
  for (const key of Object.keys(value)) {
    if (value[key] !== undefined && !(key in parsed)) {
      throw new Error(`fixture field ${key} is not part of the ${String(value.type)} event`);
    }
  }
  return parsed as E;
}

export const startTime = Date.parse('2025-03-01T09:00:00.000Z');

/** One session's events as its server would number them: seq 1, 2, … and a clock 10 ms apart. */
export class SessionScript {
  seq = 0;
  clock = startTime;
  task = 'task-1';

  constructor(readonly id: string) {}

  event<T extends SessionEventType>(type: T, fields: EventFields<T>): SessionEventOf<T> {
    this.seq += 1;
    this.clock += 10;
    return strictParse<SessionEventOf<T>>(sessionEventSchema, {
      type,
      session_id: this.id,
      seq: this.seq,
      at: new Date(this.clock).toISOString(),
      task_id: this.task,
      ...fields,
    });
  }

  /** The events of `task_started` … `state: running` for a prompt (as the runtime appends them). */
  start(prompt: string): SessionEvent[] {
    this.task = `task-${this.seq + 1}`;
    return [
      this.event('task_started', { content: prompt }),
      this.event('state', { state: 'running' }),
    ];
  }

  /** A model turn that answers with text, streamed in `chunks`. */
  reply(turn: number, chunks: string[], completed = chunks.join('')): SessionEvent[] {
    return [
      this.event('thinking', { turn }),
      ...chunks.map((content) => this.event('text_delta', { content })),
      this.event('text_completed', { content: completed }),
    ];
  }

  /** The end of the task: `task_completed`, then `state: idle` (no task). */
  complete(content: string): SessionEvent[] {
    const done = this.event('task_completed', { content });
    this.seq += 1;
    this.clock += 10;
    const idle = strictParse<SessionEvent>(sessionEventSchema, {
      type: 'state',
      session_id: this.id,
      seq: this.seq,
      at: new Date(this.clock).toISOString(),
      state: 'idle',
    });
    return [done, idle];
  }

  elicitationRequest(
    requestId: string,
    fields: Partial<EventFields<'elicitation_request'>> = {},
  ): ServerEventOf<'elicitation_request'> {
    return this.event('elicitation_request', {
      request_id: requestId,
      server: 'sdk',
      message: 'Who are you?',
      requested_schema: {
        type: 'object',
        properties: { name: { type: 'string', title: 'Your name', minLength: 2 } },
        required: ['name'],
      },
      ...fields,
    });
  }

  approvalRequest(
    requestId: string,
    fields: Partial<EventFields<'approval_request'>> = {},
  ): ServerEventOf<'approval_request'> {
    return this.event('approval_request', {
      request_id: requestId,
      tool_name: 'write_file',
      risk: 'mutating',
      reason: 'write_file changes files in the workspace',
      arguments: JSON.stringify({ path: 'notes.txt', content: 'hello\n' }),
      ...fields,
    });
  }
}

export function welcome(
  sessions: ServerEventOf<'welcome'>['sessions'] = [],
): ServerEventOf<'welcome'> {
  return strictParse(connectionEventSchema, {
    type: 'welcome',
    protocol: 1,
    server: { name: 'claw-server', version: '0.1.0' },
    sessions,
  });
}

export function sessionOpened(
  sessionId: string,
  fields: Partial<Omit<ServerEventOf<'session_opened'>, 'type' | 'session_id'>> = {},
): ServerEventOf<'session_opened'> {
  return strictParse(connectionEventSchema, {
    type: 'session_opened',
    session_id: sessionId,
    state: 'idle',
    last_seq: 0,
    pending_approvals: [],
    role: 'controller',
    workdir: '/home/dev/project',
    ...fields,
  });
}

export function history(
  sessionId: string,
  seq: number,
  messages: WireMessage[] = [],
  compaction?: ServerEventOf<'history'>['compaction'],
): ServerEventOf<'history'> {
  return strictParse(connectionEventSchema, {
    type: 'history',
    session_id: sessionId,
    seq,
    messages,
    ...(compaction === undefined ? {} : { compaction }),
  });
}

export function errorEvent(
  fields: Omit<ServerEventOf<'error'>, 'type'>,
): ServerEventOf<'error'> {
  return strictParse(connectionEventSchema, { type: 'error', ...fields });
}

/** Applies server events in order, as the page receives them. */
export function receive(state: ConsoleState, ...events: ServerEvent[]): ConsoleState {
  return events.reduce(
    (current, event) => reduce(current, { type: 'server_event', event, receivedAt: startTime }),
    state,
  );
}

export function view(state: ConsoleState, id: string): SessionView {
  const found = state.sessions[id];
  if (found === undefined) throw new Error(`no view of ${id}`);
  return found;
}

/** What a transcript shows, item by item, in a form that reads in a failing assertion. */
export function shown(items: readonly TranscriptItem[]): string[] {
  return items.map((item) => {
    switch (item.kind) {
      case 'user':
        return `user(${item.status}): ${item.text}`;
      case 'assistant':
        return `assistant${item.streaming ? '…' : ''}: ${item.text}`;
      case 'thinking':
        return `thinking${item.streaming ? '…' : ''}: ${item.text}`;
      case 'tool':
        return `tool ${item.name}${item.result ? ` → ${item.result.isError ? 'error' : 'ok'}` : ''}`;
      case 'approval':
        return `approval ${item.requestId}${item.resolution ? `: ${item.resolution.decision} by ${item.resolution.by}` : ''}`;
      case 'elicitation':
        return `input ${item.requestId} from ${item.server}` +
          (item.resolution ? `: ${item.resolution.action} by ${item.resolution.by}` : '') +
          (item.answering ? ` [sent ${item.answering}]` : '') +
          (item.error === undefined ? '' : ` [error: ${item.error}]`);
      case 'notice':
        return `notice(${item.tone}): ${item.text}`;
      case 'compaction':
        return `compaction: ${compactionText(item)}` +
          (item.summary === undefined ? '' : ` [summary: ${item.summary}]`) +
          (item.error === undefined ? '' : ` [error: ${item.error}]`);
    }
  });
}

export function cards(state: ConsoleState, id: string): ApprovalItem[] {
  return view(state, id).items.filter((item): item is ApprovalItem => item.kind === 'approval');
}

/** A connected page that asked for a new session and got `id` (opened, then its empty history). */
export function withFreshSession(id: string, state = receive(initialState(), welcome())): ConsoleState {
  const asked = reduce(state, { type: 'new_session_requested' });
  return receive(asked, sessionOpened(id), history(id, 0));
}

/** The page sends a prompt and the server starts it. */
export function prompted(state: ConsoleState, script: SessionScript, content: string): ConsoleState {
  const sent = reduce(state, { type: 'prompt_sent', sessionId: script.id, content });
  return receive(sent, ...script.start(content));
}
