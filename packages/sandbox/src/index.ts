export {
  InvalidPathError,
  PathOutsideWorkspaceError,
  ProtectedPathError,
  SandboxError,
  SymlinkResolutionError,
  UnsafeFileError,
  type SandboxErrorCode,
} from './errors.js';
export {
  isInside,
  locateWithinWorkspace,
  relativeInside,
  resolveWithinWorkspace,
  type WorkspaceLocation,
} from './resolve.js';
export { protectedPathReason, verifyOpenedFile } from './opened-file.js';
export {
  isLocalWorkspace,
  kernelFileSystems,
  localFileSystems,
  parseMountInfo,
  pooledFiles,
  workspaceFiles,
  type OpenFile,
  type WorkspaceFiles,
} from './workspace-files.js';
export { resolveWritableFile, type WritableFile } from './writable.js';
export {
  clawFolderEntry,
  clawSettingsFiles,
  clawStateReason,
  envTemplateSuffixes,
  isClawState,
  isEnvFile,
  resolveReadableFile,
  workspaceSpellings,
} from './secret-files.js';
export { WorkspaceDirectory } from './directory.js';
export { checkDestructiveCommand, isDestructiveCommand } from './destructive.js';
export { checkWorkspaceEscape, commandEscapesWorkspace } from './escape.js';
export { checkProtectedPaths } from './protected-command.js';
export {
  createCommandSpawner,
  plainCommandSpawner,
} from './isolation/spawner.js';
export { probeIsolation } from './isolation/probe.js';
export {
  bubblewrapInvocation,
  type BubblewrapInvocation,
} from './isolation/bubblewrap-spawner.js';
export {
  IsolationError,
  IsolationOptionsError,
  IsolationUnavailableError,
  type IsolationErrorCode,
} from './isolation/errors.js';
export type {
  CommandSpawner,
  IsolationMode,
  IsolationOptions,
  IsolationProbe,
} from './isolation/types.js';
