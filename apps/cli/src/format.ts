import type { ToolCall, ToolResultReport } from '@claw/core';
import { visible, visibleOutput } from './terminal-text.js';

const maxWidth = 100;

/**
 * A tool call in a few words: `write_file notes.txt`, `bash npm test`,
 * `spawn_subagent summarise the README`; other tools show their arguments, shortened.
 */
export function describeToolCall(call: Pick<ToolCall, 'name' | 'arguments'>): string {
  const args = parseArgumentObject(call.arguments);
  const main =
    stringField(args, 'path') ??
    stringField(args, 'command') ??
    stringField(args, 'task') ??
    stringField(args, 'message') ??
    (Object.keys(args ?? {}).length === 0 ? '' : call.arguments);
  return shorten(visible(oneLine(main === '' ? call.name : `${call.name} ${main}`)), maxWidth);
}

/**
 * The first line or so of a tool result: `wrote 12 bytes to notes.txt (created)`,
 * `exit code 0 · Hello, claw!`, `permission denied: …`. An error's "Error: " prefix and its
 * recovery hint (meant for the model) are left out.
 */
export function summarizeToolResult(result: Pick<ToolResultReport, 'toolName' | 'content'>): string {
  const content = visibleOutput(result.content.replace(/^Error: /, ''));
  const lines = content.split('\n');
  const first = lines[0] ?? '';
  if (result.toolName === 'bash' && /^exit code: \d+$/.test(first)) {
    const output = firstOutputLine(lines);
    const status = first.replace(':', '');
    return shorten(output === undefined ? status : `${status} · ${output}`, maxWidth);
  }
  if (result.toolName === 'read_file' && !result.content.startsWith('Error: ')) {
    const count = content === '' ? 0 : lines.length;
    return `read ${count} ${count === 1 ? 'line' : 'lines'}`;
  }
  const rest = lines.slice(1).filter((line) => line.trim() !== '' && !line.startsWith('Hint: '));
  const more = rest.length > 0 ? ' …' : '';
  return shorten(first, maxWidth - more.length) + more;
}

/** The first non-empty line of a bash result's stdout, else of its stderr. */
function firstOutputLine(lines: readonly string[]): string | undefined {
  let section: string | undefined;
  let stderrLine: string | undefined;
  for (const line of lines.slice(1)) {
    const header = /^--- (stdout|stderr)( \(empty\))? ---$/.exec(line);
    if (header !== null) {
      section = header[1];
      continue;
    }
    if (line.trim() === '') continue;
    if (section === 'stdout') return line.trim();
    if (section === 'stderr') stderrLine ??= line.trim();
  }
  return stderrLine;
}

/** The arguments of a tool call as an object, or undefined when they are not a JSON object. */
export function parseArgumentObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function stringField(args: Record<string, unknown> | undefined, key: string): string | undefined {
  const value = args?.[key];
  return typeof value === 'string' ? value : undefined;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ⏎ ');
}

/** Cuts `text` to `width` characters, ending with … when cut. */
export function shorten(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`;
}
