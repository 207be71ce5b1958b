export { describeSessionLog, type SessionLogBackend } from './conformance.js';
export { describeSessionRelay } from './relay-conformance.js';
export { emptySnapshot } from './snapshots.js';
export { FlushControlledLog } from './flush-controlled-log.js';
