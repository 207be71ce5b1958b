import * as fs from 'node:fs/promises';
import path from 'node:path';
import {
  SerialQueue,
  prepareStateFolder,
  stateFolderName,
  writeFileAtomically,
} from '@claw/core';

/** How many entries the REPL's history keeps (older ones are dropped when it is read). */
export const historySize = 500;

/** The file of a workspace's REPL history: one JSON string a line, oldest first. */
export function historyFile(workDir: string): string {
  return path.join(workDir, stateFolderName, 'history.jsonl');
}

/**
 * The REPL's history in a workspace: what was typed to start a task or run a command, kept
 * across runs (up-arrow brings it back). Lines of several lines are not kept (readline recalls
 * one line), nor answers to questions. Best effort: a history that cannot be read or written is
 * an empty one, never an error of the REPL.
 */
export class ReplHistory {
  private readonly file: string;
  private readonly writes = new SerialQueue();
  private last: string | undefined;

  private constructor(file: string, readonly entries: readonly string[]) {
    this.file = file;
    this.last = entries.at(-1);
  }

  /** Reads the workspace's history (the last {@link historySize} entries). */
  static async open(workDir: string): Promise<ReplHistory> {
    const file = historyFile(workDir);
    const text = await fs.readFile(file, 'utf8').catch(() => '');
    const entries: string[] = [];
    for (const line of text.split('\n')) {
      try {
        const entry: unknown = JSON.parse(line);
        if (typeof entry === 'string' && isKept(entry)) entries.push(entry);
      } catch {
        // A torn or foreign line: left out.
      }
    }
    const kept = entries.slice(-historySize);
    // Grown well past what is kept: written again with what is kept (best effort).
    if (entries.length > 2 * historySize) {
      const compacted = kept.map((entry) => `${JSON.stringify(entry)}\n`).join('');
      await writeFileAtomically(fs, file, compacted, { mode: 0o600 }).catch(() => undefined);
    }
    return new ReplHistory(file, kept);
  }

  /** Adds what was typed (unless it is the entry before, or of several lines). */
  add(entry: string): void {
    if (!isKept(entry) || entry === this.last) return;
    this.last = entry;
    const line = `${JSON.stringify(entry)}\n`;
    void this.writes.run(async () => {
      try {
        await prepareStateFolder(fs, path.dirname(this.file));
        await fs.appendFile(this.file, line, { mode: 0o600 });
      } catch {
        // Best effort: the REPL goes on without it.
      }
    });
  }

  /** Waits for the writes under way. */
  flushed(): Promise<void> {
    return this.writes.idle();
  }
}

function isKept(entry: string): boolean {
  return entry.trim() !== '' && !entry.includes('\n');
}
