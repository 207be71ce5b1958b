// What the page sends on its own after an event: the reopens of reconnects and of expired
// cursors. Pure, so the rules are tested without a socket.
import { isSessionEndCode, type ClientMessageOf, type ServerEvent } from '@claw/channel/protocol';
import type { ConsoleState, SessionView } from './types.js';

export type OpenMessage = ClientMessageOf<'open'>;

/** The `open` that resumes a session: after its last seq when the view is complete. */
export function reopenMessage(view: SessionView): OpenMessage {
  if (view.synced && !view.resync) {
    return { type: 'open', session_id: view.id, after: view.lastSeq };
  }
  return { type: 'open', session_id: view.id };
}

/**
 * The messages to send once `event` is applied (`state` is the state after it):
 * - `welcome` (a new connection): reopen every session the page shows, each with its cursor;
 * - `cursor_expired`, or an end of the session's events here (`lease_lost`, `store_unavailable`,
 *   `session_dropped`: another instance may serve it now): reopen that session without a cursor,
 *   so a `history` rebuilds it.
 */
export function followUps(state: ConsoleState, event: ServerEvent): OpenMessage[] {
  if (event.type === 'welcome') {
    return state.panels.flatMap((id) => {
      const view = state.sessions[id];
      return view === undefined ? [] : [reopenMessage(view)];
    });
  }
  const reopens = event.type === 'error' &&
    (event.code === 'cursor_expired' || isSessionEndCode(event.code));
  if (reopens && event.session_id) {
    const view = state.sessions[event.session_id];
    if (view === undefined || view.status === 'closed') return [];
    return [{ type: 'open', session_id: view.id }];
  }
  return [];
}
