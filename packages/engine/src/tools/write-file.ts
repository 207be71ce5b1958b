import { abortReason, defineTool, errnoCode, throwIfAborted, type ToolResult } from '@claw/core';
import { resolveWritableFile } from '@claw/sandbox';
import { z } from 'zod';
import {
  fileSystemError,
  statIfExists,
  writeFileAtomic,
} from './files.js';
import type { BuiltinTool } from './builtin-tool.js';

export const writeFileArguments = z.object({
  path: z.string().min(1).describe('File path relative to the workspace root.'),
  content: z.string().describe('The complete new content of the file.'),
});

export type WriteFileArguments = z.output<typeof writeFileArguments>;

/**
 * Creates the `write_file` tool (TOOL-2, risk `mutating`): writes the whole content of a workspace
 * file, creating missing parent folders, atomically (temporary file + rename). Result:
 * `wrote <n> bytes to <path> (created)` or `(overwritten)`.
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
    async execute(args, { signal, workDir }): Promise<ToolResult> {
      throwIfAborted(signal);
      const file = await resolveWritableFile(workDir, args.path);
      const absolutePath = file.absolutePath;
      const shown = file.relative;
      try {
        const existing = await statIfExists(absolutePath);
        if (existing?.isDirectory() === true) {
          return { content: `${shown} is a directory; give the path of a file`, isError: true };
        }
        throwIfAborted(signal);
        await writeFileAtomic({ ...file, workDir, path: args.path }, args.content, signal);
        const bytes = Buffer.byteLength(args.content, 'utf8');
        const outcome = existing === undefined ? 'created' : 'overwritten';
        return { content: `wrote ${bytes} ${bytes === 1 ? 'byte' : 'bytes'} to ${shown} (${outcome})` };
      } catch (error) {
        if (signal.aborted) throw abortReason(signal);
        if (errnoCode(error) === undefined) throw error;
        return writeFailure(error, shown);
      }
    },
  }) as BuiltinTool<WriteFileArguments>;
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
