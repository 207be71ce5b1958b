import {
  ClawError,
  type Compaction,
  type Message,
  type ModelRetryReport,
  type Reporter,
  type ToolCall,
  type ToolProgressReport,
  type ToolResultReport,
  type UsageReport,
} from '@claw/core';

/** A reporter callback failed; the run stops (ENG-7). The callback's error is the cause. */
export class ReporterError extends ClawError {
  constructor(callback: string, cause: unknown) {
    super(`the reporter failed in ${callback}; the run was stopped`, {
      code: 'reporter_failed',
      cause,
    });
  }
}

const settled: Promise<void> = Promise.resolve();

/**
 * Awaits every reporter callback and turns its failure into a `ReporterError`, so the engine can
 * tell a reporter failure from a model or tool failure.
 */
export class SafeReporter {
  constructor(private readonly reporter: Reporter) {}

  thinking(turn: number, purpose?: 'summary'): Promise<void> {
    return this.call('onThinking', () =>
      this.reporter.onThinking?.(purpose === undefined ? { turn } : { turn, purpose }));
  }

  textDelta(delta: string): Promise<void> {
    return this.call('onTextDelta', () => this.reporter.onTextDelta?.(delta));
  }

  thinkingDelta(delta: string): Promise<void> {
    return this.call('onThinkingDelta', () => this.reporter.onThinkingDelta?.(delta));
  }

  textCompleted(text: string): Promise<void> {
    return this.call('onTextCompleted', () => this.reporter.onTextCompleted?.(text));
  }

  toolCall(call: ToolCall): Promise<void> {
    return this.call('onToolCall', () => this.reporter.onToolCall?.(call));
  }

  toolResult(result: ToolResultReport): Promise<void> {
    return this.call('onToolResult', () => this.reporter.onToolResult?.(result));
  }

  /**
   * Progress of a running tool: not awaited, and a failure is ignored (the reporter is told again
   * at the tool's result, whose failure stops the run as always).
   */
  toolProgress(report: ToolProgressReport): void {
    this.call('onToolProgress', () => this.reporter.onToolProgress?.(report)).catch(() => undefined);
  }

  /** A call starts running: like progress, not awaited, and a failure is ignored. */
  toolStarted(call: ToolCall): void {
    this.call('onToolStarted', () => this.reporter.onToolStarted?.(call)).catch(() => undefined);
  }

  /** A model call is tried again: like progress, not awaited, and a failure is ignored. */
  modelRetry(report: ModelRetryReport): void {
    this.call('onModelRetry', () => this.reporter.onModelRetry?.(report)).catch(() => undefined);
  }

  message(message: Message): Promise<void> {
    return this.call('onMessage', () => this.reporter.onMessage?.(message));
  }

  usage(report: UsageReport): Promise<void> {
    return this.call('onUsage', () => this.reporter.onUsage?.(report));
  }

  compacted(compaction: Compaction): Promise<void> {
    return this.call('onCompacted', () => this.reporter.onCompacted?.(compaction));
  }

  /**
   * The reporter of a subagent a running parent spawned (ENG-9): it reports the child's usage
   * (through the parent's `onUsage`, with the shared run figures) and nothing else, since the
   * child's text, tool calls and messages are not the parent's conversation.
   */
  forSubagent(): SafeReporter {
    return new SafeReporter({ onUsage: (report) => this.reporter.onUsage?.(report) });
  }

  /** Runs a callback; its failure, thrown or rejected, comes back as a `ReporterError`. */
  private call(name: string, callback: () => void | Promise<void> | undefined): Promise<void> {
    let result: void | Promise<void> | undefined;
    try {
      result = callback();
    } catch (error) {
      return Promise.reject(new ReporterError(name, error));
    }
    // Most callbacks are done when they return (the runtime's append an event): nothing to wait
    // for then, and no promise made for it (PERF-1: several callbacks a tool call).
    if (result === undefined) return settled;
    return Promise.resolve(result).then(
      () => undefined,
      (error: unknown) => {
        throw new ReporterError(name, error);
      },
    );
  }
}
