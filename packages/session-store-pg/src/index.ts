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
  changesChannel,
  defaultLeaseMs,
  defaultRenewEveryMs,
  type PgSessionLease,
  type PgSessionLogOptions,
} from './pg-session-log.js';
export { PgSessions, WorkspaceUnavailableError } from './pg-sessions.js';
