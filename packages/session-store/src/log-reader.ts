import { SessionLogError } from './errors.js';
import { decodeRecord, RecordProblem, unsealLine } from './records.js';
import type { LogRecord, StoredLog } from './session-log.js';

/** A session file read back: the log, and the sizes the file log needs for compaction. */
export interface ReadFile {
  log: StoredLog;
  /** The seq of the last record (or of the snapshot when there is none). */
  lastSeq: number;
  /** UTF-8 bytes of the snapshot line. */
  snapshotBytes: number;
  /** UTF-8 bytes of the whole records after it. */
  logBytes: number;
}

function corrupt(file: string, line: number, reason: string, cause?: unknown): SessionLogError {
  return new SessionLogError(
    `The session file ${file} is corrupt at line ${line}: ${reason}. claw leaves it as it is; ` +
    'move it away (or restore it from a backup) to start this session afresh.',
    { code: 'session_corrupt', location: file, record: line, cause },
  );
}

function problem(file: string, line: number, error: unknown): SessionLogError {
  if (error instanceof RecordProblem && error.unsupportedVersion) {
    return new SessionLogError(
      `The session file ${file} was written by a newer claw (line ${line}: ${error.message}). ` +
      'Update claw to open it; it is left as it is.',
      { code: 'session_version_unsupported', location: file, record: line, cause: error },
    );
  }
  const reason = error instanceof Error ? error.message : String(error);
  return corrupt(file, line, reason, error);
}

/**
 * Reads a session file: a snapshot line, then one line per change. A line is taken only whole:
 * an unterminated last line, or a last line that is not an intact record, is what a crash
 * mid-write leaves, and is dropped (`needsCompaction`). Anything else that is wrong is corruption.
 * Records are checked to follow each other; what they mean is checked when they are applied.
 *
 * `text` must not be empty (an empty file is a new session, not a log).
 *
 * @throws SessionLogError `session_corrupt` (naming the file and line) or
 * `session_version_unsupported`.
 */
export function readLog(text: string, options: { file: string; id: string }): ReadFile {
  const { file } = options;
  const lines = text.split('\n');
  // The part after the last newline: empty for a file that ends cleanly, else a torn write.
  const tail = lines.pop() ?? '';
  let tornTail = tail !== '';
  const values = lines.map((line) => unsealLine(line));
  if (values.length > 1 && values.at(-1) === undefined) {
    values.pop();
    lines.pop();
    tornTail = true;
  }
  if (values.length === 0) throw corrupt(file, 1, 'it has no complete snapshot line');

  let log: StoredLog | undefined;
  let lastSeq = 0;
  let logBytes = 0;
  let snapshotBytes = 0;
  const records: LogRecord[] = [];
  for (const [index, value] of values.entries()) {
    const lineNumber = index + 1;
    if (value === undefined) throw corrupt(file, lineNumber, 'the line is damaged');
    let record;
    try {
      record = decodeRecord(value);
    } catch (error) {
      throw problem(file, lineNumber, error);
    }
    const bytes = Buffer.byteLength(lines[index] ?? '', 'utf8') + 1;
    if (log === undefined) {
      if (record.kind !== 'snapshot') {
        throw corrupt(file, lineNumber, 'it does not start with a snapshot');
      }
      // The file's name says which session it is (a copied file keeps its old id inside).
      const snapshot = { ...record.snapshot, id: options.id };
      log = { snapshot, records, needsCompaction: tornTail };
      lastSeq = record.seq;
      snapshotBytes = bytes;
      continue;
    }
    if (record.kind !== 'change') throw corrupt(file, lineNumber, 'a second snapshot');
    if (record.seq !== lastSeq + 1) {
      throw corrupt(file, lineNumber, `record ${record.seq} follows record ${lastSeq}`);
    }
    records.push({ seq: record.seq, at: record.at, change: record.change });
    lastSeq = record.seq;
    logBytes += bytes;
  }
  if (log === undefined) throw corrupt(file, 1, 'it has no snapshot');
  return { log, lastSeq, snapshotBytes, logBytes };
}
