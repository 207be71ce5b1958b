import type { Message, ToolCall } from './messages.js';

/** What the reporter is told about one finished tool call. */
export interface ToolResultReport {
  toolCallId: string;
  toolName: string;
  content: string;
  isError: boolean;
}

/**
 * Receives what happens during a run, for a terminal, a socket or a log (CORE-4). Every callback
 * is awaited and may fail: a rejected callback stops the run (ENG-7), so a reporter that cannot
 * deliver (a closed connection) never lets tools run unseen. All callbacks are optional.
 */
export interface Reporter {
  /** A model call is about to start (`turn` counts from 1 within the run). */
  onThinking?(info: { turn: number }): void | Promise<void>;
  onTextDelta?(delta: string): void | Promise<void>;
  /** The whole text of one assistant reply, once it is complete. */
  onTextCompleted?(text: string): void | Promise<void>;
  /** Called before the tool is executed; if it fails the tool does not run. */
  onToolCall?(call: ToolCall): void | Promise<void>;
  onToolResult?(result: ToolResultReport): void | Promise<void>;
  /** Every message appended to the history, in order. */
  onMessage?(message: Message): void | Promise<void>;
}
