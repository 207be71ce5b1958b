export { describeSessionLog, type SessionLogBackend } from './conformance.js';
export {
  describeSessionRelay,
  recordingHandler,
  type RecordingHandlerOptions,
} from './relay-conformance.js';
export { emptySnapshot } from './snapshots.js';
export { FlushControlledLog } from './flush-controlled-log.js';
