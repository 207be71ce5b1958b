export { RuntimeClosedError, SessionBusyError } from './errors.js';
export { Task, type TaskStatus } from './task.js';
export { Runtime, type RuntimeOptions } from './runtime.js';
export { RemoteRuntime, type RuntimeHandle } from './remote-runtime.js';
export { relayHandler } from './relay-handler.js';
export { RemoteSession, type RemoteSessionOptions } from './remote-session.js';
export {
  SessionLifecycle,
  type LoadedSession,
  type SessionLifecycleOptions,
} from './session-lifecycle.js';
/** The timers the lifecycle and the event log take (tests drive them); one type, @claw/core's. */
export type { SetTimer } from '@claw/core';
export {
  RuntimeFactory,
  type CreateRuntimeOptions,
  type PolicyContext,
  type RuntimeFactoryOptions,
} from './factory.js';
export { WorkspaceSessions, type SessionSource } from './workspaces.js';
export {
  CursorExpiredError,
  SessionEndedError,
  SessionEventLog,
  SubscriberLaggedError,
  sessionEndCodes,
  sessionEndOf,
  type SessionEndCode,
  type EventSource,
  defaultEventRetention,
  defaultSubscriberBound,
  type EventRetention,
  type SubscriberBound,
} from './event-log.js';
export {
  SessionHost,
  type SessionContext,
  type SessionHostOptions,
  type SessionView,
  type StartOptions,
  type TaskRunner,
} from './session-host.js';
/** Kept here too: it was first exported by this package. */
export type { TaskToolProgress } from '@claw/core';
export { SessionApprovals, type ApprovalResponder } from './session-approvals.js';
export {
  commandEnvironment,
  commandEnvironmentNames,
  configPath,
  defaultSettings,
  readConfigFile,
  readUserConfigFile,
  resolveSettings,
  type ApprovalMode,
  type IgnoredSetting,
  type ResolveSettingsOptions,
  type SettingOverrides,
  type Settings,
} from './settings.js';
export {
  flagParseError,
  numericSettingFlags,
  oneOfFlag,
  readSettingFlags,
  settingFlagOptions,
  settingFlagsHelp,
  stringFlag,
  wholeNumberFlag,
  type FlagValues,
} from './flags.js';
export { resolveWorkDir } from './workdir.js';
export {
  checkWorkspaceTrust,
  revokeWorkspaceTrust,
  trustRecordFile,
  trustWorkspace,
  trustedSettingsFiles,
  trustedWorkspaces,
  userClawFolder,
  type SettingsFileState,
  type TrustOptions,
  type TrustedSettingsFile,
  type WorkspaceTrust,
} from './trust.js';
export {
  describeWorkspaceSettings,
  untrustedNotice,
  type SettingsFileSummary,
} from './trust-notice.js';
export {
  collectEnvironment,
  describePlatform,
  findGitRepository,
  localDate,
  type CollectEnvironmentOptions,
  type GitRepository,
} from './environment.js';
export {
  formatBytes,
  instructionsFileName,
  loadInstructions,
  maxInstructionBytes,
  type InstructionFile,
  type LoadInstructionsOptions,
  type ProjectInstructions,
} from './instructions.js';
export { inspectMcpServers, type McpListing, type McpOptions } from './mcp.js';
/** The configuration of one MCP server (a session's own: `CreateRuntimeOptions.mcpServers`). */
export type { McpServerConfig } from '@claw/mcp';
export { type A2aOptions } from './a2a.js';
export { OtlpJsonFileExporter, createFileTracing, type Tracing } from './tracing.js';
