export { describeSessionLog, type SessionLogBackend } from './conformance.js';
export { emptySnapshot } from './snapshots.js';
