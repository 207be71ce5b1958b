// How tool calls read compactly (WEB-2): writes and edits as diffs, bash as command, exit code
// and output. Pure functions over the strings the protocol carries.

import { visible } from '@claw/channel/protocol';

export type Arguments = Record<string, unknown>;

/** The call's arguments as an object, or undefined when they are not a JSON object. */
export function parseArguments(text: string): Arguments | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Arguments)
      : undefined;
  } catch {
    return undefined;
  }
}

export interface DiffLine {
  sign: '+' | '-';
  text: string;
}

function lines(text: string): string[] {
  // No text is no line (an edit whose new_string is empty deletes; it adds no blank line).
  if (text === '') return [];
  const split = text.split('\n');
  // A final newline ends the last line; it does not start another.
  if (split.length > 1 && split.at(-1) === '') split.pop();
  return split;
}

/**
 * The change a write or an edit makes: a write's new content as added lines; an edit's
 * old_string as removed lines and new_string as added ones. Undefined for other tools.
 */
export function diffOf(toolName: string, args: Arguments | undefined): DiffLine[] | undefined {
  if (args === undefined) return undefined;
  if (toolName === 'write_file' && typeof args.content === 'string') {
    return lines(args.content).map((text) => ({ sign: '+', text }));
  }
  if (
    toolName === 'edit_file' &&
    typeof args.old_string === 'string' &&
    typeof args.new_string === 'string'
  ) {
    return [
      ...lines(args.old_string).map((text): DiffLine => ({ sign: '-', text })),
      ...lines(args.new_string).map((text): DiffLine => ({ sign: '+', text })),
    ];
  }
  return undefined;
}

export interface BashOutcome {
  /** `exit code: 0`, `timed out after 30s and was killed`, `killed by signal SIGTERM`. */
  status: string;
  exitCode?: number;
  stdout: string;
  stderr: string;
}

/** The status line and the stdout section's heading. */
const bashHead = /^(?<status>[^\n]*)\n--- stdout(?<noOut> \(empty\))? ---(?:\n|$)/;
const emptyStderr = '--- stderr (empty) ---';
const stderrHeading = '--- stderr ---';

/**
 * Reads bash's result text: `exit code: N`, then `--- stdout ---` and `--- stderr ---` sections
 * (`(empty)` when there was nothing). Undefined when the text has another shape (a denial).
 *
 * The sections are not escaped, so a command may print a heading line itself. An empty stderr
 * ends the text, which settles it; otherwise the last stderr heading is taken (output that prints
 * one is more often stdout, which comes first).
 */
export function parseBashResult(text: string): BashOutcome | undefined {
  const head = bashHead.exec(text);
  const groups = head?.groups;
  if (head === null || groups === undefined) return undefined;
  const status = groups.status ?? '';
  const noStdout = groups.noOut !== undefined;
  const rest = text.slice(head[0].length);
  const sections = splitStderr(rest, noStdout);
  if (sections === undefined) return undefined;
  const code = /^exit code: (-?\d+)$/.exec(status)?.[1];
  return {
    status,
    ...(code === undefined ? {} : { exitCode: Number(code) }),
    stdout: noStdout ? '' : sections.stdout,
    stderr: sections.stderr,
  };
}

/** What follows the stdout heading, as stdout and stderr; undefined without a stderr heading. */
function splitStderr(
  rest: string,
  noStdout: boolean,
): { stdout: string; stderr: string } | undefined {
  if (rest === emptyStderr) return { stdout: '', stderr: '' };
  if (!noStdout && rest.endsWith(`\n${emptyStderr}`)) {
    return { stdout: rest.slice(0, -emptyStderr.length - 1), stderr: '' };
  }
  const heading = `${stderrHeading}\n`;
  // Without stdout, stderr's heading comes first; after stdout, after a line break.
  const at = noStdout ? (rest.startsWith(heading) ? 0 : -1) : rest.lastIndexOf(`\n${heading}`) + 1;
  if (at < 0 || (at === 0 && !noStdout)) return undefined;
  return { stdout: rest.slice(0, Math.max(0, at - 1)), stderr: rest.slice(at + heading.length) };
}

/** A short label for a call: its path or command (shown exactly, see `visible`). */
export function callSummary(args: Arguments | undefined): string | undefined {
  if (args === undefined) return undefined;
  for (const name of ['path', 'command', 'pattern', 'url', 'query', 'task']) {
    const value = args[name];
    if (typeof value === 'string') return visible(value);
  }
  return undefined;
}

export interface ArgumentEntry {
  name: string;
  /** The value as pretty JSON (strings without quotes when folded). */
  text: string;
  /** Long values are folded: the page shows `preview` until opened. */
  folded: boolean;
  preview: string;
}

const foldAtChars = 160;
const foldAtLines = 4;

/**
 * The arguments as entries for the approval card, long values folded. Characters that reorder or
 * hide text are shown as escapes (`visible`): the card shows exactly what the call will get.
 */
export function argumentEntries(text: string): ArgumentEntry[] | undefined {
  const args = parseArguments(text);
  if (args === undefined) return undefined;
  return Object.entries(args).map(([key, value]) => {
    const name = visible(key);
    const full = visible(typeof value === 'string' ? value : JSON.stringify(value, null, 2));
    const shown = typeof value === 'string' ? visible(JSON.stringify(value)) : full;
    const long = full.length > foldAtChars || full.split('\n').length > foldAtLines;
    if (!long) return { name, text: shown, folded: false, preview: shown };
    const count = full.split('\n').length;
    const first = full.split('\n')[0] ?? '';
    const preview = `${first.slice(0, 80)}… (${count} ${count === 1 ? 'line' : 'lines'}, ${full.length} characters)`;
    return { name, text: full, folded: true, preview };
  });
}
