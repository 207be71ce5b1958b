import {
  abortReason,
  causeChain,
  errorMessage,
  raceAbort,
  type TextFileAccess,
  type TextFileCallOptions,
  type ToolResult,
} from '@claw/core';
import { fileSystemError, hardLinkedFileError, statIfExists } from './files.js';

// The file tools' side of `ToolContext.files` (ACP-4): which of its calls a tool may use, what the
// local file system must say first, and how its answers and failures become results.

/** A `TextFileAccess` that reads. */
export type TextReader = TextFileAccess & {
  readTextFile(path: string, options: TextFileCallOptions): Promise<string>;
};

/** A `TextFileAccess` that writes. */
export type TextWriter = TextFileAccess & {
  writeTextFile(path: string, content: string, options: TextFileCallOptions): Promise<void>;
};

export function readerOf(access: TextFileAccess | undefined): TextReader | undefined {
  return access?.readTextFile === undefined ? undefined : (access as TextReader);
}

export function writerOf(access: TextFileAccess | undefined): TextWriter | undefined {
  return access?.writeTextFile === undefined ? undefined : (access as TextWriter);
}

/**
 * Both, or nothing: an edit read from one version of a file and written over another (a buffer
 * read, the disk written) would lose whichever it did not read.
 */
export function editorOf(
  access: TextFileAccess | undefined,
): (TextReader & TextWriter) | undefined {
  const reader = readerOf(access);
  return reader === undefined || writerOf(reader) === undefined
    ? undefined
    : (reader as TextReader & TextWriter);
}

/** A checked path on its way to a `TextFileAccess`. */
export interface AccessTarget {
  /** The lexical absolute path, checked to lie in the workspace: what the access is given. */
  absolutePath: string;
  /** The path as the model gave it, for the errors of the checks. */
  path: string;
  /** The workspace-relative path, for results. */
  shown: string;
}

/** The answers a tool gives when the local entry at a path is not a file it can use. */
export interface LocalRefusals {
  directory: ToolResult;
  notRegular: ToolResult;
}

/**
 * Looks at what the local file system holds at the path before the access is asked about it, so
 * that it is never asked to use a folder, a device or a pipe, or a file hard-linked from
 * elsewhere (a hard link can lead outside the workspace; an editor writing in place would write
 * there). Nothing there is fine: the access may hold an unsaved buffer for it, or create it.
 *
 * @returns whether a file exists there, or the refusal to give.
 * @throws UnsafeFileError for a file with more than one hard link, and a `ClawError`
 *   (`tool_file_error`) when the path cannot be inspected.
 */
export async function checkLocalEntry(
  target: AccessTarget,
  refusals: LocalRefusals,
): Promise<{ exists: boolean } | ToolResult> {
  let info;
  try {
    info = await statIfExists(target.absolutePath);
  } catch (error) {
    throw fileSystemError('inspect', target.shown, error);
  }
  if (info === undefined) return { exists: false };
  if (info.isDirectory()) return refusals.directory;
  if (!info.isFile()) return refusals.notRegular;
  if (info.nlink > 1) throw hardLinkedFileError(target.path, info.nlink);
  return { exists: true };
}

/**
 * The file's text through the access, or `notFound` when it says there is no such file, or an
 * error result naming the file for any other failure. Returns as soon as the signal aborts, even
 * when the access does not listen to it.
 *
 * @throws the signal's reason when aborted.
 */
export async function readThrough(
  access: TextReader,
  target: AccessTarget & { notFound: ToolResult },
  signal: AbortSignal,
): Promise<string | ToolResult> {
  let text: unknown;
  try {
    text = await raceAbort(access.readTextFile(target.absolutePath, { signal }), signal);
  } catch (error) {
    if (signal.aborted) throw abortReason(signal);
    if (isFileNotFound(error)) return target.notFound;
    return accessFailure('read', access, target, errorMessage(error));
  }
  if (typeof text !== 'string') {
    return accessFailure('read', access, target, 'it gave no text');
  }
  return text;
}

/**
 * Writes the whole text through the access; an error result naming the file when it fails,
 * `undefined` when it succeeded. Returns as soon as the signal aborts, even when the access does
 * not listen to it.
 *
 * @throws the signal's reason when aborted.
 */
export async function writeThrough(
  access: TextWriter,
  target: AccessTarget,
  content: string,
  signal: AbortSignal,
): Promise<ToolResult | undefined> {
  try {
    await raceAbort(access.writeTextFile(target.absolutePath, content, { signal }), signal);
    return undefined;
  } catch (error) {
    if (signal.aborted) throw abortReason(signal);
    return accessFailure('write', access, target, errorMessage(error));
  }
}

/** True when anything in the error's cause chain has the `code` `file_not_found`. */
function isFileNotFound(error: unknown): boolean {
  for (const current of causeChain(error)) {
    const code = (current as { code?: unknown } | null | undefined)?.code;
    if (code === 'file_not_found') return true;
  }
  return false;
}

function accessFailure(
  action: 'read' | 'write',
  access: TextFileAccess,
  target: AccessTarget,
  reason: string,
): ToolResult {
  // Results show workspace paths; the access was given the absolute one and may repeat it.
  const said = reason.replaceAll(target.absolutePath, target.shown);
  return {
    content: `could not ${action} ${target.shown} through ${access.name}: ${said}`,
    isError: true,
  };
}
