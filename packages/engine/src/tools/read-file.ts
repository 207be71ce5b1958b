import { abortReason, defineTool, errnoCode, throwIfAborted, type ToolResult } from '@claw/core';
import {
  resolveReadableFile,
  verifyOpenedFile,
  type OpenFile,
  type WorkspaceLocation,
} from '@claw/sandbox';
import { z } from 'zod';
import { fileSystemError } from './files.js';
import { checkLocalEntry, readThrough, readerOf, type TextReader } from './text-file-access.js';
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

/** The arguments of `read_file` (the schema the model sees): a path and an optional line range. */
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

/** The parsed arguments of a `read_file` call. */
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
 * With a reading `ToolContext.files` (an editor's, ACP-4), the whole text comes from it instead,
 * once the path has passed the same checks and the local entry (if any) is a regular file with
 * one link; it is cut and noted exactly like a local file's. Its failures are error results
 * naming the file.
 *
 * claw's own state (a `.claw` folder's content other than its settings files, at any depth, also
 * through a symlink) is never read: the approval policy denies it, and the tool refuses it
 * itself, before opening and on what was opened.
 *
 * `execute` throws the errors of `resolveWithinWorkspace` (path outside the workspace, unresolvable
 * links), a `ProtectedPathError` for claw's state, the signal's reason when aborted, and a
 * `ClawError` (`tool_file_error`) on unexpected I/O failures.
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
    async execute(args, { signal, workDir, files: access }): Promise<ToolResult> {
      throwIfAborted(signal);
      // claw's own state is refused here too, and again on what gets opened (verifyOpenedFile),
      // not only by the policy: a link may be swapped in between by a command running meanwhile.
      const location = await resolveReadableFile(workDir, args.path);
      const { path: absolutePath, relative: shown, realRoot, files } = location;
      const offset = args.offset ?? 1;
      const limit = args.limit ?? defaultLimit;
      const lineChars = Math.min(maxLineChars, maxChars);
      const reader = readerOf(access);
      if (reader !== undefined) {
        const window = { shown, offset, limit, maxChars, maxLineChars: lineChars };
        return readThroughAccess(reader, location, { path: args.path, window, signal });
      }
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
        if (!info.isFile()) return notRegularResult(shown);
        return await readLines(handle, {
          shown,
          size: info.size,
          offset,
          limit,
          maxChars,
          maxLineChars: lineChars,
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

/**
 * `read_file` through a `TextFileAccess`: the local entry is checked first (a folder, a special
 * file or a hard-linked file is refused as for a local read; nothing there is fine, the access
 * may hold an unsaved buffer), then the whole text is asked for and shown like a local file's.
 */
async function readThroughAccess(
  reader: TextReader,
  location: WorkspaceLocation,
  request: { path: string; window: LineWindowOptions; signal: AbortSignal },
): Promise<ToolResult> {
  const { window, signal } = request;
  const shown = location.relative;
  const target = { absolutePath: location.path, path: request.path, shown };
  const local = await checkLocalEntry(target, {
    directory: directoryResult(shown),
    notRegular: notRegularResult(shown),
  });
  if ('content' in local) return local;
  throwIfAborted(signal);
  const text = await readThrough(reader, { ...target, notFound: notFoundResult(shown) }, signal);
  if (typeof text !== 'string') return text;
  return textLines(text, window);
}

function notFoundResult(shown: string): ToolResult {
  return { content: `file not found: ${shown}`, isError: true };
}

function notRegularResult(shown: string): ToolResult {
  return { content: `${shown} is not a regular file; read_file only reads files`, isError: true };
}

function binaryResult(shown: string): ToolResult {
  return {
    content: `${shown} is a binary file (it contains NUL bytes); read_file only reads text`,
    isError: true,
  };
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
      return notFoundResult(shown);
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

/** What a read shows of a file's lines, and how it names the file in notes. */
interface LineWindowOptions {
  shown: string;
  offset: number;
  limit: number;
  maxChars: number;
  maxLineChars: number;
}

interface ReadRequest extends LineWindowOptions {
  /** The size `fstat` gave; reading stops there unless the file grew (a short read says so). */
  size: number;
  signal: AbortSignal;
}

/**
 * Streams the file once: counts every line (for "of N" in the note) and keeps only the lines to
 * show, each capped at `maxLineChars + 1` characters while it is read, so a huge single line or a
 * huge file never sits in memory.
 */
async function readLines(handle: OpenFile, request: ReadRequest): Promise<ToolResult> {
  const { signal } = request;
  const decoder = new TextDecoder('utf-8');
  // Only the bytes each read returns are looked at: no need to zero the buffer first. A small
  // file gets a small buffer (most files read are small; 64 KB each is garbage for the GC). If
  // the file grew since `fstat`, the reads simply go on.
  const buffer = Buffer.allocUnsafe(Math.min(chunkBytes, Math.max(1024, request.size + 1)));
  const lines = lineWindow(request);

  let position = 0;
  for (;;) {
    throwIfAborted(signal);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) break;
    if (position < binaryProbeBytes) {
      const probe = buffer.subarray(0, Math.min(bytesRead, binaryProbeBytes - position));
      if (probe.includes(0)) return binaryResult(request.shown);
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
      lines.feed(text);
      break;
    }
    lines.feed(decoder.decode(buffer.subarray(0, bytesRead), { stream: true }));
    if (end) break;
  }
  lines.feed(decoder.decode());
  return lines.result();
}

/**
 * What a read shows of a whole text (one a `TextFileAccess` gave): the same binary refusal, cuts
 * and notes as for a local file of that text. Binary here means a NUL among the first 8K
 * characters (a local file is probed by its first 8 KB).
 */
function textLines(text: string, window: LineWindowOptions): ToolResult {
  if (text.slice(0, binaryProbeBytes).includes('\u0000')) return binaryResult(window.shown);
  const whole = wholeFileContent(text, window);
  if (whole !== undefined) return { content: whole };
  const lines = lineWindow(window);
  lines.feed(text);
  return lines.result();
}

/** The lines of a file's text, fed in pieces; see {@link lineWindow}. */
interface LineWindow {
  feed(text: string): void;
  /** Ends the text (a last line without a newline counts) and gives what is shown of it. */
  result(): ToolResult;
}

/**
 * The lines of a file's text, fed in pieces of any size: every line is counted (for "of N" in
 * the note); only the lines to show are kept, each capped at `maxLineChars + 1` characters as it
 * comes, so a huge single line or a huge file never sits in memory. `result` gives what
 * `read_file` shows: the lines and the notes saying how to read on.
 */
function lineWindow(options: LineWindowOptions): LineWindow {
  const { offset, limit, maxChars, maxLineChars } = options;
  const lastWanted = offset + limit - 1;
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

  const result = (): ToolResult => {
    if (lineLength > 0) finishLine();
    const totalLines = lineNumber - 1;

    if (totalLines === 0) return { content: '[empty file]' };
    if (offset > totalLines) {
      return {
        content: `offset ${offset} is past the end of ${options.shown}, which has ${totalLines} ${plural(totalLines, 'line')}`,
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
        `read the rest with bash, e.g. sed -n '${firstCutLine}p' ${shellQuote(options.shown)} | cut -c ${maxLineChars + 1}-]`,
      );
    }
    const text = shownLines.join('\n');
    return { content: notes.length === 0 ? text : `${text}\n\n${notes.join('\n')}` };
  };

  return { feed, result };
}

/**
 * What `readLines` shows of a whole file's `text` when it shows all of it: the text without its
 * last newline, when reading from the first line and no limit applies (line count, characters,
 * line length). `undefined` when one does, or the file is empty.
 */
function wholeFileContent(
  text: string,
  request: Pick<LineWindowOptions, 'offset' | 'limit' | 'maxChars' | 'maxLineChars'>,
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
