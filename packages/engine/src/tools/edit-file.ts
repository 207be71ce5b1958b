import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { abortReason, defineTool, errnoCode, throwIfAborted, type ToolResult } from '@claw/core';
import { resolveWritableFile, verifyOpenedFile, type WritableFile } from '@claw/sandbox';
import { z } from 'zod';
import { fileSystemError, writeFileAtomic } from './files.js';
import { writeFailure } from './write-file.js';
import {
  checkLocalEntry,
  editorOf,
  readThrough,
  writeThrough,
  type AccessTarget,
  type TextReader,
} from './text-file-access.js';
import type { BuiltinTool } from './builtin-tool.js';

/** The arguments of `edit_file` (the schema the model sees): a path and a text to replace. */
export const editFileArguments = z.object({
  path: z.string().min(1).describe('File path relative to the workspace root.'),
  old_string: z
    .string()
    .min(1, 'old_string must not be empty; use write_file to create or replace a whole file')
    .describe('Exact text to replace, including whitespace and indentation.'),
  new_string: z.string().describe('Text to put in its place.'),
  replace_all: z
    .boolean()
    .optional()
    .describe('Replace every occurrence instead of requiring exactly one. Default false.'),
});

/** The parsed arguments of an `edit_file` call. */
export type EditFileArguments = z.output<typeof editFileArguments>;

const binaryProbeBytes = 8 * 1024;

/**
 * Creates the `edit_file` tool (TOOL-3, risk `mutating`): replaces `old_string` with `new_string`
 * in a workspace file. `old_string` must occur exactly once unless `replace_all` is true; no
 * match, several matches, an empty `old_string` or `old_string === new_string` give an error
 * result that says what to do. The file is written atomically. Result:
 * `replaced <n> occurrence(s) in <path>`.
 *
 * With a `ToolContext.files` that both reads and writes (an editor's, ACP-4), the text is read
 * and written through it instead (the same rules and messages apply), once the path has passed
 * the same checks (protected paths included) and the local entry, if any, is a regular file with
 * one link. One that only reads or only writes is not used: the edit would be read from one
 * version of the file and written over another. Its failures are error results naming the file.
 *
 * `execute` throws the errors of `resolveWithinWorkspace`, the signal's reason when aborted, and a
 * `ClawError` (`tool_file_error`) on unexpected I/O failures.
 */
export function createEditFileTool(): BuiltinTool<EditFileArguments> {
  // defineTool types execute as ToolResult | string; these tools always return a ToolResult.
  return defineTool({
    name: 'edit_file',
    description:
      'Replace text in a workspace file. `path` is relative to the workspace root. `old_string` ' +
      'must match the file exactly (whitespace and indentation included) and occur exactly once, ' +
      'unless `replace_all` is true; include enough surrounding lines to make it unique. ' +
      'Read the file first. To create a file use write_file.',
    risk: 'mutating',
    schema: editFileArguments,
    async execute(args, { signal, workDir, files: access }): Promise<ToolResult> {
      throwIfAborted(signal);
      const file = await resolveWritableFile(workDir, args.path);
      const shown = file.relative;
      if (args.old_string === '') {
        return {
          content: 'old_string must not be empty; use write_file to create or replace a whole file',
          isError: true,
        };
      }
      if (args.old_string === args.new_string) {
        return {
          content: 'old_string and new_string are identical; there is nothing to change',
          isError: true,
        };
      }

      const editor = editorOf(access);
      const target: AccessTarget = { absolutePath: file.absolutePath, path: args.path, shown };
      const local = { ...file, workDir, path: args.path };
      const original = editor === undefined
        ? await loadLocal(local, signal)
        : await loadThrough(editor, target, signal);
      if (typeof original !== 'string') return original;

      const count = countOccurrences(original, args.old_string);
      if (count === 0) {
        return {
          content:
            `old_string was not found in ${shown}; read the file first and copy the text ` +
            'exactly (whitespace, indentation and line endings must match)',
          isError: true,
        };
      }
      if (count > 1 && args.replace_all !== true) {
        return {
          content:
            `old_string occurs ${count} times in ${shown}; add surrounding context to make it ` +
            'unique, or set replace_all to true to replace every occurrence',
          isError: true,
        };
      }

      // Plain slicing, not String.prototype.replace: `$&` and friends in new_string stay literal.
      const updated = args.replace_all === true
        ? original.split(args.old_string).join(args.new_string)
        : replaceOnce(original, args.old_string, args.new_string);
      throwIfAborted(signal);
      const failure = editor === undefined
        ? await saveLocal(local, updated, signal)
        : await writeThrough(editor, target, updated, signal);
      if (failure !== undefined) return failure;
      return { content: `replaced ${count} ${count === 1 ? 'occurrence' : 'occurrences'} in ${shown}` };
    },
  }) as BuiltinTool<EditFileArguments>;
}

/**
 * The file's text, or an error result when it is missing, a directory, binary or not UTF-8. What
 * is read is what was opened, checked to be a regular file inside the workspace with one link.
 */
async function loadText(
  source: { workDir: string; path: string; file: string; shown: string; realRoot: string },
  signal: AbortSignal,
): Promise<string | ToolResult> {
  const { shown } = source;
  let handle;
  try {
    handle = await open(source.file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return notFoundResult(shown);
    if (code === 'EISDIR') return { content: `${shown} is a directory, not a file`, isError: true };
    throw error;
  }
  let bytes: Buffer;
  try {
    const info = await verifyOpenedFile(handle, {
      workDir: source.workDir,
      path: source.path,
      allowDirectory: true,
      realRoot: source.realRoot,
    });
    if (info.isDirectory()) {
      return { content: `${shown} is a directory, not a file`, isError: true };
    }
    bytes = await handle.readFile({ signal });
  } finally {
    await handle.close();
  }
  if (bytes.subarray(0, binaryProbeBytes).includes(0)) return binaryResult(shown);
  try {
    // ignoreBOM keeps a byte-order mark in the text, so that writing it back preserves it.
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return {
      content: `${shown} is not valid UTF-8 text; edit_file would corrupt it, so it was left unchanged`,
      isError: true,
    };
  }
}

/** `loadText` of the file `resolveWritableFile` gave; unexpected I/O failures thrown. */
async function loadLocal(
  file: WritableFile & { workDir: string; path: string },
  signal: AbortSignal,
): Promise<string | ToolResult> {
  const shown = file.relative;
  try {
    const { workDir, path, absolutePath, realRoot } = file;
    return await loadText({ workDir, path, file: absolutePath, shown, realRoot }, signal);
  } catch (error) {
    if (signal.aborted) throw abortReason(signal);
    if (errnoCode(error) === undefined) throw error;
    throw fileSystemError('read', shown, error);
  }
}

/** Writes the file atomically; the failures the model can act on as a result. */
async function saveLocal(
  file: WritableFile & { workDir: string; path: string },
  content: string,
  signal: AbortSignal,
): Promise<ToolResult | undefined> {
  try {
    await writeFileAtomic(file, content, signal);
    return undefined;
  } catch (error) {
    if (signal.aborted) throw abortReason(signal);
    if (errnoCode(error) === undefined) throw error;
    return writeFailure(error, file.relative);
  }
}

/**
 * The file's text through a `TextFileAccess`, or an error result: the local entry checked first
 * (as `loadText` checks what it opens), then the same answers for a missing or binary file.
 */
async function loadThrough(
  reader: TextReader,
  target: AccessTarget,
  signal: AbortSignal,
): Promise<string | ToolResult> {
  const { shown } = target;
  const local = await checkLocalEntry(target, {
    directory: { content: `${shown} is a directory, not a file`, isError: true },
    notRegular: { content: `${shown} is not a regular file; edit_file only edits files`, isError: true },
  });
  if ('content' in local) return local;
  throwIfAborted(signal);
  const text = await readThrough(reader, { ...target, notFound: notFoundResult(shown) }, signal);
  if (typeof text !== 'string') return text;
  if (text.slice(0, binaryProbeBytes).includes('\u0000')) return binaryResult(shown);
  return text;
}

function notFoundResult(shown: string): ToolResult {
  return { content: `file not found: ${shown}; to create a file use write_file`, isError: true };
}

function binaryResult(shown: string): ToolResult {
  return {
    content: `${shown} is a binary file (it contains NUL bytes); edit_file only edits text`,
    isError: true,
  };
}

/** Non-overlapping occurrences, the same ones `split` replaces. */
function countOccurrences(text: string, search: string): number {
  let count = 0;
  let index = text.indexOf(search);
  while (index !== -1) {
    count += 1;
    index = text.indexOf(search, index + search.length);
  }
  return count;
}

function replaceOnce(text: string, search: string, replacement: string): string {
  const index = text.indexOf(search);
  return text.slice(0, index) + replacement + text.slice(index + search.length);
}
