import { formatBytes, type ProjectInstructions } from '@claw/runtime';
import type { Style } from './style.js';
import { visible } from './terminal-text.js';

/**
 * What claw says at start-up about the project instructions the model is given (REAL-2): one dim
 * line naming each file and its size (`instructions: AGENTS.md (1.2 KB), sub/AGENTS.md (300 B)`),
 * none when there are no files; then a yellow line for each one skipped or cut.
 */
export function instructionsLines(instructions: ProjectInstructions, style: Style): string[] {
  const lines: string[] = [];
  if (instructions.files.length > 0) {
    const files = instructions.files.map((file) =>
      `${visible(file.path)} (${formatBytes(file.bytes)}${file.truncated === true ? ', cut' : ''})`);
    lines.push(style.dim(`instructions: ${files.join(', ')}`));
  }
  for (const warning of instructions.warnings) lines.push(style.yellow(`claw: ${visible(warning)}`));
  return lines;
}
