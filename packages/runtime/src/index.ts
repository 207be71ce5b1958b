export { RuntimeBusyError, RuntimeClosedError, UnknownRuntimeError } from './errors.js';
export { Task, type TaskStatus } from './task.js';
export { Runtime, type RuntimeOptions } from './runtime.js';
export { RuntimeManager } from './manager.js';
export {
  RuntimeFactory,
  type CreateRuntimeOptions,
  type RuntimeFactoryOptions,
  type SessionSource,
  WorkspaceSessions,
} from './factory.js';
export {
  commandEnvironment,
  commandEnvironmentNames,
  configPath,
  defaultSettings,
  readConfigFile,
  resolveSettings,
  type ApprovalMode,
  type ResolveSettingsOptions,
  type SettingOverrides,
  type Settings,
} from './settings.js';
export { OtlpJsonFileExporter, createFileTracing, type Tracing } from './tracing.js';
