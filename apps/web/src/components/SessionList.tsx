import { listStateText, sessionTitleText } from '../state/selectors.js';
import type { ConsoleState } from '../state/types.js';
import { useController } from './controller-context.js';

/**
 * Every session the page knows (the server's and its own), with its live state; below them, the
 * stored sessions the server cannot read, with why (they cannot be opened).
 */
export function SessionList({ state }: { state: ConsoleState }) {
  const controller = useController();
  const connected = state.connection === 'connected';
  return (
    <nav className="sidebar" aria-label="Session list">
      <h2 className="sidebar-title">Sessions</h2>
      {state.order.length === 0 ? <p className="muted">No sessions yet.</p> : null}
      <ul role="list" aria-label="Sessions" className="session-list">
        {state.order.map((id) => {
          const view = state.sessions[id];
          if (view === undefined) return null;
          const stateText = listStateText(state.connection, view);
          const title = sessionTitleText(view);
          const open = view.status !== 'closed';
          return (
            <li key={id} className={`session-item${open ? ' is-open' : ''}`}>
              <span className="session-id">{id}</span>
              {title === undefined ? null : (
                <span className="session-title" title={title}>{title}</span>
              )}
              <span className={`state state-${stateText.replace(' ', '-')}`}>{stateText}</span>
              {open ? (
                <button
                  type="button"
                  className="small"
                  aria-label={`Close ${id}`}
                  onClick={() => controller.closeSession(id)}
                >
                  Close
                </button>
              ) : (
                <button
                  type="button"
                  className="small"
                  aria-label={`Open ${id}`}
                  disabled={!connected}
                  onClick={() => controller.openSession(id)}
                >
                  Open
                </button>
              )}
            </li>
          );
        })}
      </ul>
      {state.unreadable.length === 0 ? null : (
        <section className="unreadable" aria-label="Sessions that cannot be read">
          <h3 className="sidebar-title">Cannot be read</h3>
          <ul role="list" className="session-list">
            {state.unreadable.map((session) => (
              <li key={session.session_id} className="session-item unreadable-item">
                <span className="session-id">{session.session_id}</span>
                <span className="unreadable-reason">{session.reason}</span>
              </li>
            ))}
          </ul>
        </section>
      )}
    </nav>
  );
}
