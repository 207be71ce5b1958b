export {
  InvalidPathError,
  PathOutsideWorkspaceError,
  SandboxError,
  SymlinkResolutionError,
  type SandboxErrorCode,
} from './errors.js';
export { resolveWithinWorkspace } from './resolve.js';
export { checkDestructiveCommand, isDestructiveCommand } from './destructive.js';
export { checkWorkspaceEscape, commandEscapesWorkspace } from './escape.js';
