import {
  TextFileNotFoundError,
  abortReason,
  raceAbort,
  throwIfAborted,
  type TextFileAccess,
  type TextFileCallOptions,
} from '@claw/core';

/** One call a `MemoryTextFiles` was asked, in order. */
export type TextFileCall =
  | { method: 'readTextFile'; path: string; signal: AbortSignal }
  | { method: 'writeTextFile'; path: string; content: string; signal: AbortSignal };

export interface MemoryTextFilesOptions {
  /** Default `"the editor"`. */
  name?: string;
  /** The texts it starts with (an editor's open buffers, saved or not), by absolute path. */
  files?: Record<string, string> | Iterable<readonly [string, string]>;
  /** Which calls it offers; one left out is missing, as from a client without it. Default both. */
  capabilities?: { read?: boolean; write?: boolean };
  /**
   * Runs before each call is answered (after it is recorded): throw to fail the call, or return
   * a promise to hold it (one that never settles holds it until the signal aborts).
   */
  onCall?: (call: TextFileCall) => void | Promise<void>;
  /**
   * Keep waiting on `onCall` after the signal aborted, like a client that never hears of a
   * cancellation. Default false: an abort rejects the call with the signal's reason at once.
   */
  ignoreSignal?: boolean;
}

/**
 * An in-memory `TextFileAccess`, standing in for an editor's file system (ACP-4) in tests: it
 * holds texts by absolute path, records every call, and can be told to fail or hold calls. A read
 * of a path it does not hold rejects with a `TextFileNotFoundError`. For tests only.
 */
export class MemoryTextFiles implements TextFileAccess {
  readonly name: string;
  /** Every call, in the order they were made. */
  readonly calls: TextFileCall[] = [];
  /** The texts it holds, by absolute path; writes land here. */
  readonly files: Map<string, string>;
  readonly readTextFile?: (path: string, options: TextFileCallOptions) => Promise<string>;
  readonly writeTextFile?: (
    path: string,
    content: string,
    options: TextFileCallOptions,
  ) => Promise<void>;

  private readonly onCall: MemoryTextFilesOptions['onCall'];
  private readonly ignoreSignal: boolean;

  constructor(options: MemoryTextFilesOptions = {}) {
    this.name = options.name ?? 'the editor';
    const files = options.files ?? {};
    this.files = new Map(Symbol.iterator in files ? files : Object.entries(files));
    this.onCall = options.onCall;
    this.ignoreSignal = options.ignoreSignal === true;
    if (options.capabilities?.read !== false) {
      this.readTextFile = async (path, { signal }) => {
        await this.answer({ method: 'readTextFile', path, signal });
        const text = this.files.get(path);
        if (text === undefined) throw new TextFileNotFoundError(path);
        return text;
      };
    }
    if (options.capabilities?.write !== false) {
      this.writeTextFile = async (path, content, { signal }) => {
        await this.answer({ method: 'writeTextFile', path, content, signal });
        this.files.set(path, content);
      };
    }
  }

  /** The paths of the calls made so far, as `"<method> <path>"`. */
  callLog(): string[] {
    return this.calls.map((call) => `${call.method} ${call.path}`);
  }

  private async answer(call: TextFileCall): Promise<void> {
    this.calls.push(call);
    throwIfAborted(call.signal);
    const held = Promise.resolve(this.onCall?.(call));
    await (this.ignoreSignal ? held : raceAbort(held, call.signal));
    if (!this.ignoreSignal && call.signal.aborted) throw abortReason(call.signal);
  }
}
