import type { Reporter } from '@claw/core';
import {
  describeCompacted,
  describeModelRetry,
  describeModelWait,
  describeToolProgress,
  modelWaitNoticeMs,
} from '@claw/channel/protocol';
import { describeToolCall, summarizeToolResult } from './format.js';
import type { TaskFigures } from './outcome.js';
import type { Output } from './output.js';
import type { Style } from './style.js';
import { visible, visibleAnswer, visibleOutput } from './terminal-text.js';
import { ThinkingView } from './thinking.js';

export interface TextReporterOptions {
  /** Where the model's text streams. */
  answer: Output;
  /** Where tool calls and results are shown (the same output in the REPL, stderr with -p). */
  activity: Output;
  style: Style;
  /**
   * Called after each line of tool activity, e.g. to say again a question on screen that the line
   * pushed up (tool calls of one reply run side by side, and one may ask while others go on).
   */
  afterActivity?: () => Promise<void>;
  /** Show all of the model's thinking (`--verbose`), not only its first lines. */
  verbose?: boolean;
}

/** The terminal's reporter, and what its user tells it. */
export interface TextReporter extends Reporter {
  /** A task starts: its tool calls and its time are counted from now (`figures`). */
  taskStarted(): void;
  /** The task ended: no more "waiting for the model" lines for it; its time stops. */
  taskEnded(): void;
  /** The tool calls of the last task started and its time (so far, or until it ended). */
  figures(): TaskFigures;
}

/**
 * How long a model call may stay silent before a line says claw is waiting for it, and how often
 * the line comes again while it stays silent.
 */
export const modelWaitNotice = { firstMs: modelWaitNoticeMs, everyMs: 15_000 } as const;

/** The least time between two progress lines of one tool call (a tool may report far faster). */
export const toolProgressEveryMs = 2_000;

/**
 * The terminal's reporter (CLI-4): the answer streams as it arrives; each tool call is one line
 * (`▸ write_file notes.txt`) and its result another (`✓ wrote 12 bytes…` / `✗ permission
 * denied…`); a model call tried again says why and when (`↻ model call failed, trying again in
 * 0.2 s (attempt 2 of 3): …`); a model call silent for 5 s says so (`… waiting for the model:
 * 5 s so far`), and again every 15 s; a running tool's progress is a line (`  … bash: running for
 * 10s; last output: "…"`), at most one per call every 2 s; the model's thinking is dimmed
 * lines (`  ┊ …`) before its answer, its first three lines unless `verbose` (`ThinkingView`).
 * Every callback resolves once its text
 * was written and fails when it cannot be, which stops the run; the waiting and progress lines are
 * informational: nothing waits for them, and they fail nothing.
 */
export function createTextReporter(options: TextReporterOptions): TextReporter {
  const { answer, activity, style } = options;
  const beforeActivity = async (): Promise<void> => {
    await answer.endLine();
    if (activity !== answer) await activity.endLine();
  };
  /** One line of tool activity, on a line of its own. */
  const showActivity = async (line: string): Promise<void> => {
    await beforeActivity();
    await activity.line(line);
    await options.afterActivity?.();
  };
  const wait = new ModelWait((seconds, again) => {
    const text = `… ${describeModelWait(seconds, again)}`;
    // Informational: a line that cannot be written is not worth stopping the run for.
    beforeActivity()
      .then(() => activity.line(style.dim(text)))
      .catch(() => undefined);
  });
  /** The model answered (or the call ended): no line while the rest of the answer comes. */
  const heard = (): void => wait.stop();
  const thinking = new ThinkingView({
    show: showActivity,
    style,
    verbose: options.verbose === true,
  });
  /** The thinking of the model call is over once something else comes. */
  const thought = (): Promise<void> => (thinking.active ? thinking.end() : Promise.resolve());
  /** The running tool calls, and when each last had a progress line (0: never). */
  const running = new Map<string, number>();
  const fresh = () =>
    ({ toolCalls: 0, failedToolCalls: 0, startedAt: performance.now(), endedAt: 0 });
  let task = fresh();
  return {
    onThinking: async (info) => {
      await thought();
      if (info.purpose === 'summary') {
        await showActivity(style.dim('⇣ compacting the conversation: the model summarises its older part…'));
      }
      wait.start();
    },
    onThinkingDelta: (delta) => {
      heard();
      return thinking.delta(delta);
    },
    onTextDelta: (delta) => {
      heard();
      const text = visibleAnswer(delta);
      return thinking.active ? thought().then(() => answer.write(text)) : answer.write(text);
    },
    onTextCompleted: async () => {
      heard();
      await thought();
      await answer.endLine();
    },
    onToolCall: async (call) => {
      heard();
      await thought();
      running.set(call.id, 0);
      await showActivity(`${style.cyan('▸')} ${describeToolCall(call)}`);
    },
    onToolProgress: async (report) => {
      const now = Date.now();
      const last = running.get(report.toolCallId);
      // A call that ended (or never was shown) has nothing to say any more.
      if (last === undefined || now - last < toolProgressEveryMs) return;
      running.set(report.toolCallId, now);
      const text = `  … ${report.toolName}: ${describeToolProgress(report)}`;
      await showActivity(style.dim(visibleOutput(text)));
    },
    onToolResult: async (result) => {
      running.delete(result.toolCallId);
      task.toolCalls += 1;
      if (result.isError) task.failedToolCalls += 1;
      const mark = result.isError ? style.red('✗') : style.green('✓');
      const summary = summarizeToolResult(result);
      await showActivity(`  ${mark} ${result.isError ? summary : style.dim(summary)}`);
    },
    onModelRetry: async (retry) => {
      const { attempt, attempts, delayMs, reason } = retry;
      // The next attempt is waited for afresh, once it starts.
      wait.start(delayMs);
      const text = describeModelRetry({ attempt, attempts, delay_ms: delayMs, error: reason });
      await showActivity(style.yellow(`↻ ${visible(text)}`));
    },
    onMessage: () => {
      heard();
      return thinking.active ? thinking.end() : undefined;
    },
    onUsage: heard,
    onCompacted: async (compaction) => {
      const text = describeCompacted({
        reason: compaction.reason,
        tokens_before: compaction.tokensBefore,
        tokens_after: compaction.tokensAfter,
        pruned_results: compaction.prunedResults,
        summarised_messages: compaction.summarisedMessages,
        ...(compaction.summaryError === undefined ? {} : { error: compaction.summaryError }),
      });
      const line = `⇣ ${visible(text)}`;
      const failed = compaction.summaryError !== undefined;
      await showActivity(failed ? style.yellow(line) : style.dim(line));
    },
    taskStarted: () => {
      task = fresh();
    },
    taskEnded: () => {
      wait.stop();
      thinking.reset();
      running.clear();
      task.endedAt = performance.now();
    },
    figures: () => ({
      toolCalls: task.toolCalls,
      failedToolCalls: task.failedToolCalls,
      elapsedMs: (task.endedAt === 0 ? performance.now() : task.endedAt) - task.startedAt,
    }),
  };
}

/**
 * The clock of one model call's silence: `show(seconds, again)` is called `firstMs` after the
 * call starts, then every `everyMs`, until it is stopped. Its timer never keeps the process up.
 */
class ModelWait {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private since = 0;

  constructor(private readonly show: (seconds: number, again: boolean) => void) {}

  /** A model call starts now, or (a retry) after `delayMs`. */
  start(delayMs = 0): void {
    this.stop();
    this.since = Date.now() + delayMs;
    this.schedule(delayMs + modelWaitNotice.firstMs, false);
  }

  stop(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(ms: number, again: boolean): void {
    // The global `setTimeout`, read at call time (fake timers installed later apply).
    this.timer = setTimeout(() => {
      this.show(Math.round((Date.now() - this.since) / 1000), again);
      this.schedule(modelWaitNotice.everyMs, true);
    }, ms);
    this.timer.unref();
  }
}
