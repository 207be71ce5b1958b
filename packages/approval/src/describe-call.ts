import { canonicalJson } from './digest.js';

/**
 * Longest piece of an argument the policy's reason shows (`describeCall`); the prompt carries the
 * full arguments, for a client to show what the reason leaves out.
 */
export const reasonShowsChars = 300;

/**
 * What a tool call will do, in words, for the approval question: `write_file will write
 * src/a.ts`, `bash will run: npm test`, or, for other tools, their name and arguments.
 */
export function describeCall(toolName: string, args: Record<string, unknown>): string {
  const path = typeof args.path === 'string' ? shorten(args.path) : undefined;
  switch (toolName) {
    case 'write_file':
      if (path !== undefined) return `write_file will write ${path}`;
      break;
    case 'edit_file':
      if (path !== undefined) return `edit_file will edit ${path}`;
      break;
    case 'bash':
      if (typeof args.command === 'string') return `bash will run: ${shorten(args.command)}`;
      break;
    case 'spawn_subagent':
      if (typeof args.task === 'string') {
        return `spawn_subagent will start a subagent for: ${shorten(args.task)}`;
      }
      break;
    default:
      break;
  }
  return `${toolName} will run with arguments ${shorten(canonicalJson(args))}`;
}

function shorten(text: string): string {
  if (text.length <= reasonShowsChars) return text;
  return `${text.slice(0, reasonShowsChars)}… (${text.length} characters)`;
}
