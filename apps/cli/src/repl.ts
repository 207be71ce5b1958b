import { SerialQueue, errorMessage } from '@claw/core';
import type { Task } from '@claw/runtime';
import {
  approvalReask,
  decisionText,
  parseApprovalAnswer,
  type TerminalApprovals,
} from './approvals.js';
import { exitStatus, statusForSignal } from './exit-status.js';
import type { InputEntry, LineInput } from './line-input.js';
import { endLines, type TaskFigures } from './outcome.js';
import type { Output } from './output.js';
import type { Style } from './style.js';

export const replPrompt = 'claw> ';
/** The prompt of a line that goes on from the one before (which ended with `\`). */
export const replContinuation = '  ... ';

export const replHelp = `Commands:
  /help       this help
  /clear      forget the conversation so far (token totals and budgets are kept)
  /sessions   list this workspace's sessions and their last activity (resume one with --session)
  /status     the session, model, approval mode, how bash runs, the AGENTS.md instructions the
              model is given, and the tokens and cost so far
  /compact [what to keep]
              make the conversation smaller now: old tool results pruned, the older part
              summarised by the model (your own messages are kept word for word); claw also
              does this by itself when the model's context fills up
  /exit       quit (Ctrl-D too); a running task is canceled first
Anything else starts a task. End a line with \\ to go on on the next one. Pasted text is one
task, whatever its lines: press Enter to send it. Ctrl-C clears what you are typing; with
nothing typed it quits. While a task runs:
  y / a / n   answer an approval question: allow once, allow for this session, deny
  f / d / c   answer an MCP server's request for input: fill in its form, decline, cancel
  Ctrl-C      cancel the task (and its question)`;

export const taskRunningNotice = 'a task is running; wait, or press Ctrl-C to cancel it';
/** Said when pasted text comes while a question waits: only a typed answer answers it. */
export const pastedAnswerNotice = 'pasted text does not answer a question: type the answer';

export interface ReplOptions {
  input: LineInput;
  output: Output;
  style: Style;
  approvals: TerminalApprovals;
  /** Starts a task for a line typed while idle (the runtime's `start`). */
  start(prompt: string): Task;
  /** Compacts the conversation as a task (`/compact [focus]`, the runtime's `compact`). */
  compact?(focus: string | undefined): Task;
  /** What the terminal counted of the task that ended (for its summary, `endLines`). */
  figures?(): TaskFigures;
  /** Empties the conversation (`/clear`; token totals are kept). */
  clear(): Promise<void>;
  /** Lines for `/sessions`. */
  listSessions(): Promise<string[]>;
  /** Lines for `/status`. */
  status?(): string[];
  /** Keeps what was typed to start a task or run a command (the REPL's history). */
  remember?(entry: string): void;
}

/**
 * The REPL (CLI-1, CLI-2): the only reader of stdin. A task runs in the background while the
 * REPL keeps reading: a line answers the approval question on screen (y/a/n, anything else asks
 * again); with a task running and no question it says so; when idle it runs /help, /clear, /exit
 * or starts a task. The prompt is shown only when idle.
 *
 * `run()` resolves with the exit status: 0 after /exit or the end of input, 130 after Ctrl-C
 * while idle (143 for SIGTERM). A running task is canceled and awaited first.
 */
export class Repl {
  private readonly options: ReplOptions;
  private active: Task | undefined;
  private ending = false;
  private readonly lines = new SerialQueue();
  private readonly ended: Promise<number>;
  private resolveEnded!: (status: number) => void;

  constructor(options: ReplOptions) {
    this.options = options;
    this.ended = new Promise<number>((resolve) => {
      this.resolveEnded = resolve;
    });
  }

  /** Starts reading; resolves with the exit status once the REPL ended. */
  run(): Promise<number> {
    const { input } = this.options;
    // Lines are handled one after another: a command still printing (/sessions, /clear) finishes
    // before the next line, /exit or the end of piped input is acted on.
    input.onEntry((entry) => void this.lines.run(() => this.handleEntry(entry)));
    input.onEnd(() => void this.lines.run(() => this.exit(exitStatus.completed)));
    input.onInterrupt(() => this.typedInterrupt());
    this.showPrompt();
    return this.ended;
  }

  /**
   * Ctrl-C typed: as {@link interrupt}, except that when idle with something being typed (a line,
   * or a task of several lines), it drops that and asks afresh instead of ending the REPL.
   */
  private typedInterrupt(): void {
    if (this.ending) return;
    if (this.active === undefined && this.options.input.discardEntry()) {
      this.options.output.noteLineEnded();
      this.showPrompt();
      return;
    }
    this.interrupt('SIGINT');
  }

  /** Ctrl-C: cancels the running task and its question; when idle, ends the REPL. */
  interrupt(signal: NodeJS.Signals): void {
    if (this.ending) return;
    const task = this.active;
    if (task === undefined || signal === 'SIGTERM') {
      void this.exit(statusForSignal(signal));
      return;
    }
    this.say(this.options.style.yellow('^C canceling the task…'));
    const reason = new Error('canceled with Ctrl-C');
    task.cancel(reason);
    this.options.approvals.cancelAll(reason);
  }

  private async handleEntry(entry: InputEntry): Promise<void> {
    if (this.ending) return;
    if (this.options.input.terminal) this.options.output.noteLineEnded();
    const line = entry.text.trim();
    const command = !line.includes('\n') && line.startsWith('/');
    if (command && line === '/exit') {
      void this.exit(exitStatus.completed);
      return;
    }
    if (this.options.approvals.current !== undefined) {
      if (entry.pasted) {
        this.say(this.options.style.yellow(pastedAnswerNotice));
        this.write(approvalReask(this.options.style));
        return;
      }
      this.answer(line);
      return;
    }
    if (this.options.approvals.form !== undefined) {
      // A field of an MCP server's form (MCP-7): pasted text is a fine value.
      const next = await this.options.approvals.fill(line, this.options.style);
      if (next !== undefined) this.write(next);
      return;
    }
    if (this.active !== undefined) {
      if (line !== '') this.say(this.options.style.dim(taskRunningNotice));
      return;
    }
    if (line === '') {
      this.showPrompt();
      return;
    }
    this.options.remember?.(line);
    if (command) {
      await this.command(line);
      return;
    }
    this.startTask(line);
  }

  private answer(line: string): void {
    const { approvals, output, style } = this.options;
    const decision = parseApprovalAnswer(line);
    if (decision === undefined) {
      this.write(approvalReask(style));
      return;
    }
    if (approvals.answer(decision)) {
      const text = decisionText(decision);
      this.say(`  ${decision === 'deny' ? style.red(text) : style.green(text)}`);
    } else if (!output.atLineStart) {
      this.say('');
    }
  }

  private async command(line: string): Promise<void> {
    const { style } = this.options;
    const compact = /^\/compact(?:\s+([^]*))?$/.exec(line);
    if (compact !== null && this.options.compact !== undefined) {
      const focus = compact[1]?.trim() || undefined;
      this.startTask(line, () => this.options.compact?.(focus) ?? this.options.start(line));
      return;
    }
    switch (line) {
      case '/help':
        this.say(replHelp);
        break;
      case '/clear': {
        try {
          await this.options.clear();
          this.say('the conversation was cleared (token totals are kept)');
        } catch (error) {
          this.say(style.red(`could not clear the conversation: ${errorMessage(error)}`));
        }
        break;
      }
      case '/status':
        this.say((this.options.status?.() ?? ['no status to show']).join('\n'));
        break;
      case '/sessions': {
        try {
          this.say((await this.options.listSessions()).join('\n'));
        } catch (error) {
          this.say(style.red(`could not list the sessions: ${errorMessage(error)}`));
        }
        break;
      }
      default:
        this.say(`unknown command ${line}; type /help for the commands`);
    }
    if (!this.ending) this.showPrompt();
  }

  private startTask(prompt: string, start = () => this.options.start(prompt)): void {
    let task: Task;
    try {
      task = start();
    } catch (error) {
      this.say(this.options.style.red(`could not start the task: ${errorMessage(error)}`));
      this.showPrompt();
      return;
    }
    this.active = task;
    // Piped input is not echoed: start the answer on a line of its own, not after the prompt.
    if (!this.options.input.terminal) this.options.output.endLine().catch(() => undefined);
    void this.watch(task);
  }

  private async watch(task: Task): Promise<void> {
    const result = await task.wait();
    if (this.active === task) this.active = undefined;
    const lines = endLines(result, this.options.figures?.(), this.options.style);
    try {
      await this.options.output.endLine();
      for (const line of lines) await this.options.output.line(line);
    } catch {
      void this.exit(exitStatus.failed);
      return;
    }
    if (!this.ending) this.showPrompt();
  }

  private async exit(status: number): Promise<void> {
    if (this.ending) return;
    this.ending = true;
    const task = this.active;
    if (task !== undefined) {
      const reason = new Error('claw is exiting');
      task.cancel(reason);
      this.options.approvals.cancelAll(reason);
      await task.wait();
    }
    this.options.input.close();
    this.resolveEnded(status);
  }

  private showPrompt(): void {
    if (this.ending || this.active !== undefined) return;
    const { input } = this.options;
    if (input.terminal) {
      void this.options.output.endLine().then(() => input.showPrompt(), () => undefined);
    } else {
      this.write(`${this.options.output.atLineStart ? '' : '\n'}${replPrompt}`);
    }
  }

  /** Writes a line; a broken output ends the REPL. */
  private say(text: string): void {
    this.options.output.line(text).catch(() => void this.exit(exitStatus.failed));
  }

  private write(text: string): void {
    this.options.output.write(text).catch(() => void this.exit(exitStatus.failed));
  }
}
