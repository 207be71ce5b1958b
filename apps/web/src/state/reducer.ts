// The console's reducer: server events and local actions in, the next state out (pure).
import { isSessionEndCode, type ServerEvent, type ServerEventOf } from '@claw/channel/protocol';
import {
  applyHistory,
  applyOpened,
  applySessionEvent,
  applyToolProgress,
  emptySession,
  updateApproval,
  updateElicitation,
} from './session.js';
import type { Action, ConsoleState, SessionView, TranscriptItem } from './types.js';

export function initialState(restored: SessionView[] = []): ConsoleState {
  const sessions: Record<string, SessionView> = {};
  for (const view of restored) sessions[view.id] = view;
  const ids = restored.map((view) => view.id);
  return {
    connection: 'connecting',
    sessions,
    order: ids,
    panels: ids.filter((id) => sessions[id]?.status !== 'closed'),
    pendingNew: 0,
    localCounter: 0,
    unreadable: [],
  };
}

export function reduce(state: ConsoleState, action: Action): ConsoleState {
  switch (action.type) {
    case 'server_event':
      return reduceEvent(state, action.event, action.receivedAt);
    case 'connection':
      return connectionChanged(state, action.status, action.detail);
    case 'new_session_requested':
      return { ...state, pendingNew: state.pendingNew + 1 };
    case 'open_requested': {
      const view = state.sessions[action.sessionId] ?? emptySession(action.sessionId);
      const next = withSession(state, {
        ...view,
        status: 'opening',
        resync: false,
        // Without a cursor the server sends the history, which replaces the transcript.
        synced: action.after !== undefined && view.synced,
      });
      return showPanel(next, action.sessionId);
    }
    case 'close_requested':
      return closeSession(state, action.sessionId);
    case 'prompt_sent': {
      const view = state.sessions[action.sessionId];
      if (view === undefined || view.status === 'closed') return state;
      const key = `local${state.localCounter + 1}`;
      const item = { kind: 'user', key, text: action.content, status: 'pending' } as const;
      return {
        ...withSession(state, { ...view, items: [...view.items, item] }),
        localCounter: state.localCounter + 1,
      };
    }
    case 'approval_answered':
      return mapSession(state, action.sessionId, (view) =>
        updateApproval(view, action.requestId, (card) => ({
          ...card,
          answering: action.decision,
          error: undefined,
        })),
      );
    case 'elicitation_answered':
      return mapSession(state, action.sessionId, (view) =>
        updateElicitation(view, action.requestId, (card) => ({
          ...card,
          answering: action.action,
          error: undefined,
        })),
      );
    case 'listing':
      return { ...applyListing(state, action.sessions), unreadable: action.unreadable };
    case 'dismiss_notice':
      return { ...state, notice: undefined };
  }
}

function reduceEvent(state: ConsoleState, event: ServerEvent, receivedAt: number): ConsoleState {
  switch (event.type) {
    case 'welcome':
      return {
        ...applyListing(state, event.sessions),
        unreadable: event.unreadable_sessions ?? [],
        server: event.server,
        connection: 'connected',
        connectionDetail: undefined,
      };
    case 'session_opened':
      return sessionOpened(state, event);
    case 'history':
      return mapOpen(state, event.session_id, (view) => applyHistory(view, event));
    case 'session_closed':
      return closeSession(state, event.session_id);
    case 'error':
      return errorEvent(state, event);
    case 'server_stopping':
      return { ...state, connectionDetail: 'the server is stopping' };
    case 'pong':
      return state;
    case 'tool_progress':
      return mapOpen(state, event.session_id, (view) => applyToolProgress(view, event));
    case 'task_started':
    case 'thinking':
    case 'thinking_delta':
    case 'text_delta':
    case 'text_completed':
    case 'tool_call':
    case 'tool_result':
    case 'approval_request':
    case 'approval_resolved':
    case 'elicitation_request':
    case 'elicitation_resolved':
    case 'state':
    case 'model_retry':
    case 'context_compacted':
    case 'usage':
    case 'task_completed':
    case 'task_canceled':
    case 'task_failed':
      // A session event: only sessions this page has open take it (their own events only).
      return mapOpen(state, event.session_id, (view) =>
        applySessionEvent(view, event, receivedAt),
      );
  }
}

function withSession(state: ConsoleState, view: SessionView): ConsoleState {
  const known = state.order.includes(view.id);
  return {
    ...state,
    sessions: { ...state.sessions, [view.id]: view },
    order: known ? state.order : [view.id, ...state.order],
  };
}

function mapSession(
  state: ConsoleState,
  id: string,
  change: (view: SessionView) => SessionView,
): ConsoleState {
  const view = state.sessions[id];
  if (view === undefined) return state;
  const next = change(view);
  return next === view ? state : withSession(state, next);
}

/** Like mapSession, for sessions the page has open (or is opening) only. */
function mapOpen(
  state: ConsoleState,
  id: string,
  change: (view: SessionView) => SessionView,
): ConsoleState {
  const view = state.sessions[id];
  if (view === undefined || view.status === 'closed') return state;
  return mapSession(state, id, change);
}

function showPanel(state: ConsoleState, id: string): ConsoleState {
  return state.panels.includes(id) ? state : { ...state, panels: [...state.panels, id] };
}

function closeSession(state: ConsoleState, id: string): ConsoleState {
  const view = state.sessions[id];
  if (view === undefined) return state;
  // The transcript goes: opening the session again sends its history.
  const closed: SessionView = {
    ...emptySession(id),
    listing: { ...view.listing, state: view.runState },
  };
  return {
    ...withSession(state, closed),
    panels: state.panels.filter((panel) => panel !== id),
  };
}

function sessionOpened(state: ConsoleState, event: ServerEventOf<'session_opened'>): ConsoleState {
  const existing = state.sessions[event.session_id];
  const attached = existing !== undefined && existing.status !== 'closed';
  // A session this page did not ask for by id is the answer to "New session".
  const fresh = !attached && state.pendingNew > 0;
  const view = existing ?? emptySession(event.session_id);
  const next = withSession(state, applyOpened(attached ? view : { ...view, synced: false }, event));
  return {
    ...showPanel(next, event.session_id),
    pendingNew: fresh ? state.pendingNew - 1 : state.pendingNew,
  };
}

function errorEvent(state: ConsoleState, event: ServerEventOf<'error'>): ConsoleState {
  if (event.code === 'unauthorized') {
    return { ...state, connection: 'unauthorized', connectionDetail: event.message };
  }
  const id = event.session_id;
  const view = id === undefined ? undefined : state.sessions[id];
  if (view === undefined || view.status === 'closed') {
    return { ...state, notice: id === undefined ? event.message : `${id}: ${event.message}` };
  }
  if (event.code === 'cursor_expired') {
    // The decision function answers with an `open` without cursor.
    return withSession(state, { ...view, resync: true, synced: false });
  }
  if (isSessionEndCode(event.code)) {
    // The session's events ended here (LIFE-2): said, and reopened afresh by the decision
    // function (another instance may serve it now).
    return {
      ...withSession(state, { ...view, resync: true, synced: false }),
      notice: `${view.id}: ${event.message} (opening it again)`,
    };
  }
  if (event.request_id !== undefined) {
    // A refused answer (to an approval or a request for input): said on its card, which may be
    // answered again while it waits.
    const refused = <T extends { answering?: unknown; error?: string }>(card: T): T => ({
      ...card,
      answering: undefined,
      error: event.message,
    });
    const requestId = event.request_id;
    return withSession(
      state,
      updateElicitation(updateApproval(view, requestId, refused), requestId, refused),
    );
  }
  if (view.status === 'opening' && view.items.length === 0) {
    // The session could not be opened: the panel goes, the reason stays on the page.
    return { ...closeSession(state, view.id), notice: `${view.id}: ${event.message}` };
  }
  return withSession(state, refusePrompt(view, event.code, event.message));
}

/**
 * A refused prompt or `/compact` (busy, not a controller) marks the page's waiting prompt as not
 * sent.
 */
function refusePrompt(view: SessionView, code: string, message: string): SessionView {
  // `not_supported`: a `/compact` of a session another instance runs.
  const promptCodes = ['session_busy', 'not_controller', 'invalid_message', 'not_supported'];
  const index = view.items.findIndex((item) => item.kind === 'user' && item.status === 'pending');
  const item = view.items[index];
  if (!promptCodes.includes(code) || item?.kind !== 'user') return { ...view, error: message };
  const items = view.items.slice();
  items[index] = { ...item, status: 'failed', error: message };
  return { ...view, items, error: undefined };
}

function applyListing(
  state: ConsoleState,
  sessions: ServerEventOf<'welcome'>['sessions'],
): ConsoleState {
  const next = { ...state.sessions };
  const added: string[] = [];
  for (const listed of sessions) {
    const view = next[listed.session_id] ?? emptySession(listed.session_id);
    if (state.sessions[listed.session_id] === undefined) added.push(listed.session_id);
    next[listed.session_id] = {
      ...view,
      listing: {
        state: listed.state,
        lastSeq: listed.last_seq,
        updatedAt: listed.updated_at,
        ...(listed.title === undefined ? {} : { title: listed.title }),
      },
    };
  }
  // Known sessions keep their place (the list does not jump); new ones come first.
  return { ...state, sessions: next, order: [...added, ...state.order] };
}

function connectionChanged(
  state: ConsoleState,
  status: ConsoleState['connection'],
  detail: string | undefined,
): ConsoleState {
  if (status === 'connected') return { ...state, connection: status, connectionDetail: detail };
  // Requests in flight died with the socket: a new session is asked for again by the user,
  // answers not yet resolved can be given again once the card is back.
  const sessions: Record<string, SessionView> = {};
  for (const [id, view] of Object.entries(state.sessions)) {
    const answered = (item: TranscriptItem): boolean =>
      (item.kind === 'approval' || item.kind === 'elicitation') && item.answering !== undefined;
    sessions[id] = view.items.some(answered)
      ? {
          ...view,
          items: view.items.map((item) =>
            answered(item) ? { ...item, answering: undefined } : item,
          ),
        }
      : view;
  }
  return { ...state, connection: status, connectionDetail: detail, sessions, pendingNew: 0 };
}
