import {
  ApprovalNotPendingError,
  PendingApprovals,
  reasonShowsChars,
  type ApprovalHandler,
  type ApprovalPrompt,
  type ElicitationPrompt,
} from '@claw/approval';
import {
  abortReason,
  errorMessage,
  type ApprovalDecision,
  type ElicitationAnswer,
} from '@claw/core';
import { TerminalForm } from './elicitation-form.js';
import { describeToolCall, parseArgumentObject } from './format.js';
import type { Style } from './style.js';
import { visible } from './terminal-text.js';

export interface TerminalApprovalsOptions {
  /** Puts one question to the user: called for one request at a time, the oldest waiting. */
  ask(prompt: ApprovalPrompt): void | Promise<void>;
  /** Called for every request as it arrives (e.g. to send an `approval_request` event). */
  announce?(prompt: ApprovalPrompt): void | Promise<void>;
  /**
   * Shows a request for input of an MCP server (MCP-7): its opening question, then what `fill`
   * returns. Without it requests for input are declined (nobody can be asked here).
   */
  askInput?(text: (style: Style) => string): void | Promise<void>;
}

interface FormWait {
  form: TerminalForm;
  settle: (outcome: { answer: ElicitationAnswer } | { error: unknown }) => void;
}

/**
 * The terminal's approval handler (APR-5, CLI-1): it never reads input. `approve` shows the
 * question and waits; the REPL, the only reader of stdin, hands the answer over with `answer`.
 * Calls of one reply can ask at the same time: they are asked one after another, oldest first.
 * An abort (Ctrl-C) or `cancelAll` ends the wait and leaves nothing pending.
 */
export class TerminalApprovals implements ApprovalHandler {
  private readonly pending: PendingApprovals;
  private readonly options: TerminalApprovalsOptions;
  /** The request whose question is on screen. */
  private asked: string | undefined;
  /** Requests for input, oldest first; the first is on screen when `formShown`. */
  private readonly forms: FormWait[] = [];
  private formShown = false;

  constructor(options: TerminalApprovalsOptions) {
    this.options = options;
    this.pending = new PendingApprovals({ onRequest: (prompt) => this.onRequest(prompt) });
  }

  approve(prompt: ApprovalPrompt, signal: AbortSignal): Promise<ApprovalDecision> {
    const decision = this.pending.approve(prompt, signal);
    const next = (): void => this.askNext();
    void decision.then(next, next);
    return decision;
  }

  /** The question on screen, if one is waiting for its answer. */
  get current(): ApprovalPrompt | undefined {
    return this.pending.pendingPrompts().find((prompt) => prompt.requestId === this.asked);
  }

  /** Answers the question on screen; false when none is waiting (any more). */
  answer(decision: ApprovalDecision): boolean {
    const requestId = this.asked;
    if (requestId === undefined) return false;
    try {
      this.pending.respond(requestId, decision);
      return true;
    } catch (error) {
      if (error instanceof ApprovalNotPendingError) return false;
      throw error;
    }
  }

  /**
   * Asks the user to fill in an MCP server's form (MCP-7): shown once no approval question is on
   * screen, answered line by line through `fill`. Declined at once when this terminal has no way
   * to ask (`askInput`). An abort (answered elsewhere, no answer in time) takes it off screen.
   */
  elicit(prompt: ElicitationPrompt, signal: AbortSignal): Promise<ElicitationAnswer> {
    if (this.options.askInput === undefined) return Promise.resolve({ action: 'decline' });
    if (signal.aborted) return Promise.reject(abortReason(signal));
    return new Promise<ElicitationAnswer>((resolve, reject) => {
      const onAbort = (): void => {
        // Said before anything asked next, so that the next line is not taken for its answer.
        if (this.form === wait.form) {
          const why = visible(errorMessage(signal.reason));
          void Promise.resolve(this.options.askInput?.((style) =>
            `${style.dim(`the request for input is no longer asked (${why})`)}\n`,
          )).catch(() => undefined);
        }
        wait.settle({ error: abortReason(signal) });
      };
      const wait: FormWait = {
        form: new TerminalForm(prompt),
        settle: (outcome) => {
          const index = this.forms.indexOf(wait);
          if (index < 0) return;
          this.forms.splice(index, 1);
          signal.removeEventListener('abort', onAbort);
          if (index === 0 && this.formShown) this.formShown = false;
          if ('answer' in outcome) resolve(outcome.answer);
          else if (outcome.error instanceof Error) reject(outcome.error);
          else reject(new Error(errorMessage(outcome.error)));
          this.askNext();
        },
      };
      this.forms.push(wait);
      signal.addEventListener('abort', onAbort, { once: true });
      this.askNext();
    });
  }

  /** The form on screen, if one is waiting for its next line. */
  get form(): TerminalForm | undefined {
    return this.formShown ? this.forms[0]?.form : undefined;
  }

  /**
   * Gives the form on screen a typed line; returns what to show next (the next field, why the
   * line was not taken, or what was sent), or `undefined` when no form is on screen (any more).
   */
  async fill(line: string, style: Style): Promise<string | undefined> {
    const wait = this.formShown ? this.forms[0] : undefined;
    if (wait === undefined) return undefined;
    const step = await wait.form.take(line, style, async (content) => {
      // Loaded when a form is answered, not at start-up (the MCP SDK's validator).
      const { validateElicitationContent } = await import('@claw/mcp');
      return validateElicitationContent(
        wait.form.prompt.requestedSchema as Parameters<typeof validateElicitationContent>[0],
        content,
      );
    });
    if (this.forms[0] !== wait) return undefined;
    if ('answer' in step) wait.settle({ answer: step.answer });
    return step.text;
  }

  /** Ends every wait (Ctrl-C): each `approve` and `elicit` rejects. */
  cancelAll(reason?: unknown): void {
    this.pending.cancelAll(reason);
    const error = reason ?? new Error('the request for input was canceled');
    for (const wait of [...this.forms]) wait.settle({ error });
  }

  private async onRequest(prompt: ApprovalPrompt): Promise<void> {
    await this.options.announce?.(prompt);
    if (this.asked !== undefined || this.formShown) return;
    this.asked = prompt.requestId;
    await this.options.ask(prompt);
  }

  private askNext(): void {
    if (this.asked !== undefined && this.pending.pending().includes(this.asked)) return;
    this.asked = undefined;
    if (this.formShown) return;
    const next = this.pending.pendingPrompts()[0];
    if (next === undefined) {
      this.showForm();
      return;
    }
    this.asked = next.requestId;
    // A question that cannot be shown cannot be answered: fail the waits rather than hang.
    Promise.resolve(this.options.ask(next)).catch((error: unknown) => this.cancelAll(error));
  }

  /** Shows the oldest request for input, when nothing else is on screen. */
  private showForm(): void {
    const wait = this.forms[0];
    if (wait === undefined || this.options.askInput === undefined || this.formShown) return;
    this.formShown = true;
    Promise.resolve(this.options.askInput((style) => wait.form.opening(style)))
      .catch((error: unknown) => wait.settle({ error }));
  }
}

/** `y`/`yes` allow once, `a`/`always` allow for the session, `n`/`no` deny; else undefined. */
export function parseApprovalAnswer(line: string): ApprovalDecision | undefined {
  switch (line.trim().toLowerCase()) {
    case 'y':
    case 'yes':
      return 'allow_once';
    case 'a':
    case 'always':
      return 'allow_session';
    case 'n':
    case 'no':
      return 'deny';
    default:
      return undefined;
  }
}

export const approvalChoices = '[y] allow once  [a] allow for this session  [n] deny';

/**
 * The question for one call, ending with the choices (no newline: the answer follows): the call,
 * what it will do (the policy's reason), and what the reason leaves out that the answer depends
 * on (`approvalDetails`).
 */
export function approvalQuestion(prompt: ApprovalPrompt, style: Style): string {
  const call = describeToolCall({ name: prompt.toolName, arguments: prompt.arguments });
  const reason = visible(prompt.reason)
    .split('\n')
    .map((line) => `  ${line}`);
  const details = approvalDetails(prompt).map((line) => style.dim(`    ${line}`));
  return (
    `${style.yellow('?')} ${style.bold(`approve ${call}`)} ${style.dim(`(risk: ${prompt.risk})`)}\n` +
    `${[...reason, ...details].join('\n')}\n  ${approvalChoices} > `
  );
}

/** Lines of a file's content or an edit shown in a question; the rest is counted. */
const previewLines = 20;
/** Lines of a command shown in a question; a longer one is not shown in part. */
const commandLines = 200;

/**
 * What the answer to an approval depends on and the policy's one-line reason leaves out (each
 * line shown exactly, see `visible`):
 * - `bash`: a command of several lines, or too long for the reason, in full (`$ …`). One of over
 *   200 lines is not shown in part (its end could do anything): the lines say so.
 * - `write_file`: the content's first 20 lines (`+ …`) and how many more there are.
 * - `edit_file`: the text replaced (`- …`) and its replacement (`+ …`), 20 lines of each.
 * - `spawn_subagent`: a task of several lines, or too long for the reason, 20 lines.
 * - other tools: arguments too long for the reason, as JSON, 20 lines.
 */
export function approvalDetails(prompt: Pick<ApprovalPrompt, 'toolName' | 'arguments'>): string[] {
  const args = parseArgumentObject(prompt.arguments);
  const text = (key: string): string | undefined =>
    typeof args?.[key] === 'string' ? args[key] : undefined;
  switch (prompt.toolName) {
    case 'bash': {
      const command = text('command');
      if (command === undefined) break;
      if (!command.includes('\n') && command.length <= reasonShowsChars) return [];
      const lines = command.split('\n');
      if (lines.length > commandLines) {
        return [
          `the command has ${lines.length} lines (${command.length} characters), too many to show ` +
          'here: deny it and ask for a script file you can read first',
        ];
      }
      return lines.map((line) => `$ ${visible(line)}`);
    }
    case 'write_file': {
      const content = text('content');
      if (content === undefined) break;
      if (content === '') return ['(an empty file)'];
      return preview(content, '+ ');
    }
    case 'edit_file': {
      const before = text('old_string');
      const after = text('new_string');
      if (before === undefined || after === undefined) break;
      return [...preview(before, '- '), ...preview(after, '+ ')];
    }
    case 'spawn_subagent': {
      const task = text('task');
      if (task === undefined) break;
      return task.includes('\n') || task.length > reasonShowsChars ? preview(task, '') : [];
    }
    default:
      break;
  }
  // The reason shows short arguments whole.
  if (args === undefined || JSON.stringify(args).length <= reasonShowsChars) return [];
  return preview(JSON.stringify(args, null, 2), '');
}

/** The first `previewLines` lines of `text` with `mark`, then how many are not shown. */
function preview(text: string, mark: string): string[] {
  const lines = text.endsWith('\n') ? text.slice(0, -1).split('\n') : text.split('\n');
  const shown = lines.slice(0, previewLines).map((line) => `${mark}${visible(line)}`);
  const rest = lines.length - shown.length;
  return rest > 0 ? [...shown, `… ${rest} more ${rest === 1 ? 'line' : 'lines'}`] : shown;
}

/**
 * Said again after other output pushed the question on screen up: what is still asked, and the
 * choices (no newline: the answer follows).
 */
export function approvalReminder(prompt: ApprovalPrompt, style: Style): string {
  const call = describeToolCall({ name: prompt.toolName, arguments: prompt.arguments });
  return `  ${style.yellow('still asking:')} approve ${call}? ${approvalChoices} > `;
}

/** Said when a line is not an answer to the question on screen. */
export function approvalReask(style: Style): string {
  return `  ${style.yellow('answer y, a or n')}: ${approvalChoices} > `;
}

/** What was decided, for the transcript. */
export function decisionText(decision: ApprovalDecision): string {
  switch (decision) {
    case 'allow_once':
      return 'allowed once';
    case 'allow_session':
      return 'allowed for this session';
    case 'deny':
      return 'denied';
  }
}

/** Why an unattended run denied a call, for stderr. */
export function unattendedDenial(prompt: ApprovalPrompt, mode: 'ask' | 'allow' | 'deny'): string {
  const call = describeToolCall({ name: prompt.toolName, arguments: prompt.arguments });
  const firstReason = prompt.reason.split('\n').find((line) => /NOT isolated/.test(line));
  if (mode === 'allow') {
    return (
      `denied ${call}: only a person may allow it` +
      `${firstReason === undefined ? '' : ' (bash is NOT isolated on this machine)'}, and this ` +
      'run has nobody to ask. Run claw on a terminal with --approval ask to answer it, or ' +
      'install bubblewrap so that bash runs isolated.'
    );
  }
  return (
    `denied ${call}: it needs approval and there is no terminal to ask on. Use ` +
    '--approval allow to allow such calls, or run claw on a terminal.'
  );
}

/** Why a run with nobody to ask declined an MCP server's request for input (MCP-7), for stderr. */
export function unattendedInputDecline(server: string, terminal: boolean): string {
  return (
    `declined the request for input of MCP server ${JSON.stringify(server)}: ` +
    (terminal
      ? 'this run reads no answers from the terminal (--approval is not ask). Run claw with ' +
      '--approval ask to answer it.'
      : 'there is no terminal to ask on. Run claw on a terminal to answer it.')
  );
}
