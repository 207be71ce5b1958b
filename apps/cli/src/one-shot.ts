import { repairNotice } from './session.js';
import type { ApprovalHandler } from '@claw/approval';
import type { ApprovalMode, RuntimeFactory } from '@claw/runtime';
import {
  TerminalApprovals,
  UnattendedApprovals,
  approvalQuestion,
  approvalReask,
  decisionText,
  parseApprovalAnswer,
  unattendedDenial,
} from './approvals.js';
import type { OutputFormat } from './args.js';
import type { Interrupts } from './interrupts.js';
import {
  EventWriter,
  approvalRequestEvent,
  createJsonReporter,
  taskEndEvent,
} from './json-events.js';
import { LineInput, type InputStream } from './line-input.js';
import { exitStatusOf, outcomeLine } from './outcome.js';
import type { Output, OutputStream } from './output.js';
import { taskRunningNotice } from './repl.js';
import { flushSession } from './session.js';
import type { Style } from './style.js';
import { createTextReporter } from './text-reporter.js';

export interface OneShotOptions {
  factory: RuntimeFactory;
  workDir: string;
  sessionId: string;
  prompt: string;
  format: OutputFormat;
  /** The answer (text) or the events (stream-json), and nothing else. */
  stdout: Output;
  /** Notes and questions. */
  stderr: Output;
  /** Where text mode shows tool calls and results: stderr for -p, stdout for the demo. */
  activity: Output;
  activityStyle: Style;
  /** The stream behind `stderr`, for a terminal's echo of typed answers. */
  echo: OutputStream;
  /** Style of what goes to stderr. */
  style: Style;
  /** stdin when it is a terminal: questions are then asked there (in mode `ask`). */
  terminalInput: InputStream | undefined;
  mode: ApprovalMode;
  interrupts: Interrupts;
}

/**
 * Runs one task and returns the exit status (CLI-5): 0 completed, 1 failed (or max turns), 130
 * canceled by Ctrl-C. Text mode prints the answer on stdout as it streams and tool activity on
 * stderr; stream-json writes only CH-2 events to stdout, one per line, ending with exactly one
 * of task_completed, task_canceled, task_failed. Calls that would ask are asked on the terminal
 * in mode `ask`; without a terminal (or with `--approval allow` for a call only a person may
 * allow) they are denied, with a note on stderr.
 */
export async function runOneShot(options: OneShotOptions): Promise<number> {
  const { stdout, stderr, style } = options;
  const events = options.format === 'stream-json' ? new EventWriter(stdout) : undefined;
  const approvals = oneShotApprovals(options, events);
  const reporter = events === undefined
    ? createTextReporter({
        answer: stdout,
        activity: options.activity,
        style: options.activityStyle,
      })
    : createJsonReporter(events);
  const runtime = await options.factory.createRuntime({
    sessionId: options.sessionId,
    workDir: options.workDir,
    approvalHandler: approvals.handler,
    reporter,
  });
  for (const line of repairNotice(runtime.session)) await stderr.line(style.yellow(`claw: ${line}`));
  const input = approvals.listen();
  let stopSignal: NodeJS.Signals | undefined;
  try {
    const task = runtime.start(options.prompt);
    const release = options.interrupts.handle((signal) => {
      if (stopSignal !== undefined) return;
      stopSignal = signal;
      const reason = new Error(`canceled by ${signal}`);
      task.cancel(reason);
      approvals.cancelAll(reason);
      stderr.line(style.dim('claw: canceling the task…')).catch(() => undefined);
    });
    const result = await task.wait();
    release();
    input?.close();
    try {
      if (events !== undefined) {
        await events.emit(
          taskEndEvent(result, stopSignal === undefined ? undefined : `canceled by ${stopSignal}`),
        );
      } else {
        await stdout.endLine();
        const line = outcomeLine(result, style);
        if (line !== undefined) await stderr.line(line);
      }
    } catch {
      // The output is gone; the exit status still tells how the task ended.
    }
    return exitStatusOf(result, stopSignal);
  } finally {
    input?.close();
    await runtime.close();
    await flushSession(runtime.session);
  }
}

interface OneShotApprovals {
  handler: ApprovalHandler;
  /** Starts reading answers from the terminal, when questions are asked there. */
  listen(): LineInput | undefined;
  cancelAll(reason: unknown): void;
}

/**
 * Who answers the questions of a single task: the user on the terminal (mode `ask` with a
 * terminal; stdin is then read only for the answers), else nobody, which denies with a note.
 * When the terminal's input ends, later questions are denied too.
 */
function oneShotApprovals(
  options: OneShotOptions,
  events: EventWriter | undefined,
): OneShotApprovals {
  const { stderr, style, mode } = options;
  const unattended = new UnattendedApprovals({
    explain: (prompt) => stderr.line(style.dim(`claw: ${unattendedDenial(prompt, mode)}`)),
  });
  const terminalInput = options.terminalInput;
  if (terminalInput === undefined || mode !== 'ask') {
    return { handler: unattended, listen: () => undefined, cancelAll: () => undefined };
  }
  const approvals = new TerminalApprovals({
    ...(events === undefined
      ? {}
      : { announce: (prompt) => events.emit(approvalRequestEvent(prompt)) }),
    ask: async (prompt) => {
      await stderr.endLine();
      await stderr.write(approvalQuestion(prompt, style));
    },
  });
  let inputEnded = false;
  const result: OneShotApprovals = {
    handler: {
      approve: (prompt, signal) =>
        inputEnded ? unattended.approve(prompt, signal) : approvals.approve(prompt, signal),
    },
    cancelAll: (reason) => approvals.cancelAll(reason),
    listen: () => {
      const input = new LineInput({ input: terminalInput, echo: options.echo, prompt: '' });
      input.onLine((line) => {
        if (input.terminal) stderr.noteLineEnded();
        answerLine(line, approvals, stderr, style);
      });
      input.onEnd(() => {
        inputEnded = true;
        approvals.cancelAll(new Error('the input ended before the question was answered'));
      });
      input.onInterrupt(() => options.interrupts.fire('SIGINT'));
      return input;
    },
  };
  return result;
}

function answerLine(line: string, approvals: TerminalApprovals, stderr: Output, style: Style) {
  const write = (text: string): void => void stderr.write(text).catch(() => undefined);
  if (approvals.current === undefined) {
    if (line.trim() !== '') write(`${style.dim(taskRunningNotice)}\n`);
    return;
  }
  const decision = parseApprovalAnswer(line);
  if (decision === undefined) {
    write(approvalReask(style));
    return;
  }
  if (approvals.answer(decision)) write(`  ${decisionText(decision)}\n`);
}
