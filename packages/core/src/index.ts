export {
  ClawError,
  ClawUserError,
  abortReason,
  causeChain,
  errnoCode,
  errorMessage,
  findError,
  findErrorWithCode,
  hasErrorCode,
  isUserError,
  throwIfAborted,
} from './errors.js';
export {
  AbortRace,
  SerialQueue,
  askOnce,
  closeIterator,
  linkAbortSignal,
  raceAbort,
  settlesWithin,
  sleep,
  type Eventual,
  type SetTimer,
} from './async.js';
export {
  addUsage,
  emptyUsage,
  findUnpairedCalls,
  maxTitleChars,
  messageSchema,
  promptTitle,
  sessionTitle,
  toolCallSchema,
  type AssistantMessage,
  type Message,
  type Role,
  type SystemMessage,
  type ToolCall,
  type ToolMessage,
  type UnpairedCalls,
  type Usage,
  type UserMessage,
} from './messages.js';
export {
  defineTool,
  riskLevels,
  TextFileNotFoundError,
  type ArgumentsCheck,
  type DefineToolOptions,
  type JsonSchema,
  type RiskLevel,
  type TextFileAccess,
  type TextFileCallOptions,
  type Tool,
  type ToolContext,
  type ToolDefinition,
  type ToolProgress,
  type ToolResult,
} from './tools.js';
export { CappedOutput, defaultMaxOutputBytes } from './capped-output.js';
export { KeyedThrottle } from './keyed-throttle.js';
export {
  SharedResources,
  type SharedLease,
  type SharedResourcesOptions,
} from './shared-resources.js';
export { Listeners } from './listeners.js';
export {
  prepareStateFolder,
  stateFolderIgnore,
  stateFolderName,
  userStateFolder,
  type StateFolderFileSystem,
} from './state-folder.js';
export {
  parseConfigJson,
  readOptionalConfig,
  type ConfigError,
  type ParseConfigOptions,
} from './config-file.js';
export { expandEnvVariables, type EnvVariableProblem } from './env-variables.js';
export type {
  CallOptions,
  FinishReason,
  ModelRequest,
  ModelResponse,
  ModelRetry,
  Provider,
  StreamEvent,
} from './provider.js';
export type {
  ModelRetryReport,
  Reporter,
  TaskToolProgress,
  ToolProgressReport,
  ToolResultReport,
  UsageReport,
} from './reporter.js';
export {
  approvalDecisions,
  approvalModes,
  elicitationActions,
  isTaskEndEvent,
  sessionRunStates,
  taskEndEventTypes,
  eventJson,
  forgetEventJson,
  type ApprovalDecision,
  type ApprovalMode,
  type BudgetsLeft,
  type ElicitationAction,
  type ElicitationAnswer,
  type ElicitationContent,
  type ElicitationSchema,
  type SessionEvent,
  type SessionEventBody,
  type SessionEventFields,
  type SessionEventOf,
  type SessionEventType,
  type SessionRunState,
  type TaskEndEventType,
  type WireUsage,
} from './events.js';
export {
  clawConfigSchema,
  modelPriceSchema,
  parseClawConfig,
  type ClawConfig,
  type ModelPrice,
} from './config.js';
export type { ApprovalGate, ApprovalRequest, GateCheckOptions, GateDecision } from './approval.js';
export { addCost, type AgentSession, type CostTotals, type ToolStartOptions } from './session.js';
export {
  compactedView,
  compactionReasons,
  prunedResultText,
  shiftCompaction,
  summaryMessage,
  type Compaction,
  type CompactionReason,
} from './compaction.js';
export {
  writeAll,
  writeFileAtomically,
  writeFlushedTemporary,
  type AtomicWriteFileSystem,
} from './atomic-write.js';
export { visible, withoutColourCodes } from './visible-text.js';
