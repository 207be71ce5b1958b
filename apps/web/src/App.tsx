import { useEffect, useMemo, useState, useSyncExternalStore } from 'react';
import { ConsoleController } from './console-controller.js';
import { ConnectionBadge } from './components/ConnectionBadge.js';
import { ControllerContext } from './components/controller-context.js';
import { SessionList } from './components/SessionList.js';
import { SessionPanel } from './components/SessionPanel.js';
import { TokenHelp } from './components/TokenHelp.js';
import { takeToken, tokenKey } from './token.js';

/** The console: the session list beside the open sessions, over one WebSocket (WEB-1). */
export function App() {
  const controller = useMemo(
    () => new ConsoleController({ storage: window.sessionStorage, location: window.location }),
    [],
  );
  const state = useSyncExternalStore(controller.subscribe, controller.getState);
  // The token leaves the address bar at once; a reload finds it in sessionStorage.
  const [token, setToken] = useState(() =>
    takeToken(window.location, window.sessionStorage, (url) =>
      window.history.replaceState(null, '', url),
    ),
  );

  useEffect(() => {
    controller.start(token);
    const online = () => controller.retryNow();
    const leaving = () => controller.flush();
    window.addEventListener('online', online);
    window.addEventListener('pagehide', leaving);
    return () => {
      window.removeEventListener('online', online);
      window.removeEventListener('pagehide', leaving);
    };
  }, [controller, token]);

  const connectWith = (given: string) => {
    window.sessionStorage.setItem(tokenKey, given);
    if (given === token) controller.start(given);
    else setToken(given);
  };
  const needsToken = token === undefined || state.connection === 'unauthorized';
  const connected = state.connection === 'connected';

  return (
    <ControllerContext.Provider value={controller}>
      <div className="console">
        <header className="topbar">
          <h1 className="title">claw console</h1>
          {state.server ? (
            <span className="muted server-name">{`${state.server.name} ${state.server.version}`}</span>
          ) : null}
          <ConnectionBadge
            status={state.connection}
            {...(state.connectionDetail === undefined ? {} : { detail: state.connectionDetail })}
          />
          {needsToken ? null : (
            <button
              type="button"
              className="primary"
              disabled={!connected}
              onClick={() => controller.newSession()}
            >
              New session
            </button>
          )}
        </header>
        {state.notice !== undefined ? (
          <div className="notice" role="status">
            <span>{state.notice}</span>
            <button type="button" className="small" aria-label="Dismiss the notice" onClick={() => controller.dismissNotice()}>
              Dismiss
            </button>
          </div>
        ) : null}
        {needsToken ? (
          <TokenHelp refused={state.connection === 'unauthorized'} onToken={connectWith} />
        ) : (
          <div className="workspace">
            <SessionList state={state} />
            <main className="panels" aria-label="Open sessions">
              {state.panels.length === 0 ? (
                <p className="empty muted">
                  {connected
                    ? 'No session open. Start one with "New session", or open one from the list.'
                    : 'Connecting to the server…'}
                </p>
              ) : null}
              {state.panels.map((id) => {
                const view = state.sessions[id];
                return view === undefined ? null : (
                  <SessionPanel key={id} view={view} connection={state.connection} />
                );
              })}
            </main>
          </div>
        )}
      </div>
    </ControllerContext.Provider>
  );
}
