import type { ConnectionStatus } from '../state/types.js';

/** The socket's state; its text is exactly the status (the e2e tests read it). */
export function ConnectionBadge({ status, detail }: { status: ConnectionStatus; detail?: string }) {
  return (
    <p className="connection">
      <span className="visually-hidden">Connection: </span>
      <span data-testid="connection-status" className={`badge badge-${status}`} role="status">
        {status}
      </span>
      {detail !== undefined && status !== 'connected' ? (
        <span className="connection-detail">{detail}</span>
      ) : null}
    </p>
  );
}
