import path from 'node:path';
import type { ToolCall as AcpToolCall, ToolCallContent, ToolKind } from '@agentclientprotocol/sdk';
import type { ToolCall } from '@claw/core';

// How a claw tool call looks in an editor (ACP-2): its kind, a title, the file it touches, and
// for writes and edits a diff.

/** The arguments of a call as an object (an empty one when they are not JSON). */
export function argumentsOf(call: Pick<ToolCall, 'arguments'>): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(call.arguments);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** What kind of work a tool does, as editors group it. */
export function kindOf(name: string): ToolKind {
  switch (name) {
    case 'read_file':
      return 'read';
    case 'write_file':
    case 'edit_file':
      return 'edit';
    case 'bash':
      return 'execute';
    default:
      return 'other';
  }
}

/** A short title: `Read src/main.ts`, `Edit src/main.ts`, `Run npm test`, else the tool's name. */
export function titleOf(call: ToolCall): string {
  const args = argumentsOf(call);
  const file = text(args.path);
  switch (call.name) {
    case 'read_file':
      return file === undefined ? 'Read a file' : `Read ${file}`;
    case 'write_file':
      return file === undefined ? 'Write a file' : `Write ${file}`;
    case 'edit_file':
      return file === undefined ? 'Edit a file' : `Edit ${file}`;
    case 'bash': {
      const command = text(args.command) ?? '';
      const line = command.split('\n')[0] ?? '';
      const short = line.length > 80 ? `${line.slice(0, 79)}…` : line;
      return command === '' ? 'Run a command' : `Run ${short}${command.includes('\n') ? ' …' : ''}`;
    }
    case 'spawn_subagent':
      return 'Hand a task to a helper';
    case 'delegate_agent':
      return 'Hand a task to another agent';
    default:
      return call.name;
  }
}

/** The absolute path of the file a call works on, for the editor to follow; none for others. */
export function filePathOf(call: ToolCall, workDir: string): string | undefined {
  if (!['read_file', 'write_file', 'edit_file'].includes(call.name)) return undefined;
  const file = text(argumentsOf(call).path);
  return file === undefined ? undefined : path.resolve(workDir, file);
}

/**
 * A write's or an edit's diff (`oldText` for a write: the file before it, `null` for a new
 * file; for an edit: the text it replaces). None for other tools.
 */
export function diffOf(
  call: ToolCall,
  workDir: string,
  before: string | null | undefined,
): ToolCallContent[] {
  const args = argumentsOf(call);
  const file = filePathOf(call, workDir);
  if (file === undefined) return [];
  if (call.name === 'write_file' && typeof args.content === 'string') {
    return [{ type: 'diff', path: file, oldText: before ?? null, newText: args.content }];
  }
  if (call.name === 'edit_file' && typeof args.old_string === 'string' && typeof args.new_string === 'string') {
    return [{ type: 'diff', path: file, oldText: args.old_string, newText: args.new_string }];
  }
  return [];
}

/** A tool call as its first update (`tool_call`), pending. */
export function toolCallUpdate(
  call: ToolCall,
  workDir: string,
  before?: string | null,
): AcpToolCall {
  const file = filePathOf(call, workDir);
  return {
    toolCallId: call.id,
    title: titleOf(call),
    kind: kindOf(call.name),
    status: 'pending',
    rawInput: argumentsOf(call),
    ...(file === undefined ? {} : { locations: [{ path: file }] }),
    content: diffOf(call, workDir, before),
  };
}

/** A result as text content (a command's exit code and output, a read's text, an error). */
export function resultContent(result: string): ToolCallContent[] {
  return [{ type: 'content', content: { type: 'text', text: result } }];
}
