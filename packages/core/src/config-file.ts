import { z } from 'zod';
import { errnoCode, errorMessage, throwIfAborted } from './errors.js';

/** The error a workspace configuration file (`.claw/*.json`) fails with; each kind has its own. */
export type ConfigError = (message: string, cause: unknown) => Error;

export interface ParseConfigOptions<Schema extends z.ZodType> {
  file: string;
  schema: Schema;
  /** What the file configures, for messages ("MCP", "A2A"). */
  kind: string;
  /** A small valid file, shown when the text is not JSON. */
  example: string;
  /** The keys an entry takes, shown when the JSON breaks the schema. */
  rules: string;
  fail: ConfigError;
}

/**
 * The text of an optional configuration file, through `read` (core does no I/O itself):
 * `undefined` when there is no such file.
 *
 * @throws the signal's reason when aborted; `fail`'s error when the file cannot be read.
 */
export async function readOptionalConfig(
  file: string,
  options: {
    read: (file: string, signal: AbortSignal | undefined) => Promise<string>;
    signal?: AbortSignal;
    fail: ConfigError;
  },
): Promise<string | undefined> {
  try {
    return await options.read(file, options.signal);
  } catch (error) {
    throwIfAborted(options.signal);
    if (errnoCode(error) === 'ENOENT') return undefined;
    throw options.fail(`cannot read ${file}: ${errorMessage(error)}`, error);
  }
}

/**
 * The JSON text of a configuration file, checked against its schema.
 *
 * @throws `fail`'s error saying what is wrong, where, and what to write instead.
 */
export function parseConfigJson<Schema extends z.ZodType>(
  text: string,
  options: ParseConfigOptions<Schema>,
): z.output<Schema> {
  const { file } = options;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw options.fail(
      `${file} is not valid JSON (${errorMessage(error)}); it should look like ${options.example}`,
      error,
    );
  }
  const parsed = options.schema.safeParse(json);
  if (!parsed.success) {
    throw options.fail(
      `${file} is not a valid ${options.kind} configuration: ` +
      `${z.prettifyError(parsed.error)}\n${options.rules}`,
      parsed.error,
    );
  }
  return parsed.data;
}
