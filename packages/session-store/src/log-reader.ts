import { SessionFileError } from './errors.js';
import { decodeRecord, RecordProblem, unsealLine } from './records.js';
import { applyChange, ChangeMismatch, type SessionState } from './session-state.js';

/** A session read back from its file. */
export interface LoadedLog {
  state: SessionState;
  /** UTF-8 bytes of the snapshot line. */
  snapshotBytes: number;
  /** UTF-8 bytes of the whole records after it. */
  logBytes: number;
  /** True when a torn tail (the remains of a write cut short) was dropped. */
  tornTail: boolean;
}

function corrupt(file: string, line: number, reason: string, cause?: unknown): SessionFileError {
  return new SessionFileError(
    `The session file ${file} is corrupt at line ${line}: ${reason}. claw leaves it as it is; ` +
    'move it away (or restore it from a backup) to start this session afresh.',
    { code: 'session_corrupt', file, line, cause },
  );
}

function problem(file: string, line: number, error: unknown): SessionFileError {
  if (error instanceof RecordProblem && error.unsupportedVersion) {
    return new SessionFileError(
      `The session file ${file} was written by a newer claw (line ${line}: ${error.message}). ` +
      'Update claw to open it; it is left as it is.',
      { code: 'session_version_unsupported', file, line, cause: error },
    );
  }
  const reason = error instanceof Error ? error.message : String(error);
  return corrupt(file, line, reason, error);
}

/**
 * Reads a session file: a snapshot line, then one line per change. A line is taken only whole:
 * an unterminated last line, or a last line that is not an intact record, is what a crash
 * mid-write leaves, and is dropped. Anything else that is wrong is corruption.
 *
 * `text` must not be empty (an empty file is a new session, not a log).
 *
 * @throws SessionFileError `session_corrupt` (naming the file and line) or
 * `session_version_unsupported`.
 */
export function readLog(
  text: string,
  options: { file: string; id: string; workDir: string },
): LoadedLog {
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

  let state: SessionState | undefined;
  let logBytes = 0;
  let snapshotBytes = 0;
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
    if (state === undefined) {
      if (record.kind !== 'snapshot') throw corrupt(file, lineNumber, 'it does not start with a snapshot');
      const { snapshot } = record;
      state = {
        id: options.id,
        // The caller's workDir wins: the workspace may have moved (SES-5).
        workDir: options.workDir,
        createdAt: snapshot.createdAt,
        updatedAt: snapshot.updatedAt,
        seq: record.seq,
        messages: snapshot.history,
        usage: snapshot.usage,
        cost: snapshot.cost,
        journalActive: snapshot.journalActive,
        journal: snapshot.journal,
      };
      snapshotBytes = bytes;
      continue;
    }
    if (record.kind !== 'change') throw corrupt(file, lineNumber, 'a second snapshot');
    if (record.seq !== state.seq + 1) {
      throw corrupt(file, lineNumber, `record ${record.seq} follows record ${state.seq}`);
    }
    try {
      applyChange(state, record.change, record.at);
    } catch (error) {
      if (error instanceof ChangeMismatch) throw corrupt(file, lineNumber, error.message, error);
      throw error;
    }
    state.seq = record.seq;
    logBytes += bytes;
  }
  if (state === undefined) throw corrupt(file, 1, 'it has no snapshot');
  return { state, snapshotBytes, logBytes, tornTail };
}
