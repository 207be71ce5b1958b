import type { Message, Reporter, ToolCall, ToolResultReport } from '@claw/core';

export type ReporterEvent =
  | { type: 'thinking'; turn: number }
  | { type: 'text_delta'; delta: string }
  | { type: 'thinking_delta'; delta: string }
  | { type: 'text_completed'; text: string }
  | { type: 'tool_call'; call: ToolCall }
  | { type: 'tool_result'; result: ToolResultReport }
  | { type: 'message'; message: Message };

export type ReporterEventType = ReporterEvent['type'];

export interface RecordingReporterOptions {
  /** Make the callback for this event type fail the `nth` time it is called (default: first). */
  failOn?: { type: ReporterEventType; nth?: number; error?: Error };
  /** Called after each event is recorded (e.g. to abort a run at a precise point). */
  onEvent?: (event: ReporterEvent) => void;
}

/** A reporter that records every event in order and can be told to fail. For tests and eval. */
export class RecordingReporter implements Reporter {
  readonly events: ReporterEvent[] = [];
  private readonly counts = new Map<ReporterEventType, number>();

  constructor(private readonly options: RecordingReporterOptions = {}) {}

  /** The event types in order, e.g. for asserting the reporting sequence. */
  get types(): ReporterEventType[] {
    return this.events.map((event) => event.type);
  }

  async onThinking(info: { turn: number }): Promise<void> {
    this.record({ type: 'thinking', turn: info.turn });
  }

  async onTextDelta(delta: string): Promise<void> {
    this.record({ type: 'text_delta', delta });
  }

  async onThinkingDelta(delta: string): Promise<void> {
    this.record({ type: 'thinking_delta', delta });
  }

  async onTextCompleted(text: string): Promise<void> {
    this.record({ type: 'text_completed', text });
  }

  async onToolCall(call: ToolCall): Promise<void> {
    this.record({ type: 'tool_call', call });
  }

  async onToolResult(result: ToolResultReport): Promise<void> {
    this.record({ type: 'tool_result', result });
  }

  async onMessage(message: Message): Promise<void> {
    this.record({ type: 'message', message });
  }

  private record(event: ReporterEvent): void {
    const count = (this.counts.get(event.type) ?? 0) + 1;
    this.counts.set(event.type, count);
    const failOn = this.options.failOn;
    if (failOn?.type === event.type && (failOn.nth ?? 1) === count) {
      throw failOn.error ?? new Error(`reporter failed on ${event.type} #${count}`);
    }
    this.events.push(event);
    this.options.onEvent?.(event);
  }
}
