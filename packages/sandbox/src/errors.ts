import { ClawError } from '@claw/core';

/** The codes a `SandboxError` carries. Safe to switch on. */
export type SandboxErrorCode =
  | 'invalid_path'
  | 'path_outside_workspace'
  | 'symlink_resolution_failed'
  | 'unsafe_file'
  | 'protected_path'
  | 'isolation_unavailable'
  | 'isolation_invalid_options'
  | 'isolation_invalid_command'
  | 'isolation_spawn_failed'
  | 'seccomp_assembly_failed';

/**
 * The root of every error `@claw/sandbox` throws. Catch this to handle any workspace-boundary
 * failure; switch on `code` (or use the subclasses) to tell them apart.
 */
export class SandboxError extends ClawError {
  declare readonly code: SandboxErrorCode;

  constructor(
    message: string,
    options: { code: SandboxErrorCode; cause?: unknown; userError?: boolean },
  ) {
    super(message, options);
  }
}

/**
 * The path or the workspace directory given is not usable at all: empty, blank, or containing a
 * NUL byte (`code` is `invalid_path`).
 */
export class InvalidPathError extends SandboxError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { code: 'invalid_path', cause: options.cause });
  }
}

/**
 * The path is absolute or, lexically or through a symlink, points outside the workspace
 * (`code` is `path_outside_workspace`).
 */
export class PathOutsideWorkspaceError extends SandboxError {
  /** The path as it was asked for. */
  readonly path: string;

  constructor(message: string, options: { path: string; cause?: unknown }) {
    super(message, { code: 'path_outside_workspace', cause: options.cause });
    this.path = options.path;
  }
}

/**
 * The symlinks on the way to a path could not be followed: permission denied, a symlink loop, a
 * file used as a folder, and the like (`code` is `symlink_resolution_failed`). The file-system
 * error is kept as `cause`. This is not a verdict that the path is outside the workspace; it
 * means the sandbox could not tell, so it refused.
 */
export class SymlinkResolutionError extends SandboxError {
  /** The path as it was asked for. */
  readonly path: string;

  constructor(message: string, options: { path: string; cause?: unknown }) {
    super(message, { code: 'symlink_resolution_failed', cause: options.cause });
    this.path = options.path;
  }
}

/**
 * The file is not one a tool may use: not a regular file, or hard-linked from elsewhere
 * (`code` is `unsafe_file`).
 */
export class UnsafeFileError extends SandboxError {
  readonly path: string;

  constructor(message: string, options: { path: string; cause?: unknown }) {
    super(message, { code: 'unsafe_file', cause: options.cause });
    this.path = options.path;
  }
}

/**
 * The path is inside the workspace but protected from tools: `.claw/`, `.git/hooks/`,
 * `.git/config` (`code` is `protected_path`).
 */
export class ProtectedPathError extends SandboxError {
  readonly path: string;
  /** Why the path is protected, e.g. "claw keeps grants and sessions in .claw/; …". */
  readonly reason: string;

  constructor(options: { path: string; reason: string; cause?: unknown }) {
    super(`${JSON.stringify(options.path)} is protected: ${options.reason}.`, {
      code: 'protected_path',
      cause: options.cause,
    });
    this.path = options.path;
    this.reason = options.reason;
  }
}
