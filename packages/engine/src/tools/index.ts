import type { Tool } from '@claw/core';
import { createBashTool, type BashToolOptions } from './bash.js';
import { createEditFileTool } from './edit-file.js';
import { createReadFileTool, type ReadFileToolOptions } from './read-file.js';
import { createWriteFileTool } from './write-file.js';

export {
  bashArguments,
  createBashTool,
  defaultBashMaxTimeoutMs,
  defaultBashTimeoutMs,
  type BashArguments,
  type BashToolOptions,
} from './bash.js';
export type { BuiltinTool } from './builtin-tool.js';
export { createEditFileTool, editFileArguments, type EditFileArguments } from './edit-file.js';
export {
  createReadFileTool,
  readFileArguments,
  type ReadFileArguments,
  type ReadFileToolOptions,
} from './read-file.js';
export { createWriteFileTool, writeFileArguments, type WriteFileArguments } from './write-file.js';

/** Options of {@link builtinTools}, one object per tool that takes any. */
export interface BuiltinToolsOptions {
  readFile?: ReadFileToolOptions;
  bash?: BashToolOptions;
}

/**
 * The built-in tools TOOL-1..4, in this order: `read_file`, `write_file`, `edit_file`, `bash`.
 * `spawn_subagent` (TOOL-5) needs the engine itself and is not among them.
 */
export function builtinTools(options: BuiltinToolsOptions = {}): Tool[] {
  return [
    createReadFileTool(options.readFile),
    createWriteFileTool(),
    createEditFileTool(),
    createBashTool(options.bash),
  ];
}
