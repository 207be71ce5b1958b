export {
  defaultConnectionSettings,
  type PgConnectionOptions,
  type PgConnectionSettings,
} from './connection.js';
export {
  PgSessionError,
  SessionLeaseLostError,
  type LeaseLossReason,
  type PgSessionErrorCode,
} from './errors.js';
export { LeaseKeeper, defaultSetTimer, type LeaseKeeperOptions, type SetTimer } from './lease-keeper.js';
export { migrate, migrations, type Migration } from './migrations.js';
export {
  PgSessionLog,
  defaultCloseTimeoutMs,
  defaultLeaseMs,
  keptAfterCompaction,
  defaultRenewEveryMs,
  type PgSessionLease,
  type PgSessionLogOpenOptions,
  type PgSessionLogOptions,
  type WorkspaceClaim,
} from './pg-session-log.js';
export { PgSessions } from './pg-sessions.js';
export { WorkspaceUnavailableError, workspaceIdOf, workspaceIdPath } from './workspace-id.js';
export { PgListener, type PgListenerOptions } from './listener.js';
export { changesChannel, inboxChannel, progressChannel, progressEveryMs } from './relay.js';
export {
  PgAuditLog,
  type PgAuditEntriesOptions,
  type PgAuditEntry,
  type PgAuditLogOptions,
} from './pg-audit-log.js';
export { PgGrantStore, type PgGrantStoreOptions } from './pg-grant-store.js';
