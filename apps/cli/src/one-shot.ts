import {
  UnattendedApprovals,
  type ApprovalHandler,
  type ApprovalPrompt,
  type ElicitationPrompt,
} from '@claw/approval';
import { streamTask } from '@claw/channel';
import type { TaskTally } from '@claw/channel/protocol';
import { isUserError, type ElicitationAnswer } from '@claw/core';
import {
  SessionLifecycle,
  type ApprovalMode,
  type Runtime,
  type RuntimeFactory,
} from '@claw/runtime';
import {
  TerminalApprovals,
  approvalQuestion,
  approvalReask,
  approvalReminder,
  decisionText,
  parseApprovalAnswer,
  unattendedDenial,
  unattendedInputDecline,
} from './approvals.js';
import type { OutputFormat } from './args.js';
import { exitStatus, statusForSignal } from './exit-status.js';
import type { Interrupts } from './interrupts.js';
import { tuneJitForTurns } from './jit.js';
import { LineInput, type InputEntry, type InputStream } from './line-input.js';
import { endLines, exitStatusOf } from './outcome.js';
import type { Output, OutputStream } from './output.js';
import { pastedAnswerNotice, taskRunningNotice } from './repl.js';
import { repairNotice } from './session.js';
import type { Style } from './style.js';
import { createTextReporter } from './text-reporter.js';
import { visible } from './terminal-text.js';
import { tallyEvent, taskResultJson } from './json-result.js';
import { instructionsLines } from './instructions.js';

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
  /** Ready V8 for the task's turns once the runtime is up (see `CliIo.tuneJit`). */
  tuneJit: boolean;
  /** Text output: show all of the model's thinking, not only its first lines. */
  verbose?: boolean;
  /**
   * Awaited once the session is open, before the task starts: notes that must come before the
   * model's output (how bash runs, which calls will be denied).
   */
  beforeStart?: () => Promise<void>;
}

/** What a run of one task shares between its text and its stream-json form. */
interface Run {
  options: OneShotOptions;
  runtime: Runtime;
  approvals: OneShotApprovals;
  /** Aborted (with `canceled by SIGINT`…) on Ctrl-C or SIGTERM. */
  stop: AbortSignal;
  stopSignal: () => NodeJS.Signals | undefined;
}

/**
 * Runs one task and returns the exit status (CLI-5): 0 completed, 1 failed (or max turns), 130
 * canceled by Ctrl-C (143 SIGTERM). Text mode prints the answer on stdout as it streams and tool
 * activity on stderr; stream-json writes only the channel protocol's events to stdout (CLI-7, the
 * same `@claw/channel` code as the server), one per line, from `session_opened` to exactly one
 * of task_completed, task_canceled, task_failed. Calls that would ask are asked on the terminal
 * in mode `ask`; without a terminal (or with `--approval allow` for a call only a person may
 * allow) they are denied, with a note on stderr.
 *
 * @throws SessionLockedError (and other user errors) when the session cannot be opened.
 */
export async function runOneShot(options: OneShotOptions): Promise<number> {
  const { stderr, style } = options;
  const approvals = oneShotApprovals(options);
  // The terminal's own runtime: it answers approvals, and tells what a crash left behind. Opened
  // as every client opens its session (LIFE-1): here, local only, let go when the task is done.
  const sessions = new SessionLifecycle({ factory: options.factory });
  const runtime = await sessions.openLocal({
    id: 'terminal',
    sessionId: options.sessionId,
    workDir: options.workDir,
    approvalHandler: approvals.handler,
  });
  if (options.tuneJit) tuneJitForTurns();
  const input = approvals.listen();
  const stop = new AbortController();
  let stopSignal: NodeJS.Signals | undefined;
  const release = options.interrupts.handle((signal) => {
    if (stopSignal !== undefined) return;
    stopSignal = signal;
    const reason = new Error(`canceled by ${signal}`);
    stop.abort(reason);
    approvals.cancelAll(reason);
    stderr.line(style.dim('claw: canceling the task…')).catch(() => undefined);
  });
  try {
    for (const line of repairNotice(runtime.session)) await stderr.line(style.yellow(`claw: ${line}`));
    for (const line of instructionsLines(runtime.instructions, style)) await stderr.line(line);
    await options.beforeStart?.();
    const stopSignalOf = (): NodeJS.Signals | undefined => stopSignal;
    const run: Run = { options, runtime, approvals, stop: stop.signal, stopSignal: stopSignalOf };
    if (options.format === 'text') return await runText(run);
    return await runStreamJson(run, options.format === 'json' ? 'result' : 'events');
  } finally {
    release();
    input?.close();
    await runtime.close();
    await sessions.close();
  }
}

async function runText(run: Run): Promise<number> {
  const { options, runtime } = run;
  const { stdout, stderr, style } = options;
  const reporter = createTextReporter({
    answer: stdout,
    activity: options.activity,
    style: options.activityStyle,
    verbose: options.verbose === true,
    afterActivity: async () => {
      const asked = run.approvals.asked();
      if (asked !== undefined) await stderr.write(approvalReminder(asked, style));
    },
  });
  reporter.taskStarted();
  const task = runtime.start(options.prompt, reporter);
  const onStop = (): void => task.cancel(run.stop.reason);
  run.stop.addEventListener('abort', onStop, { once: true });
  const result = await task.wait();
  reporter.taskEnded();
  run.stop.removeEventListener('abort', onStop);
  try {
    await stdout.endLine();
    for (const line of endLines(result, reporter.figures(), style)) await stderr.line(line);
  } catch {
    // The output is gone; the exit status still tells how the task ended.
  }
  return exitStatusOf(result, run.stopSignal());
}

/**
 * The task streamed through the channel protocol: its events on stdout (`events`, stream-json),
 * or counted and told at the end as one JSON object (`result`, json; `taskResultJson`).
 */
async function runStreamJson(run: Run, output: 'events' | 'result'): Promise<number> {
  const { options } = run;
  const { stderr, style } = options;
  let tally: TaskTally | undefined;
  const result = await streamTask({
    runtimes: options.factory,
    workDir: options.workDir,
    sessionId: options.sessionId,
    prompt: options.prompt,
    // The result needs only the events' counts: nothing is written until the end.
    write: output === 'events' ? (line) => options.stdout.write(line) : () => Promise.resolve(),
    ...(output === 'result' ? { onEvent: (event) => void (tally = tallyEvent(tally, event)) } : {}),
    signal: run.stop,
  });
  if (output === 'result' && !('closed' in result)) {
    const json = JSON.stringify(taskResultJson(options.sessionId, result, tally));
    await options.stdout.line(json).catch(() => undefined);
  }
  if (result.ok) {
    switch (result.end.type) {
      case 'task_completed':
        return exitStatus.completed;
      case 'task_canceled':
        return statusForSignal(run.stopSignal() ?? 'SIGINT');
      case 'task_failed':
        return exitStatus.failed;
    }
  }
  const problem = 'error' in result ? result.error.message : `the output closed: ${result.closed.message}`;
  await stderr.line(`${style.red('claw:')} ${visible(problem)}`).catch(() => undefined);
  return 'error' in result && isUserError(result.error) ? exitStatus.usage : exitStatus.failed;
}

interface OneShotApprovals {
  handler: ApprovalHandler;
  /** Starts reading answers from the terminal, when questions are asked there. */
  listen(): LineInput | undefined;
  cancelAll(reason: unknown): void;
  /** The question on the terminal waiting for its answer, if any. */
  asked(): ApprovalPrompt | undefined;
}

/**
 * Who answers the questions of a single task: the user on the terminal (mode `ask` with a
 * terminal; stdin is then read only for the answers), else nobody, which denies with a note.
 * When the terminal's input ends, later questions are denied too.
 */
function oneShotApprovals(options: OneShotOptions): OneShotApprovals {
  const { stderr, style, mode } = options;
  const unattended = new UnattendedApprovals({
    explain: (prompt) => stderr.line(style.dim(`claw: ${unattendedDenial(prompt, mode)}`)),
  });
  const terminalInput = options.terminalInput;
  // Nobody to ask for what an MCP server wants (MCP-7): declined, with a note.
  const declineInput = async (prompt: ElicitationPrompt): Promise<ElicitationAnswer> => {
    const why = unattendedInputDecline(prompt.server, terminalInput !== undefined);
    await stderr.line(style.dim(`claw: ${why}`));
    return { action: 'decline' };
  };
  if (terminalInput === undefined || mode !== 'ask') {
    return {
      handler: {
        approve: (prompt, signal) => unattended.approve(prompt, signal),
        elicit: (prompt) => declineInput(prompt),
      },
      listen: () => undefined,
      cancelAll: () => undefined,
      asked: () => undefined,
    };
  }
  const approvals = new TerminalApprovals({
    ask: async (prompt) => {
      await stderr.endLine();
      await stderr.write(approvalQuestion(prompt, style));
    },
    askInput: async (text) => {
      await stderr.endLine();
      await stderr.write(text(style));
    },
  });
  let inputEnded = false;
  return {
    handler: {
      approve: (prompt, signal) =>
        inputEnded ? unattended.approve(prompt, signal) : approvals.approve(prompt, signal),
      elicit: (prompt, signal) =>
        inputEnded ? declineInput(prompt) : approvals.elicit(prompt, signal),
    },
    cancelAll: (reason) => approvals.cancelAll(reason),
    asked: () => approvals.current,
    listen: () => {
      const input = new LineInput({ input: terminalInput, echo: options.echo, prompt: '' });
      input.onEntry((entry) => {
        if (input.terminal) stderr.noteLineEnded();
        answerLine(entry, approvals, stderr, style);
      });
      input.onEnd(() => {
        inputEnded = true;
        approvals.cancelAll(new Error('the input ended before the question was answered'));
      });
      input.onInterrupt(() => options.interrupts.fire('SIGINT'));
      return input;
    },
  };
}

function answerLine(entry: InputEntry, approvals: TerminalApprovals, stderr: Output, style: Style) {
  const write = (text: string): void => void stderr.write(text).catch(() => undefined);
  const line = entry.text;
  if (approvals.current === undefined && approvals.form !== undefined) {
    void approvals.fill(line, style).then((next) => {
      if (next !== undefined) write(next);
    });
    return;
  }
  if (approvals.current === undefined) {
    if (line.trim() !== '') write(`${style.dim(taskRunningNotice)}\n`);
    return;
  }
  if (entry.pasted) {
    write(`${style.yellow(pastedAnswerNotice)}\n${approvalReask(style)}`);
    return;
  }
  const decision = parseApprovalAnswer(line);
  if (decision === undefined) {
    write(approvalReask(style));
    return;
  }
  if (approvals.answer(decision)) write(`  ${decisionText(decision)}\n`);
}
