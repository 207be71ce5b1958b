import { abortReason, defineTool, errnoCode, throwIfAborted, type ToolResult } from '@claw/core';
import { locateWithinWorkspace, verifyOpenedFile, type OpenFile } from '@claw/sandbox';
import { z } from 'zod';
import { fileSystemError } from './files.js';
import type { BuiltinTool } from './builtin-tool.js';

/** Options of {@link createReadFileTool}. */
export interface ReadFileToolOptions {
  /** Lines returned when the call gives no `limit`. Default 2000. */
  defaultLimit?: number;
  /** Most characters of file text in one result (notes not counted). Default 100,000. */
  maxChars?: number;
  /** Longer lines are cut to this many characters. Default 2000. */
  maxLineChars?: number;
}

export const readFileArguments = z.object({
  path: z.string().min(1).describe('File path relative to the workspace root.'),
  offset: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('1-based number of the first line to return. Default 1.'),
  limit: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('Maximum number of lines to return. Default 2000.'),
});

export type ReadFileArguments = z.output<typeof readFileArguments>;

const chunkBytes = 64 * 1024;
const binaryProbeBytes = 8 * 1024;

/**
 * Creates the `read_file` tool (TOOL-1, risk `safe`): returns the raw text of a workspace file,
 * `limit` lines from the 1-based line `offset`. Output is bounded by the line limit, a total
 * character cap and a per-line cap; whatever is cut is followed by a note saying how to read on.
 * Directories, binary files (a NUL byte in the first 8 KB) and missing files give an error result.
 * The file is streamed, so memory stays bounded however large it is.
 *
 * `execute` throws the errors of `resolveWithinWorkspace` (path outside the workspace, unresolvable
 * links), the signal's reason when aborted, and a `ClawError` (`tool_file_error`) on unexpected
 * I/O failures.
 */
export function createReadFileTool(
  options: ReadFileToolOptions = {},
): BuiltinTool<ReadFileArguments> {
  const defaultLimit = options.defaultLimit ?? 2000;
  const maxChars = options.maxChars ?? 100_000;
  const maxLineChars = options.maxLineChars ?? 2000;
  // defineTool types execute as ToolResult | string; these tools always return a ToolResult.
  return defineTool({
    name: 'read_file',
    description:
      'Read a text file in the workspace. `path` is relative to the workspace root. Returns the ' +
      `raw lines from \`offset\` (1-based, default 1), at most \`limit\` lines (default ${defaultLimit}). ` +
      'Long output is cut and ends with a note giving the offset to continue from. ' +
      'Directories and binary files are refused.',
    risk: 'safe',
    readOnly: true,
    schema: readFileArguments,
    async execute(args, { signal, workDir }): Promise<ToolResult> {
      throwIfAborted(signal);
      const { path: absolutePath, relative: shown, realRoot, files } =
        await locateWithinWorkspace(workDir, args.path);
      let handle: OpenFile;
      try {
        // With O_NONBLOCK: opening a FIFO does not wait for a writer; it is refused below anyway.
        // Direct (synchronous) calls on a local file system, see `WorkspaceFiles`.
        handle = await files.openForReading(absolutePath);
      } catch (error) {
        return openFailure(error, shown);
      }
      try {
        // What was opened, not what the path named a moment before: inside, regular, one link.
        const info = await verifyOpenedFile(handle, {
          workDir,
          path: args.path,
          allowDirectory: true,
          realRoot,
          files,
        });
        if (info.isDirectory()) return directoryResult(shown);
        if (!info.isFile()) {
          return { content: `${shown} is not a regular file; read_file only reads files`, isError: true };
        }
        return await readLines(handle, {
          shown,
          size: info.size,
          offset: args.offset ?? 1,
          limit: args.limit ?? defaultLimit,
          maxChars,
          maxLineChars: Math.min(maxLineChars, maxChars),
          signal,
        });
      } catch (error) {
        if (signal.aborted) throw abortReason(signal);
        if (errnoCode(error) === undefined) throw error;
        if (errnoCode(error) === 'EISDIR') return directoryResult(shown);
        throw fileSystemError('read', shown, error);
      } finally {
        await handle.close();
      }
    },
  }) as BuiltinTool<ReadFileArguments>;
}

function directoryResult(shown: string): ToolResult {
  return {
    content: `${shown} is a directory, not a file; list it with bash, e.g. ls ${shellQuote(shown)}`,
    isError: true,
  };
}

function openFailure(error: unknown, shown: string): ToolResult {
  switch (errnoCode(error)) {
    case 'ENOENT':
    case 'ENOTDIR':
      return { content: `file not found: ${shown}`, isError: true };
    case 'EISDIR':
      return directoryResult(shown);
    case 'EACCES':
    case 'EPERM':
      return { content: `permission denied: cannot read ${shown}`, isError: true };
    case undefined:
    default:
      throw fileSystemError('open', shown, error);
  }
}

interface ReadRequest {
  shown: string;
  /** The size `fstat` gave; reading stops there unless the file grew (a short read says so). */
  size: number;
  offset: number;
  limit: number;
  maxChars: number;
  maxLineChars: number;
  signal: AbortSignal;
}

/**
 * Streams the file once: counts every line (for "of N" in the note) and keeps only the lines to
 * show, each capped at `maxLineChars + 1` characters while it is read, so a huge single line or a
 * huge file never sits in memory.
 */
async function readLines(handle: OpenFile, request: ReadRequest): Promise<ToolResult> {
  const { offset, limit, maxChars, maxLineChars, signal } = request;
  const lastWanted = offset + limit - 1;
  const decoder = new TextDecoder('utf-8');
  // Only the bytes each read returns are looked at: no need to zero the buffer first. A small
  // file gets a small buffer (most files read are small; 64 KB each is garbage for the GC). If
  // the file grew since `fstat`, the reads simply go on.
  const buffer = Buffer.allocUnsafe(Math.min(chunkBytes, Math.max(1024, request.size + 1)));
  const shownLines: string[] = [];
  let shownChars = 0;
  // Set when the character cap stops collecting before `lastWanted`.
  let full = false;
  let firstCutLine: number | undefined;
  let cutLines = 0;

  let lineNumber = 1;
  let head = '';
  let lineLength = 0;

  const finishLine = (): void => {
    if (lineNumber >= offset && lineNumber <= lastWanted && !full) {
      let text = head;
      if (lineLength > maxLineChars) {
        text = `${head.slice(0, maxLineChars)} [line cut: showing ${maxLineChars} of ${lineLength} characters]`;
        cutLines += 1;
        firstCutLine ??= lineNumber;
      }
      const cost = text.length + (shownLines.length > 0 ? 1 : 0);
      if (shownLines.length > 0 && shownChars + cost > maxChars) {
        full = true;
      } else {
        shownLines.push(text);
        shownChars += cost;
      }
    }
    lineNumber += 1;
    head = '';
    lineLength = 0;
  };

  const feed = (text: string): void => {
    let start = 0;
    for (;;) {
      const newline = text.indexOf('\n', start);
      const end = newline === -1 ? text.length : newline;
      if (end > start) {
        const wanted = lineNumber >= offset && lineNumber <= lastWanted && !full;
        if (wanted && head.length <= maxLineChars) {
          head += text.slice(start, Math.min(end, start + maxLineChars + 1 - head.length));
        }
        lineLength += end - start;
      }
      if (newline === -1) return;
      finishLine();
      start = newline + 1;
    }
  };

  let position = 0;
  for (;;) {
    throwIfAborted(signal);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) break;
    if (position < binaryProbeBytes) {
      const probe = buffer.subarray(0, Math.min(bytesRead, binaryProbeBytes - position));
      if (probe.includes(0)) {
        return {
          content: `${request.shown} is a binary file (it contains NUL bytes); read_file only reads text`,
          isError: true,
        };
      }
    }
    position += bytesRead;
    // A read that stopped short at the size fstat gave is the end: no extra read to learn it.
    const end = bytesRead < buffer.length && position >= request.size;
    if (end && position === bytesRead) {
      // The whole file in one read (most files read are small): shown as it is when nothing in
      // it needs cutting, without going through it line by line.
      const text = decoder.decode(buffer.subarray(0, bytesRead));
      const whole = wholeFileContent(text, request);
      if (whole !== undefined) return { content: whole };
      feed(text);
      break;
    }
    feed(decoder.decode(buffer.subarray(0, bytesRead), { stream: true }));
    if (end) break;
  }
  feed(decoder.decode());
  if (lineLength > 0) finishLine();
  const totalLines = lineNumber - 1;

  if (totalLines === 0) return { content: '[empty file]' };
  if (offset > totalLines) {
    return {
      content: `offset ${offset} is past the end of ${request.shown}, which has ${totalLines} ${plural(totalLines, 'line')}`,
      isError: true,
    };
  }

  const notes: string[] = [];
  const lastShown = offset + shownLines.length - 1;
  if (lastShown < totalLines) {
    notes.push(
      `[truncated: showing lines ${offset}-${lastShown} of ${totalLines}; call read_file with offset=${lastShown + 1} to continue]`,
    );
  }
  if (firstCutLine !== undefined) {
    notes.push(
      `[${cutLines} ${plural(cutLines, 'line')} longer than ${maxLineChars} characters cut; ` +
      `read the rest with bash, e.g. sed -n '${firstCutLine}p' ${shellQuote(request.shown)} | cut -c ${maxLineChars + 1}-]`,
    );
  }
  const text = shownLines.join('\n');
  return { content: notes.length === 0 ? text : `${text}\n\n${notes.join('\n')}` };
}

/**
 * What `readLines` shows of a whole file's `text` when it shows all of it: the text without its
 * last newline, when reading from the first line and no limit applies (line count, characters,
 * line length). `undefined` when one does, or the file is empty.
 */
function wholeFileContent(
  text: string,
  request: Pick<ReadRequest, 'offset' | 'limit' | 'maxChars' | 'maxLineChars'>,
): string | undefined {
  const content = text.endsWith('\n') ? text.slice(0, -1) : text;
  if (request.offset !== 1 || text === '' || content.length > request.maxChars) return undefined;
  let lines = 0;
  let start = 0;
  for (;;) {
    const newline = content.indexOf('\n', start);
    const end = newline === -1 ? content.length : newline;
    lines += 1;
    if (end - start > request.maxLineChars || lines > request.limit) return undefined;
    if (newline === -1) return content;
    start = newline + 1;
  }
}

function plural(count: number, word: string): string {
  return count === 1 ? word : `${word}s`;
}

/** Quotes a path for the shell commands suggested in notes. */
export function shellQuote(value: string): string {
  return /^[\w./@%+=:,-]+$/.test(value) ? value : `'${value.replaceAll('\'', '\'\\\'\'')}'`;
}
