import { open } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { errnoCode } from '@claw/core';
import type { InstructionText } from '@claw/engine';

/** The name of a project instructions file (the cross-vendor convention). */
export const instructionsFileName = 'AGENTS.md';

/** The most bytes of instructions the model is given, all files together (REAL-2). */
export const maxInstructionBytes = 32 * 1024;

/** One instructions file the model is given (REAL-2). */
export interface InstructionFile extends InstructionText {
  /** Where it is. */
  file: string;
  /** Its size in bytes (UTF-8), of what the model is given when `truncated`. */
  bytes: number;
}

/** The project instructions of a workspace, and what could not be used. */
export interface ProjectInstructions {
  /** In the order the model gets them: the user's own file, then outer folders first. */
  files: InstructionFile[];
  /** Files that were skipped or cut, each said in one line (what and why). */
  warnings: string[];
}

/** Where `loadInstructions` looks for the project instructions (AGENTS.md) of a workspace. */
export interface LoadInstructionsOptions {
  /** The workspace (the working directory of the session). */
  workDir: string;
  /**
   * The root of the git repository the workspace is in, when it is in one: the files from there
   * down to the workspace are read. Default: the workspace only.
   */
  repositoryRoot?: string | undefined;
  /** The folder of the user's own `AGENTS.md` (`$XDG_CONFIG_HOME/claw`); none when undefined. */
  userConfigDir?: string | undefined;
  /** Default {@link maxInstructionBytes}. */
  maxBytes?: number;
  /** The home folder, shown as `~` (default: the user's). */
  homeDir?: string;
}

/**
 * Reads the project instructions (REAL-2): `AGENTS.md` of the user (`userConfigDir`), then of each
 * folder from the repository root down to the workspace, outer first. At most `maxBytes` in all:
 * the file that crosses the limit is cut at a line end (marked `truncated`), later ones are left
 * out, and a warning says so. A file that cannot be read, or is not UTF-8 text, is skipped with a
 * warning; a missing one is simply not there. Never throws.
 */
export async function loadInstructions(
  options: LoadInstructionsOptions,
): Promise<ProjectInstructions> {
  const maxBytes = options.maxBytes ?? maxInstructionBytes;
  const homeDir = options.homeDir ?? os.homedir();
  const workDir = path.resolve(options.workDir);
  const candidates: string[] = [];
  if (options.userConfigDir !== undefined) {
    candidates.push(path.join(options.userConfigDir, instructionsFileName));
  }
  for (const folder of foldersDown(options.repositoryRoot, workDir)) {
    candidates.push(path.join(folder, instructionsFileName));
  }
  const files: InstructionFile[] = [];
  const warnings: string[] = [];
  let left = maxBytes;
  for (const [index, file] of candidates.entries()) {
    const shown = displayPath(file, workDir, homeDir);
    if (left <= 0) {
      const rest = candidates.slice(index);
      const present = await Promise.all(rest.map(async (other) => (await readText(other, 1)).kind === 'text'));
      const skipped = rest
        .filter((_, at) => present[at])
        .map((other) => displayPath(other, workDir, homeDir));
      if (skipped.length > 0) {
        warnings.push(
          `instructions: ${skipped.join(', ')} left out: project instructions are limited to ` +
          `${formatBytes(maxBytes)} in all`,
        );
      }
      break;
    }
    const read = await readText(file, left);
    if (read.kind === 'missing') continue;
    if (read.kind === 'skipped') {
      warnings.push(`instructions: ${shown} skipped: ${read.reason}`);
      continue;
    }
    const bytes = Buffer.byteLength(read.text);
    files.push({
      path: shown,
      file,
      text: read.text,
      bytes,
      ...(read.truncated ? { truncated: true } : {}),
    });
    if (read.truncated) {
      warnings.push(
        `instructions: ${shown} cut after ${formatBytes(bytes)}: project instructions are ` +
        `limited to ${formatBytes(maxBytes)} in all`,
      );
    }
    left -= bytes;
    if (read.truncated) left = 0;
  }
  return { files, warnings };
}

/** The folders from `root` down to `workDir` (only `workDir` when `root` is not above it). */
function foldersDown(root: string | undefined, workDir: string): string[] {
  if (root === undefined) return [workDir];
  const relative = path.relative(path.resolve(root), workDir);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return [workDir];
  const folders = [path.resolve(root)];
  for (const part of relative.split(path.sep).filter((each) => each !== '')) {
    folders.push(path.join(folders[folders.length - 1] as string, part));
  }
  return folders;
}

/** How people know a file: relative to the workspace, `~/…` in the home folder, else absolute. */
function displayPath(file: string, workDir: string, homeDir: string): string {
  const relative = path.relative(workDir, file);
  if (!relative.startsWith('..') && !path.isAbsolute(relative)) return relative.split(path.sep).join('/');
  // Above the workspace, in its repository: `../AGENTS.md`.
  if (!path.isAbsolute(relative) && path.basename(relative) === instructionsFileName &&
    relative.split(path.sep).slice(0, -1).every((part) => part === '..')) {
    return relative.split(path.sep).join('/');
  }
  const fromHome = path.relative(homeDir, file);
  if (homeDir !== '' && !fromHome.startsWith('..') && !path.isAbsolute(fromHome)) {
    return `~/${fromHome.split(path.sep).join('/')}`;
  }
  return file;
}

type ReadResult =
  | { kind: 'missing' }
  | { kind: 'skipped'; reason: string }
  | { kind: 'text'; text: string; truncated: boolean };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Up to `limit` bytes of a file as UTF-8 text, cut at the last line end within the limit when it
 * is longer (or at a character boundary when the part has no line end). Reads no more than that,
 * however large the file is.
 */
async function readText(file: string, limit: number): Promise<ReadResult> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
    return { kind: 'skipped', reason: `it cannot be read (${code ?? String(error)})` };
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { kind: 'skipped', reason: 'it is not a file' };
    const buffer = Buffer.alloc(Math.min(info.size, limit + 1));
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    let bytes: Buffer = buffer.subarray(0, filled);
    const truncated = bytes.length > limit;
    if (truncated) bytes = cutAtLine(bytes.subarray(0, limit));
    if (bytes.includes(0)) return { kind: 'skipped', reason: 'it is not text (it holds NUL bytes)' };
    try {
      return { kind: 'text', text: utf8.decode(bytes), truncated };
    } catch {
      return { kind: 'skipped', reason: 'it is not UTF-8 text' };
    }
  } catch (error) {
    return { kind: 'skipped', reason: `it cannot be read (${errnoCode(error) ?? String(error)})` };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** `bytes` up to its last line end, or up to its last whole UTF-8 character when it has none. */
function cutAtLine(bytes: Buffer): Buffer {
  const lineEnd = bytes.lastIndexOf(0x0a);
  if (lineEnd >= 0) return bytes.subarray(0, lineEnd + 1);
  // Back over continuation bytes (10xxxxxx) to the lead byte of the last character.
  let start = bytes.length;
  while (start > 0 && ((bytes[start - 1] as number) & 0xc0) === 0x80) start -= 1;
  if (start === 0) return bytes.subarray(0, 0);
  const lead = bytes[start - 1] as number;
  const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  // A character the cut went through is left out whole.
  return bytes.length - (start - 1) < length ? bytes.subarray(0, start - 1) : bytes;
}

/** `1.2 KB`, `300 B`, `32 KB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const kb = bytes / 1024;
  return `${kb < 10 ? kb.toFixed(1) : Math.round(kb)} KB`;
}
