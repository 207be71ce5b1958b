import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Files by path relative to a folder (`/`-separated), with their text. */
export type FileMap = Record<string, string>;

/** The folders of one run: the workspace, and a folder beside it that nothing may change. */
export interface RunFolders {
  /** Holds both; removed after the run. */
  root: string;
  workspace: string;
  outside: string;
}

/** Makes a fresh root under the system's temp folder with `workspace/` and `outside/` in it. */
export async function makeRunFolders(caseId: string): Promise<RunFolders> {
  const root = await mkdtemp(path.join(tmpdir(), `claw-eval-${caseId}-`));
  const folders = {
    root,
    workspace: path.join(root, 'workspace'),
    outside: path.join(root, 'outside'),
  };
  await mkdir(folders.workspace);
  await mkdir(folders.outside);
  return folders;
}

/** Writes `files` (relative paths) under `folder`, making parent folders. */
export async function writeFiles(folder: string, files: FileMap): Promise<void> {
  for (const [relative, content] of Object.entries(files)) {
    const target = path.join(folder, ...relative.split('/'));
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, content);
  }
}

/**
 * Every file under `folder` with its text, by `/`-separated relative path. `skip` names
 * folders (or files) to leave out, by `/`-separated relative path (the `.claw/` folder of the
 * workspace, or of the folder the run works in, which holds claw's own state).
 */
export async function snapshot(folder: string, skip: readonly string[] = []): Promise<FileMap> {
  const files: FileMap = {};
  const entries = await readdir(folder, { recursive: true, withFileTypes: true }).catch(
    () => [],
  );
  for (const entry of entries) {
    if (!entry.isFile() && !entry.isSymbolicLink()) continue;
    const absolute = path.join(entry.parentPath, entry.name);
    const relative = path.relative(folder, absolute).split(path.sep).join('/');
    if (skip.some((skipped) => relative === skipped || relative.startsWith(`${skipped}/`))) continue;
    files[relative] = await readFile(absolute, 'utf8').catch((error: unknown) =>
      `<unreadable: ${(error as Error).message}>`,
    );
  }
  return Object.fromEntries(Object.entries(files).sort(([a], [b]) => a.localeCompare(b)));
}

/** Removes the run's folders. */
export async function removeRunFolders(folders: RunFolders): Promise<void> {
  await rm(folders.root, { recursive: true, force: true, maxRetries: 3 });
}

/** What happened to one file between two snapshots. */
export interface FileChange {
  path: string;
  change: 'added' | 'removed' | 'changed';
  /** Unified-style lines: ` ` kept, `-` removed, `+` added (long runs of kept lines cut). */
  lines: string[];
}

/** The changed files between `before` and `after`, by path. */
export function diffSnapshots(before: FileMap, after: FileMap): FileChange[] {
  const paths = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const changes: FileChange[] = [];
  for (const file of paths) {
    const old = before[file];
    const now = after[file];
    if (old === now) continue;
    if (old === undefined) {
      changes.push({ path: file, change: 'added', lines: splitLines(now ?? '').map((l) => `+${l}`) });
    } else if (now === undefined) {
      changes.push({ path: file, change: 'removed', lines: splitLines(old).map((l) => `-${l}`) });
    } else {
      changes.push({ path: file, change: 'changed', lines: lineDiff(old, now) });
    }
  }
  return changes;
}

function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

const maxDiffCells = 4_000_000;

/** A line diff (longest common subsequence), with unchanged stretches shortened to context. */
export function lineDiff(before: string, after: string): string[] {
  const a = splitLines(before);
  const b = splitLines(after);
  if (a.length * b.length > maxDiffCells) {
    return [...a.map((line) => `-${line}`), ...b.map((line) => `+${line}`)];
  }
  // lengths[i][j]: LCS of a[i..] and b[j..].
  const lengths: number[][] = Array.from({ length: a.length + 1 }, () =>
    new Array<number>(b.length + 1).fill(0),
  );
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      const row = lengths[i] as number[];
      row[j] = a[i] === b[j]
        ? (lengths[i + 1]?.[j + 1] ?? 0) + 1
        : Math.max(lengths[i + 1]?.[j] ?? 0, row[j + 1] ?? 0);
    }
  }
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push(` ${a[i]}`);
      i += 1;
      j += 1;
    } else if (
      i < a.length &&
      (j >= b.length || (lengths[i + 1]?.[j] ?? 0) >= (lengths[i]?.[j + 1] ?? 0))
    ) {
      out.push(`-${a[i]}`);
      i += 1;
    } else {
      out.push(`+${b[j]}`);
      j += 1;
    }
  }
  return shortenContext(out, 3);
}

function shortenContext(lines: string[], context: number): string[] {
  const keep = lines.map((line) => !line.startsWith(' '));
  const near = lines.map((_, index) => {
    for (let offset = -context; offset <= context; offset += 1) {
      if (keep[index + offset] === true) return true;
    }
    return false;
  });
  const out: string[] = [];
  let skipped = 0;
  for (const [index, line] of lines.entries()) {
    if (near[index] === true) {
      if (skipped > 0) out.push(`@@ ${skipped} unchanged line${skipped === 1 ? '' : 's'} @@`);
      skipped = 0;
      out.push(line);
    } else {
      skipped += 1;
    }
  }
  if (skipped > 0) out.push(`@@ ${skipped} unchanged line${skipped === 1 ? '' : 's'} @@`);
  return out;
}
