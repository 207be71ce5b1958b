/**
 * Characters a display acts on instead of showing: the C0 controls but tab and newline, DEL, the
 * C1 controls (some terminals take U+009B as the start of a command) and the Unicode controls
 * that reorder what is shown (the bidirectional embeddings, overrides and isolates; the plain
 * direction marks that right-to-left text uses are left alone).
 */
// eslint-disable-next-line no-control-regex -- these are the characters it is about
const actedOn = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text from outside claw (the model, a tool's output, an MCP server, an error a server sent) made
 * safe to show to a person: each character a terminal or a browser would act on is written as an
 * escape (`\x1b`, `\u202e`) that shows it was there. Shown as it came, such text could move a
 * terminal's cursor, erase a line, or reorder the characters of a command ("Trojan Source"), and
 * so make an approval question show another command than the one it asks about.
 */
export function visible(text: string): string {
  return text.replace(actedOn, (char) => {
    const code = char.charCodeAt(0);
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

// eslint-disable-next-line no-control-regex -- an escape sequence starts with one
const colourCode = /\u001b\[[0-9;:]*m/g;

/**
 * Output (of a tool, of the model) without its terminal colour codes (`ESC [ … m`): they are how
 * most command output looks on a terminal, and shown anywhere else they are noise; left out,
 * they cannot hide text either (a colour code can make text invisible). Other escape sequences
 * stay, for `visible` to show.
 */
export function withoutColourCodes(text: string): string {
  return text.replace(colourCode, '');
}
