import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Root } from '@modelcontextprotocol/sdk/types.js';

/** A root as servers are told about it (MCP `roots/list`): a `file://` URI and a name. */
export type McpRoot = Root;

/** The root of a workspace (MCP-9): its folder as a `file://` URI, named by its last part. */
export function workspaceRoot(workDir: string): McpRoot {
  const folder = path.resolve(workDir);
  return { uri: pathToFileURL(folder).href, name: path.basename(folder) || folder };
}
