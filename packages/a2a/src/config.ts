import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { expandEnvVariables, parseConfigJson, readOptionalConfig } from '@claw/core';
import { z } from 'zod';
import { A2aConfigError } from './errors.js';

/** Where a workspace's A2A peers are configured, relative to the workspace root. */
export const a2aConfigFile = path.join('.claw', 'a2a.json');

/**
 * How claw speaks to a peer: `a2a` (default) is the official A2A protocol v1.0 (JSON-RPC);
 * `claw` is the seed's own envelope (`POST /a2a/message`) that every claw-server also answers.
 */
export type A2aPeerProtocol = 'a2a' | 'claw';

const peerSchema = z.strictObject({
  url: z.string().min(1),
  headers: z.record(z.string(), z.string()).optional(),
  protocol: z.enum(['a2a', 'claw']).optional(),
  description: z.string().optional(),
});

const fileSchema = z.strictObject({
  peers: z.record(z.string().min(1), peerSchema),
});

/** One remote agent the model may name as `peer`. */
export interface A2aPeer {
  name: string;
  /** The agent's base URL, or the full URL of its agent card (ending in `.json`). */
  url: string;
  /** Sent with every request (`${VAR}` already expanded). */
  headers: Readonly<Record<string, string>>;
  protocol: A2aPeerProtocol;
  description: string | undefined;
}

/** A workspace's A2A configuration, checked and with `${VAR}` expanded. */
export interface A2aConfig {
  file: string;
  peers: readonly A2aPeer[];
}

export interface LoadA2aConfigOptions {
  workDir: string;
  /** Where `${VAR}` is looked up (the app passes the process environment). */
  env: Readonly<Record<string, string | undefined>>;
  signal?: AbortSignal;
}

/**
 * Reads `<workDir>/.claw/a2a.json`. No file: `undefined` (no peers, no error).
 *
 * @throws A2aConfigError when the file is not JSON or breaks a rule (see {@link parseA2aConfig}).
 */
export async function loadA2aConfig(options: LoadA2aConfigOptions): Promise<A2aConfig | undefined> {
  const file = path.join(options.workDir, a2aConfigFile);
  const text = await readOptionalConfig(file, {
    read: (name, signal) => readFile(name, { encoding: 'utf8', signal }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    fail: (message, cause) => new A2aConfigError(message, { file, cause }),
  });
  return text === undefined ? undefined : parseA2aConfig(text, { file, env: options.env });
}

/**
 * Checks the text of an A2A configuration: `{"peers": {"<name>": {"url": ..., "headers":
 * {...}}}}`, unknown keys refused, `url` an http(s) address. `${VAR}` in header values is
 * replaced from `env` as in `mcp.json`: a variable that is missing or empty is an error naming it
 * and the peer (a secret is never sent half-made).
 *
 * @throws A2aConfigError saying what is wrong, where, and what to write instead.
 */
export function parseA2aConfig(
  text: string,
  options: { file: string; env: Readonly<Record<string, string | undefined>> },
): A2aConfig {
  const { file } = options;
  const data = parseConfigJson(text, {
    file,
    schema: fileSchema,
    kind: 'A2A',
    example: '{"peers": {"reviewer": {"url": "https://agents.example.com/reviewer"}}}',
    rules:
      'Each peer needs "url" (the agent\'s base URL or its agent card URL); optional: "headers" ' +
      '(values may use ${ENV_VARIABLE}), "protocol" ("a2a" or "claw"), "description"',
    fail: (message, cause) => new A2aConfigError(message, { file, cause }),
  });
  const peers = Object.entries(data.peers).map(([name, raw]): A2aPeer => {
    const fail = (message: string): never => {
      throw new A2aConfigError(`${file}: A2A peer "${name}": ${message}`, { file, peer: name });
    };
    let url: URL | undefined;
    try {
      url = new URL(raw.url);
    } catch {
      url = undefined;
    }
    if (url === undefined || !['http:', 'https:'].includes(url.protocol)) {
      fail(`"url" must be an http:// or https:// address, got ${JSON.stringify(raw.url)}`);
    }
    const headers = expandEnvVariables(raw.headers ?? {}, (variable) => options.env[variable],
      ({ kind, key, variable }) => {
        if (kind === 'invalid_name') {
          return fail(`headers.${key} holds "\${${variable}}", which is not a variable name ` +
            '(use letters, digits and "_", e.g. ${API_TOKEN})');
        }
        return fail(`headers.${key} uses \${${variable}}, but the environment variable ` +
          `${variable} is ${kind === 'not_set' ? 'not set' : 'empty'}: set it in the ` +
          'environment claw runs in (secrets stay out of a2a.json)');
      });
    return {
      name,
      url: raw.url,
      headers,
      protocol: raw.protocol ?? 'a2a',
      description: raw.description,
    };
  });
  return { file, peers };
}
