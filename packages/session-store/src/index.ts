export { MemorySession, type MemorySessionOptions } from './memory-session.js';
export {
  SessionLockedError,
  SessionLogError,
  SessionStoreError,
  type SessionLockHolder,
  type SessionLogErrorCode,
  type SessionStoreErrorCode,
} from './errors.js';
export { checkAppendSeqs, recordsToStore } from './session-log.js';
export type {
  AppendResult,
  LogRecord,
  SessionLog,
  SessionLogLock,
  SessionPage,
  SessionSnapshot,
  SessionSummary,
  StoredLog,
  UnreadableSession,
} from './session-log.js';
export type { OpenTask, SessionChange, RepairInsert } from './session-state.js';
export { newSessionSnapshot } from './session-state.js';
export type {
  GetOrCreateOptions,
  PersistentSession,
  SessionLease,
  SessionListOptions,
  SessionManager,
} from './session-manager.js';
export { SessionStore, type SessionStoreOptions } from './session-store.js';
export { summaryOf } from './summary.js';
export {
  SessionReplica,
  leaseLostCode,
  type OwnerInbox,
  type ProgressChannel,
  type RelayReply,
  type RelayRequest,
  type SessionOwner,
  type SessionRelay,
  type SessionReplication,
  type SharedSessionLog,
} from './session-relay.js';
export { MemoryRelay, type MemoryRelayOptions } from './memory-relay.js';
export {
  FileSessionLog,
  defaultCompactMinBytes,
  sessionFileExtension,
  sessionsFolder,
  type FileSessionLogOptions,
} from './file-session-log.js';
export { FileSessionManager, type FileSessionManagerOptions } from './file-session-manager.js';
export { MemorySessionLog } from './memory-session-log.js';
export {
  MemorySessionManager,
  type MemorySessionManagerOptions,
} from './memory-session-manager.js';
export {
  assertSessionId,
  assertWorkDir,
  isValidSessionId,
  maxSessionIdBytes,
} from './session-id.js';
export {
  describeRepair,
  interruptedObservation,
  repairHistory,
  toolCallIncompleteText,
  toolCallNeverStartedText,
  toolCallStartedText,
  toolCallUnrecordedText,
  type HistoryRepair,
  type InterruptedCallState,
  type RepairedCall,
  type ToolJournalView,
} from './repair.js';
export { sessionRecordVersion } from './records.js';
export {
  nodeSessionFileSystem,
  type SessionFileHandle,
  type SessionFileSystem,
} from './file-system.js';
