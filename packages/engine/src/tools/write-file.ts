import { abortReason, defineTool, errnoCode, throwIfAborted, type ToolResult } from '@claw/core';
import { resolveWritableFile } from '@claw/sandbox';
import { z } from 'zod';
import {
  fileSystemError,
  statIfExists,
  writeFileAtomic,
} from './files.js';
import { checkLocalEntry, writeThrough, writerOf, type TextWriter } from './text-file-access.js';
import type { BuiltinTool } from './builtin-tool.js';

/** The arguments of `write_file` (the schema the model sees): a path and the whole new content. */
export const writeFileArguments = z.object({
  path: z.string().min(1).describe('File path relative to the workspace root.'),
  content: z.string().describe('The complete new content of the file.'),
});

/** The parsed arguments of a `write_file` call. */
export type WriteFileArguments = z.output<typeof writeFileArguments>;

/**
 * Creates the `write_file` tool (TOOL-2, risk `mutating`): writes the whole content of a workspace
 * file, creating missing parent folders, atomically (temporary file + rename). Result:
 * `wrote <n> bytes to <path> (created)` or `(overwritten)`.
 *
 * With a writing `ToolContext.files` (an editor's, ACP-4), the content is written through it
 * instead, once the path has passed the same checks (protected paths included) and the local
 * entry, if any, is a regular file with one link. The file is given by its absolute path; creating
 * missing parent folders is then the editor's job (claw creates none), and whether the file was
 * created or overwritten is what the local file system said before the write. The editor's
 * failures are error results naming the file.
 *
 * `execute` throws the errors of `resolveWithinWorkspace`, the signal's reason when aborted, and a
 * `ClawError` (`tool_file_error`) on unexpected I/O failures.
 */
export function createWriteFileTool(): BuiltinTool<WriteFileArguments> {
  // defineTool types execute as ToolResult | string; these tools always return a ToolResult.
  return defineTool({
    name: 'write_file',
    description:
      'Create or overwrite a file in the workspace with `content` (the whole file). `path` is ' +
      'relative to the workspace root; missing parent folders are created. To change part of an ' +
      'existing file use edit_file.',
    risk: 'mutating',
    schema: writeFileArguments,
    async execute(args, { signal, workDir, files: access }): Promise<ToolResult> {
      throwIfAborted(signal);
      const file = await resolveWritableFile(workDir, args.path);
      const absolutePath = file.absolutePath;
      const shown = file.relative;
      const writer = writerOf(access);
      if (writer !== undefined) {
        const target = { absolutePath, path: args.path, shown };
        return writeThroughAccess(writer, target, args.content, signal);
      }
      try {
        const existing = await statIfExists(absolutePath);
        if (existing?.isDirectory() === true) return directoryResult(shown);
        throwIfAborted(signal);
        await writeFileAtomic({ ...file, workDir, path: args.path }, args.content, signal);
        return wroteResult(args.content, shown, existing !== undefined);
      } catch (error) {
        if (signal.aborted) throw abortReason(signal);
        if (errnoCode(error) === undefined) throw error;
        return writeFailure(error, shown);
      }
    },
  }) as BuiltinTool<WriteFileArguments>;
}

/** `write_file` through a `TextFileAccess`, after the local entry was checked. */
async function writeThroughAccess(
  writer: TextWriter,
  target: { absolutePath: string; path: string; shown: string },
  content: string,
  signal: AbortSignal,
): Promise<ToolResult> {
  const { shown } = target;
  const local = await checkLocalEntry(target, {
    directory: directoryResult(shown),
    notRegular: { content: `${shown} is not a regular file; write_file only writes files`, isError: true },
  });
  if ('content' in local) return local;
  throwIfAborted(signal);
  const failure = await writeThrough(writer, target, content, signal);
  return failure ?? wroteResult(content, shown, local.exists);
}

function directoryResult(shown: string): ToolResult {
  return { content: `${shown} is a directory; give the path of a file`, isError: true };
}

function wroteResult(content: string, shown: string, existed: boolean): ToolResult {
  const bytes = Buffer.byteLength(content, 'utf8');
  const outcome = existed ? 'overwritten' : 'created';
  return { content: `wrote ${bytes} ${bytes === 1 ? 'byte' : 'bytes'} to ${shown} (${outcome})` };
}

/** Error result for the failures the model can act on; anything else is thrown. */
export function writeFailure(error: unknown, shown: string): ToolResult {
  switch (errnoCode(error)) {
    case 'ENOTDIR':
    case 'EEXIST':
      return {
        content: `cannot write ${shown}: a file is in the way of one of its parent folders`,
        isError: true,
      };
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return { content: `permission denied: cannot write ${shown}`, isError: true };
    case 'ENOSPC':
      return { content: `cannot write ${shown}: no space left on the device`, isError: true };
    case undefined:
    default:
      throw fileSystemError('write', shown, error);
  }
}
