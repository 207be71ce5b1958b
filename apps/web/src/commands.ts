// What the message box sends: a prompt, or a command the page turns into its own message (pure).

/** What a text typed in the message box asks for. */
export type ComposerInput =
  | { type: 'prompt'; content: string }
  /** `/compact [what to keep]`: compact the conversation now (CMP-5). */
  | { type: 'compact'; focus?: string };

const compactPattern = /^\/compact(?:\s+([\s\S]*))?$/;

/**
 * `/compact` alone or followed by what the summary must keep (after a space or a new line) is the
 * compact command; anything else, `/compaction` included, is a prompt, sent as typed.
 */
export function parseComposerInput(text: string): ComposerInput {
  const match = compactPattern.exec(text.trim());
  if (match === null) return { type: 'prompt', content: text };
  const focus = match[1]?.trim() ?? '';
  return focus === '' ? { type: 'compact' } : { type: 'compact', focus };
}

/** True for a task started by the compact command (its `task_started` content). */
export function isCompactCommand(content: string): boolean {
  return parseComposerInput(content).type === 'compact';
}

/** The command as the server names the task it starts: `/compact` or `/compact <focus>`. */
export function compactCommandText(focus: string | undefined): string {
  return focus === undefined ? '/compact' : `/compact ${focus}`;
}
