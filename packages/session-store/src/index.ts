export { MemorySession, type MemorySessionOptions } from './memory-session.js';
export {
  SessionFileError,
  SessionStoreError,
  type SessionFileErrorCode,
  type SessionStoreErrorCode,
} from './errors.js';
export type {
  GetOrCreateOptions,
  PersistentSession,
  SessionManager,
  SessionSummary,
} from './session-manager.js';
export {
  FileSessionManager,
  sessionFileExtension,
  sessionsFolder,
  type FileSessionManagerOptions,
} from './file-session-manager.js';
export { defaultCompactMinBytes } from './file-session-writer.js';
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
