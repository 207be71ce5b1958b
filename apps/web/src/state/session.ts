// How one session's view changes with its own events (pure).
import {
  describeModelRetry,
  describeToolProgress,
  tallyTask,
  type ServerEventOf,
  type SessionEvent,
} from '@claw/channel/protocol';
import { isCompactCommand } from '../commands.js';
import { approvalItem, compactionItem, findOpenToolCall, itemsFromHistory } from './history.js';
import { waitingSinceAfter } from './model-wait.js';
import { taskSummaryText } from './tally.js';
import type {
  ApprovalItem,
  AssistantItem,
  ElicitationItem,
  SessionView,
  ThinkingItem,
  TranscriptItem,
} from './types.js';

export function emptySession(id: string): SessionView {
  return {
    id,
    listing: { state: 'idle', lastSeq: 0 },
    status: 'closed',
    synced: false,
    resync: false,
    lastSeq: 0,
    runState: 'idle',
    items: [],
    openPending: [],
    figures: {},
  };
}

/** The event's time in ms: its `at`, or when it arrived when `at` does not parse. */
function timeOf(event: { at: string }, receivedAt: number): number {
  const parsed = Date.parse(event.at);
  return Number.isNaN(parsed) ? receivedAt : parsed;
}

/** Applies one session event; replays (seq ≤ lastSeq) leave the view as it was. */
export function applySessionEvent(
  view: SessionView,
  event: SessionEvent,
  receivedAt: number,
): SessionView {
  if (event.seq <= view.lastSeq) return view;
  const next = {
    ...view,
    lastSeq: event.seq,
    listing: { ...view.listing, lastSeq: event.seq },
    tally: tallyTask(view.tally, event, timeOf(event, receivedAt)),
    waitingSince: waitingSinceAfter(view.waitingSince, event, receivedAt),
  };
  const key = `e${event.seq}`;
  switch (event.type) {
    case 'task_started':
      return {
        ...confirmPrompt(next, event.content, key),
        lastEnd: undefined,
        compactTaskId: isCompactCommand(event.content) ? event.task_id : undefined,
      };
    case 'thinking':
      // A new model call: its thinking, if any, gets a block of its own.
      return { ...endStream(endThinking(next, true)), turnStartedAt: timeOf(event, receivedAt) };
    case 'thinking_delta':
      return appendThinking(next, event.content, key, timeOf(event, receivedAt));
    case 'text_delta':
      return appendDelta(endThinking(next), event.content, key, timeOf(event, receivedAt));
    case 'text_completed':
      return completeText(endThinking(next), event.content, key);
    case 'tool_call':
      return push(endStream(endThinking(next)), {
        kind: 'tool',
        key,
        toolCallId: event.tool_call_id,
        name: event.tool_name,
        arguments: event.arguments,
      });
    case 'tool_result':
      return attachResult(next, event, key);
    case 'approval_request':
      return addApproval(next, event);
    case 'approval_resolved':
      return updateApproval(next, event.request_id, (card) => ({
        ...card,
        resolution: { decision: event.decision, by: event.by },
        answering: undefined,
        error: undefined,
      }));
    case 'elicitation_request':
      // An MCP server's request for input (MCP-7): a card with its form, answered from here or
      // by any other client that can (the first answer wins), else declined when its time is up.
      return addElicitation(next, event);
    case 'elicitation_resolved':
      return updateElicitation(next, event.request_id, (card) => ({
        ...card,
        resolution: { action: event.action, by: event.by },
        answering: undefined,
        error: undefined,
      }));
    case 'state':
      return { ...next, runState: event.state, listing: { ...next.listing, state: event.state } };
    case 'context_compacted':
      // It comes before the call it was made for (after a failed one, on overflow): what that
      // call writes goes below the divider.
      return push(endStream(endThinking(next, true)), compactionItem(event, key));
    case 'model_retry':
      // The call is made again: what it thinks then goes after this notice.
      return push(endStream(endThinking(next, true)), {
        kind: 'notice',
        key,
        tone: 'warning',
        text: sentence(describeModelRetry(event)),
      });
    case 'usage':
      return {
        ...next,
        figures: {
          ...next.figures,
          sessionTokens: event.session.total_tokens,
          sessionCachedTokens: event.session.cached_tokens,
          runTokens: event.run.total_tokens,
          sessionCostUsd: event.cost.session_usd,
          unpricedCalls: event.cost.unpriced_calls,
          budgetsLeft: event.budgets_left,
        },
      };
    case 'task_completed': {
      const ended = {
        ...endStream(endThinking(next, true)),
        lastEnd: 'completed' as const,
        turnStartedAt: undefined,
      };
      return withSummary(compactOutcome(ended, event, key), event, key, receivedAt);
    }
    case 'task_canceled': {
      const text = `Task canceled${event.reason ? `: ${event.reason}` : ''}`;
      return endTask(withSummary(next, event, key, receivedAt), 'canceled', text, key);
    }
    case 'task_failed': {
      const text = `Task failed: ${event.error} (${event.code})`;
      return endTask(withSummary(next, event, key, receivedAt), 'failed', text, key);
    }
  }
}

/** `text` as a sentence of the transcript's notices: its first letter a capital. */
function sentence(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * A running tool's progress (`tool_progress`, not a session event: it has no seq) goes on its
 * call, until the result; progress of a call that is not open here (ended, or never seen) is
 * dropped.
 */
export function applyToolProgress(
  view: SessionView,
  event: ServerEventOf<'tool_progress'>,
): SessionView {
  const index = findOpenToolCall(view.items, event.tool_call_id);
  const item = view.items[index];
  if (item?.kind !== 'tool' || item.result !== undefined) return view;
  return replaceItem(view, index, { ...item, progress: describeToolProgress(event) });
}

function push(view: SessionView, item: TranscriptItem): SessionView {
  return { ...view, items: [...view.items, item] };
}

function replaceItem(view: SessionView, index: number, item: TranscriptItem): SessionView {
  const items = view.items.slice();
  items[index] = item;
  return { ...view, items };
}

/**
 * The page's own prompt is confirmed by `task_started`; another client's prompt is added. The
 * server trims a prompt (the protocol's schema does), so the page's text is compared trimmed and
 * the server's text is kept.
 */
function confirmPrompt(view: SessionView, content: string, key: string): SessionView {
  const index = view.items.findIndex(
    (item) => item.kind === 'user' && item.status === 'pending' && item.text.trim() === content.trim(),
  );
  const item = view.items[index];
  if (item?.kind === 'user') {
    return replaceItem(view, index, { ...item, text: content, status: 'sent' });
  }
  return push(view, { kind: 'user', key, text: content, status: 'sent' });
}

/**
 * Time to first token: from the turn's `thinking` to its first delta, of the answer or of the
 * model's reasoning (a reasoning model's first tokens are its thinking; the model answered then).
 */
function timeFirstToken(view: SessionView, at: number): SessionView {
  if (view.turnStartedAt === undefined) return view;
  return {
    ...view,
    turnStartedAt: undefined,
    figures: { ...view.figures, ttftMs: Math.max(0, at - view.turnStartedAt) },
  };
}

function appendDelta(view: SessionView, text: string, key: string, at: number): SessionView {
  const timed = timeFirstToken(view, at);
  const index = streamingIndex(timed);
  const bubble = timed.items[index];
  if (bubble?.kind === 'assistant') {
    return replaceItem(timed, index, { ...bubble, text: bubble.text + text });
  }
  const created: AssistantItem = { kind: 'assistant', key, text, streaming: true };
  return { ...push(timed, created), streamingKey: key };
}

function completeText(view: SessionView, content: string, key: string): SessionView {
  const index = streamingIndex(view);
  const bubble = view.items[index];
  if (bubble?.kind === 'assistant') {
    // The completed text is authoritative (deltas may have been coalesced on the way).
    const done = replaceItem(view, index, { ...bubble, text: content, streaming: false });
    return { ...done, streamingKey: undefined };
  }
  if (content === '') return view;
  return push(view, { kind: 'assistant', key, text: content, streaming: false });
}

function streamingIndex(view: SessionView): number {
  return indexOfKey(view, view.streamingKey);
}

function indexOfKey(view: SessionView, key: string | undefined): number {
  if (key === undefined) return -1;
  // The item being streamed is nearly always one of the last.
  for (let index = view.items.length - 1; index >= 0; index -= 1) {
    if (view.items[index]?.key === key) return index;
  }
  return -1;
}

/**
 * A piece of the model's reasoning: it grows the current model call's thinking block, which
 * stands before the call's answer (a block begun after the answer began goes in before it).
 */
function appendThinking(view: SessionView, text: string, key: string, at: number): SessionView {
  if (text === '') return view;
  const timed = timeFirstToken(view, at);
  const index = indexOfKey(timed, timed.thinkingKey);
  const block = timed.items[index];
  if (block?.kind === 'thinking') {
    return replaceItem(timed, index, { ...block, text: block.text + text, streaming: true });
  }
  const created: ThinkingItem = { kind: 'thinking', key, text, streaming: true };
  const answer = streamingIndex(timed);
  const items = timed.items.slice();
  items.splice(answer === -1 ? items.length : answer, 0, created);
  return { ...timed, items, thinkingKey: key };
}

/**
 * The model stopped reasoning (its answer or a tool call came): the thinking block is done. It
 * stays the call's block (reasoning may resume within the call) unless `callEnded`.
 */
function endThinking(view: SessionView, callEnded = false): SessionView {
  const index = indexOfKey(view, view.thinkingKey);
  const block = view.items[index];
  const next = block?.kind === 'thinking' && block.streaming
    ? replaceItem(view, index, { ...block, streaming: false })
    : view;
  return callEnded && next.thinkingKey !== undefined ? { ...next, thinkingKey: undefined } : next;
}

/** Stops growing the current bubble (a tool call, a new turn or the task's end came). */
function endStream(view: SessionView): SessionView {
  const index = streamingIndex(view);
  const bubble = view.items[index];
  if (bubble?.kind !== 'assistant') return view.streamingKey === undefined ? view : { ...view, streamingKey: undefined };
  return { ...replaceItem(view, index, { ...bubble, streaming: false }), streamingKey: undefined };
}

function attachResult(
  view: SessionView,
  event: ServerEventOf<'tool_result'>,
  key: string,
): SessionView {
  const result = { text: event.result, isError: event.is_error };
  const index = findOpenToolCall(view.items, event.tool_call_id);
  const call = view.items[index];
  if (call?.kind === 'tool') return replaceItem(view, index, { ...call, result });
  return push(view, {
    kind: 'tool',
    key,
    toolCallId: event.tool_call_id,
    name: event.tool_name,
    arguments: '',
    result,
  });
}

function findApproval(view: SessionView, requestId: string): number {
  return view.items.findIndex((item) => item.kind === 'approval' && item.requestId === requestId);
}

/** One card per request id, however often the request is seen. */
function addApproval(view: SessionView, event: ServerEventOf<'approval_request'>): SessionView {
  if (findApproval(view, event.request_id) !== -1) return view;
  return push(endStream(endThinking(view)), approvalItem(event));
}

export function updateApproval(
  view: SessionView,
  requestId: string,
  change: (card: ApprovalItem) => ApprovalItem,
): SessionView {
  const index = findApproval(view, requestId);
  const card = view.items[index];
  return card?.kind === 'approval' ? replaceItem(view, index, change(card)) : view;
}

function findElicitation(view: SessionView, requestId: string): number {
  return view.items.findIndex((item) => item.kind === 'elicitation' && item.requestId === requestId);
}

/** One card per request for input, however often it is seen. */
function addElicitation(
  view: SessionView,
  event: ServerEventOf<'elicitation_request'>,
): SessionView {
  if (findElicitation(view, event.request_id) !== -1) return view;
  return push(endStream(endThinking(view)), {
    kind: 'elicitation',
    key: `input-${event.request_id}`,
    requestId: event.request_id,
    seq: event.seq,
    server: event.server,
    message: event.message,
    schema: event.requested_schema,
  });
}

export function updateElicitation(
  view: SessionView,
  requestId: string,
  change: (card: ElicitationItem) => ElicitationItem,
): SessionView {
  const index = findElicitation(view, requestId);
  const card = view.items[index];
  return card?.kind === 'elicitation' ? replaceItem(view, index, change(card)) : view;
}

/**
 * The task's end: the line that tells what it did goes into the transcript (when this page saw the
 * task start and it did something), and its tally is done with.
 */
function withSummary(
  view: SessionView,
  event: SessionEvent & { task_id: string },
  key: string,
  receivedAt: number,
): SessionView {
  const text = taskSummaryText(view.tally, event.task_id, timeOf(event, receivedAt));
  const done = { ...view, tally: undefined };
  return text === undefined ? done : push(done, { kind: 'notice', key: `${key}-summary`, tone: 'info', text });
}

/**
 * The end of a `/compact` this page saw start: a compaction has its divider, which says what was
 * done; without one the task's own words do (`nothing to compact: …`), or nothing would.
 */
function compactOutcome(
  view: SessionView,
  event: ServerEventOf<'task_completed'>,
  key: string,
): SessionView {
  if (view.compactTaskId === undefined) return view;
  const done = { ...view, compactTaskId: undefined };
  const compacted = view.tally?.taskId === event.task_id && view.tally.compactions > 0;
  if (view.compactTaskId !== event.task_id || compacted || event.content === '') return done;
  return push(done, { kind: 'notice', key: `${key}-outcome`, tone: 'info', text: sentence(event.content) });
}

function endTask(view: SessionView, end: 'canceled' | 'failed', text: string, key: string) {
  const ended = {
    ...endStream(endThinking(view, true)),
    lastEnd: end,
    turnStartedAt: undefined,
    compactTaskId: undefined,
  };
  return push(ended, { kind: 'notice', key, tone: end === 'failed' ? 'error' : 'info', text });
}

/**
 * `session_opened`: attached, with the session's state. Pending approvals the view should already
 * have (seq ≤ lastSeq) are added unless shown; later ones come with the replay, and without a
 * base the `history` that follows adds them.
 */
export function applyOpened(
  view: SessionView,
  event: ServerEventOf<'session_opened'>,
): SessionView {
  let next: SessionView = {
    ...view,
    status: 'open',
    role: event.role,
    workdir: event.workdir,
    // What the server says now: a session opened again may be given other files.
    instructions: event.instructions,
    runState: event.state,
    listing: { ...view.listing, state: event.state, lastSeq: event.last_seq },
    openPending: event.pending_approvals,
    openElicitations: event.pending_elicitations ?? [],
    error: undefined,
  };
  if (next.synced) {
    for (const request of event.pending_approvals) {
      if (request.seq <= next.lastSeq) next = addApproval(next, request);
    }
    for (const request of event.pending_elicitations ?? []) {
      if (request.seq <= next.lastSeq) next = addElicitation(next, request);
    }
  }
  return next;
}

/** `history`: the transcript rebuilt from the messages, the pending approvals after them. */
export function applyHistory(view: SessionView, event: ServerEventOf<'history'>): SessionView {
  let next: SessionView = {
    ...view,
    items: itemsFromHistory(event.messages, event.seq, event.compaction),
    lastSeq: event.seq,
    synced: true,
    resync: false,
    streamingKey: undefined,
    thinkingKey: undefined,
    turnStartedAt: undefined,
    lastEnd: undefined,
    // Rebuilt from messages: what the running task did before is not known here.
    tally: undefined,
    compactTaskId: undefined,
    waitingSince: undefined,
  };
  for (const request of view.openPending) next = addApproval(next, request);
  for (const request of view.openElicitations ?? []) next = addElicitation(next, request);
  return next;
}
