import { visible, withoutColourCodes } from '@claw/core';

export { visible };

/**
 * Output (of a tool, of the model) made safe to print on a terminal as `visible` makes any text
 * from outside claw, with its colour codes left out: they are how most output looks on a
 * terminal, and left as escapes they would bury it. Left out, they cannot hide text either (a
 * colour code can make text invisible).
 */
export function visibleOutput(text: string): string {
  return visible(withoutColourCodes(text));
}

/** Streamed answer text made safe as output is; a CRLF line end is a plain line end. */
export function visibleAnswer(text: string): string {
  return visibleOutput(text.replaceAll('\r\n', '\n'));
}
