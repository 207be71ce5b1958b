import type { Reporter } from '@claw/core';
import { describeModelRetry } from '@claw/channel/protocol';
import { describeToolCall, summarizeToolResult } from './format.js';
import type { Output } from './output.js';
import type { Style } from './style.js';

export interface TextReporterOptions {
  /** Where the model's text streams. */
  answer: Output;
  /** Where tool calls and results are shown (the same output in the REPL, stderr with -p). */
  activity: Output;
  style: Style;
}

/**
 * The terminal's reporter (CLI-4): the answer streams as it arrives; each tool call is one line
 * (`▸ write_file notes.txt`) and its result another (`✓ wrote 12 bytes…` / `✗ permission
 * denied…`); a model call tried again says why and when (`↻ model call failed, trying again in
 * 0.2 s (attempt 2 of 3): …`). Every callback resolves once the text was written and fails when
 * it cannot be, which stops the run.
 */
export function createTextReporter(options: TextReporterOptions): Reporter {
  const { answer, activity, style } = options;
  const beforeActivity = async (): Promise<void> => {
    await answer.endLine();
    if (activity !== answer) await activity.endLine();
  };
  return {
    onTextDelta: (delta) => answer.write(delta),
    onTextCompleted: () => answer.endLine(),
    onToolCall: async (call) => {
      await beforeActivity();
      await activity.line(`${style.cyan('▸')} ${describeToolCall(call)}`);
    },
    onToolResult: async (result) => {
      await beforeActivity();
      const mark = result.isError ? style.red('✗') : style.green('✓');
      const summary = summarizeToolResult(result);
      await activity.line(`  ${mark} ${result.isError ? summary : style.dim(summary)}`);
    },
    onModelRetry: async (retry) => {
      await beforeActivity();
      const { attempt, attempts, delayMs, reason } = retry;
      const text = describeModelRetry({ attempt, attempts, delay_ms: delayMs, error: reason });
      await activity.line(style.yellow(`↻ ${text}`));
    },
  };
}
