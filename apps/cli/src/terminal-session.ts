import { SessionLifecycle, type Runtime, type RuntimeFactory } from '@claw/runtime';
import { TerminalApprovals, approvalQuestion, approvalReminder } from './approvals.js';
import { ReplHistory } from './history.js';
import { LineInput, type InputStream } from './line-input.js';
import type { Output, OutputStream } from './output.js';
import { Repl, replContinuation, replPrompt } from './repl.js';
import { repairNotice, sessionListing } from './session.js';
import type { Style } from './style.js';
import { createTextReporter } from './text-reporter.js';

export interface TerminalSessionOptions {
  factory: RuntimeFactory;
  workDir: string;
  sessionId: string;
  input: InputStream;
  /** The stream behind `output`, for the terminal's echo of typed text. */
  echo: OutputStream;
  output: Output;
  style: Style;
  /** Show all of the model's thinking (`--verbose`). */
  verbose?: boolean;
  /** The lines of `/status` (default: none, and the command says so). */
  status?: () => string[];
  /** The REPL's reader of stdin, when it was made before (to ask a question first). */
  replInput?: ReplInput;
}

/** The REPL's one reader of stdin, and on a terminal the history it brings back. */
export interface ReplInput {
  lineInput: LineInput;
  history: ReplHistory | undefined;
}

/** Makes the REPL's reader of stdin (with the workspace's history on a terminal). */
export async function createReplInput(options: {
  input: InputStream;
  echo: OutputStream;
  workDir: string;
}): Promise<ReplInput> {
  // On a terminal, what was typed in earlier runs comes back with up-arrow.
  const history = options.input.isTTY === true
    ? await ReplHistory.open(options.workDir)
    : undefined;
  const lineInput = new LineInput({
    input: options.input,
    echo: options.echo,
    prompt: replPrompt,
    continuation: replContinuation,
    ...(history === undefined ? {} : { history: history.entries }),
  });
  return { lineInput, history };
}

/**
 * The terminal's session (CLI-3), assembled like a channel session: the approval handler
 * (approve/respond, it never reads), the text reporter and the REPL (the only reader of stdin)
 * over one runtime. `close()` is idempotent.
 */
export class TerminalSession {
  readonly runtime: Runtime;
  private readonly sessions: SessionLifecycle;
  private readonly input: LineInput;
  private readonly repl: Repl;
  private readonly history: ReplHistory | undefined;
  private closing: Promise<void> | undefined;

  private constructor(
    opened: { runtime: Runtime; sessions: SessionLifecycle },
    input: LineInput,
    repl: Repl,
    history?: ReplHistory,
  ) {
    this.runtime = opened.runtime;
    this.sessions = opened.sessions;
    this.input = input;
    this.repl = repl;
    this.history = history;
  }

  static async create(options: TerminalSessionOptions): Promise<TerminalSession> {
    const { output, style } = options;
    const approvals = new TerminalApprovals({
      ask: async (prompt) => {
        await output.endLine();
        await output.write(approvalQuestion(prompt, style));
      },
      askInput: async (text) => {
        await output.endLine();
        await output.write(text(style));
      },
    });
    const reporter = createTextReporter({
      answer: output,
      activity: output,
      style,
      verbose: options.verbose === true,
      afterActivity: async () => {
        const asked = approvals.current;
        if (asked !== undefined) await output.write(approvalReminder(asked, style));
        else if (approvals.form !== undefined) await output.write(approvals.form.current(style));
      },
    });
    // Opened as every client opens its session (LIFE-1): here, local only, and let go when the
    // terminal leaves it.
    const sessions = new SessionLifecycle({ factory: options.factory });
    const runtime = await sessions.openLocal({
      id: 'terminal',
      sessionId: options.sessionId,
      workDir: options.workDir,
      approvalHandler: approvals,
      reporter,
    });
    for (const line of repairNotice(runtime.session)) await output.line(style.yellow(line));
    const { lineInput: input, history } = options.replInput ?? await createReplInput(options);
    const repl = new Repl({
      input,
      output,
      style,
      approvals,
      start: (prompt) => {
        reporter.taskStarted();
        const task = runtime.start(prompt);
        void task.wait().finally(() => reporter.taskEnded());
        return task;
      },
      compact: (focus) => {
        reporter.taskStarted();
        const task = runtime.compact(focus === undefined ? {} : { focus });
        void task.wait().finally(() => reporter.taskEnded());
        return task;
      },
      figures: () => reporter.figures(),
      clear: () => runtime.session.clear(),
      listSessions: () => sessionListing(options.factory, options.workDir, options.sessionId),
      status: () => options.status?.() ?? ['no status to show'],
      ...(history === undefined ? {} : { remember: (entry: string) => history.add(entry) }),
    });
    return new TerminalSession({ runtime, sessions }, input, repl, history);
  }

  /** Runs the REPL; resolves with the exit status (0 /exit or end of input, 130 Ctrl-C idle). */
  run(): Promise<number> {
    return this.repl.run();
  }

  /** Ctrl-C or SIGTERM from outside the terminal's own input. */
  interrupt(signal: NodeJS.Signals): void {
    this.repl.interrupt(signal);
  }

  /** Stops reading, cancels and awaits a running task, releases the runtime. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.input.close();
      // Cancels a running task, stores the session and lets it go.
      await this.runtime.close();
      await this.sessions.close();
      await this.history?.flushed();
    })();
    return this.closing;
  }
}
