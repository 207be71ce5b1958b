import { z } from 'zod';
import { ClawError } from './errors.js';

/**
 * How much harm a tool can do (CORE-2). The approval policy decides from it: `safe` runs without
 * asking, `mutating` and `dangerous` ask unless a grant or the user's mode says otherwise.
 */
export type RiskLevel = 'safe' | 'mutating' | 'dangerous';
export const riskLevels = ['safe', 'mutating', 'dangerous'] as const satisfies readonly RiskLevel[];

/** A JSON Schema object, as sent to the model in a tool definition. */
export type JsonSchema = Record<string, unknown>;

/** What the model sees of a tool. */
export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: JsonSchema;
}

/** How far a long-running tool call has got (e.g. an MCP server's progress notification). */
export interface ToolProgress {
  /** Grows with every report; its unit is the tool's own (steps, bytes…). */
  progress: number;
  /** The value `progress` will reach, when known. */
  total?: number;
  message?: string;
}

/** Options of each `TextFileAccess` call. */
export interface TextFileCallOptions {
  /** Aborted when the tool call is; the call should stop and reject with its reason. */
  signal: AbortSignal;
}

/**
 * A file system the file tools read and write text through instead of the local one: an
 * editor's (ACP-4), so that the model sees unsaved buffers and its changes show in the editor.
 *
 * The tools still decide what may be touched: a path reaches a method only after the tool's
 * usual checks (inside the workspace, symlinks resolved against the real root, protected paths
 * refused for writes) and after the approval gate. Paths are absolute, spelled through the
 * workspace root as given (`ToolContext.workDir`), not through its real location.
 *
 * Either method may be missing (an editor that offers reading but not writing): the tools then
 * use the local file system for that. `edit_file` goes through it only when both are present, so
 * that it never edits one version of a file and writes the result over another.
 */
export interface TextFileAccess {
  /** Names it in results and errors, e.g. `"the editor"`. */
  readonly name: string;
  /**
   * The whole current text of the file: an open buffer's, saved or not.
   *
   * @throws an error whose `code` is `file_not_found` (e.g. a `TextFileNotFoundError`) when there
   *   is no such file; the tools then answer as for a missing local file. Any other error becomes
   *   an error result naming the file; the signal's reason when aborted.
   */
  readTextFile?(path: string, options: TextFileCallOptions): Promise<string>;
  /**
   * Replaces the whole text of the file, creating it when missing. Creating missing parent
   * folders is the implementation's job (an editor's file system does it or fails); claw creates
   * none.
   *
   * @throws any error when the file could not be written: it becomes an error result naming the
   *   file; the signal's reason when aborted.
   */
  writeTextFile?(path: string, content: string, options: TextFileCallOptions): Promise<void>;
}

/**
 * What a `TextFileAccess` rejects with when the file to read does not exist (`code` is
 * `file_not_found`). Any error with that `code`, anywhere in its cause chain, counts the same.
 */
export class TextFileNotFoundError extends ClawError {
  readonly path: string;

  constructor(path: string, options: { cause?: unknown } = {}) {
    super(`file not found: ${path}`, { code: 'file_not_found', cause: options.cause });
    this.path = path;
  }
}

export interface ToolContext {
  /** Aborted when the run is canceled or the tool's time is up; tools must stop promptly. */
  signal: AbortSignal;
  /** The workspace root; tools resolve every path inside it. */
  workDir: string;
  /**
   * Where the file tools read and write text instead of the local file system (an editor's,
   * ACP-4); absent: the local file system. The path checks stay the tools' own.
   */
  files?: TextFileAccess;
  /**
   * Where a long-running tool reports how far it has got. Optional: the caller may not listen.
   * Called synchronously and never throws back into the tool.
   */
  onProgress?: (progress: ToolProgress) => void;
}

export interface ToolResult {
  content: string;
  /** True when the content reports a failure; the model is told so. */
  isError?: boolean;
}

export type ArgumentsCheck<Args> =
  | { success: true; data: Args }
  | { success: false; error: string };

/**
 * A tool the engine can run (CORE-2). Arguments arrive as the parsed JSON the model sent; when
 * `parseArguments` is present the engine calls it before approval and execution and turns a
 * failure into an error Observation.
 */
export interface Tool<Args = unknown> {
  readonly definition: ToolDefinition;
  readonly risk: RiskLevel;
  /**
   * True for a tool that only reads: running it changes nothing, in the workspace or elsewhere.
   * Its call need not wait for its intent (SES-8) to be flushed to the disk hardware, only for
   * it to be written (see `AgentSession.toolStarted`). Leave it unset for anything with an
   * effect, however small. Default false.
   */
  readonly readOnly?: boolean;
  parseArguments?(args: unknown): ArgumentsCheck<Args>;
  execute(args: Args, context: ToolContext): Promise<ToolResult | string>;
}

export interface DefineToolOptions<Schema extends z.ZodType> {
  name: string;
  description: string;
  risk: RiskLevel;
  /** The tool only reads (see `Tool.readOnly`). Default false. */
  readOnly?: boolean;
  /** zod schema of the arguments object; its JSON Schema is what the model sees. */
  schema: Schema;
  execute(args: z.output<Schema>, context: ToolContext): Promise<ToolResult | string>;
}

const toolNamePattern = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Builds a schema-first `Tool`: the JSON Schema sent to the model is derived from the zod schema,
 * and the same schema validates the model's arguments before approval and execution.
 *
 * @throws TypeError when the name is not 1–64 characters of letters, digits, `_` or `-` (the
 * limit the Chat Completions API puts on function names).
 */
export function defineTool<Schema extends z.ZodType>(
  options: DefineToolOptions<Schema>,
): Tool<z.output<Schema>> {
  if (!toolNamePattern.test(options.name)) {
    throw new TypeError(
      `invalid tool name ${JSON.stringify(options.name)}: use 1-64 letters, digits, "_" or "-"`,
    );
  }
  const parameters = z.toJSONSchema(options.schema, { io: 'input' }) as JsonSchema;
  delete parameters.$schema;
  return {
    definition: { name: options.name, description: options.description, parameters },
    risk: options.risk,
    ...(options.readOnly === true ? { readOnly: true } : {}),
    parseArguments(args: unknown): ArgumentsCheck<z.output<Schema>> {
      const result = options.schema.safeParse(args);
      if (result.success) return { success: true, data: result.data };
      return { success: false, error: z.prettifyError(result.error) };
    },
    execute: (args, context) => options.execute(args, context),
  };
}
