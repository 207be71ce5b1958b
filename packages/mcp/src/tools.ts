import { defineTool, type JsonSchema, type RiskLevel, type Tool } from '@claw/core';
import type { Prompt, Tool as RemoteTool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { McpConnection } from './connection.js';
import { capOutput, formatContent, formatResourceContents, type ContentBlock } from './content.js';

/** The names of the tools claw adds for a server's resources and prompts (MCP-5). */
export const resourceToolNames = { list: 'list_resources', read: 'read_resource' } as const;
export const promptToolName = 'get_prompt';

/** A tool claw offers for a server, before it has its final name. */
export interface McpToolEntry {
  server: string;
  /** The name on the server, or one of the resource and prompt tools' names. */
  tool: string;
  build(name: string): Tool;
}

export interface ToolBuildOptions {
  /** Bytes of output kept per call (like bash's). */
  maxOutputBytes: number;
}

/**
 * The tools of one connection as it stands: each remote tool, then `list_resources` and
 * `read_resource` when the server offers resources, and `get_prompt` when it has prompts.
 */
export function connectionTools(
  connection: McpConnection,
  options: ToolBuildOptions,
): McpToolEntry[] {
  // A server reconnecting keeps its tools: a call gets a clear error instead of "unknown tool".
  if (connection.state !== 'ready' && connection.state !== 'reconnecting') return [];
  const server = connection.name;
  // A tool that runs only as an MCP task cannot be called with tools/call: not offered.
  const callable = connection.tools.filter((remote) => remote.execution?.taskSupport !== 'required');
  const entries: McpToolEntry[] = callable.map((remote) => ({
    server,
    tool: remote.name,
    build: (name) => remoteTool(connection, remote, name, options),
  }));
  if (connection.resources) {
    entries.push(
      {
        server,
        tool: resourceToolNames.list,
        build: (name) => listResourcesTool(connection, name, options),
      },
      {
        server,
        tool: resourceToolNames.read,
        build: (name) => readResourceTool(connection, name, options),
      },
    );
  }
  if (connection.prompts.length > 0) {
    const prompts = connection.prompts;
    entries.push({
      server,
      tool: promptToolName,
      build: (name) => getPromptTool(connection, prompts, name, options),
    });
  }
  return entries;
}

/** The configured risk of a tool: its own override, else the server's (default dangerous). */
function riskOf(connection: McpConnection, tool: string): RiskLevel {
  return connection.config.toolRisk[tool] ?? connection.config.risk;
}

function remoteTool(
  connection: McpConnection,
  remote: RemoteTool,
  name: string,
  options: ToolBuildOptions,
): Tool {
  const server = connection.name;
  const origin = name === `mcp_${server}_${remote.name}`
    ? `[MCP server ${server}]`
    : `[MCP server ${JSON.stringify(server)}, tool ${JSON.stringify(remote.name)}]`;
  const text = remote.description ?? remote.title ?? '';
  const parameters: JsonSchema = { ...(remote.inputSchema as JsonSchema) };
  // A JSON Schema dialect marker means nothing to model APIs; some refuse it.
  delete parameters.$schema;
  return {
    definition: { name, description: text === '' ? origin : `${origin} ${text}`, parameters },
    risk: riskOf(connection, remote.name),
    async execute(args, context) {
      const result = await connection.callTool(remote.name, args as Record<string, unknown>, {
        signal: context.signal,
        ...(context.onProgress === undefined ? {} : { onProgress: context.onProgress }),
      });
      const formatted = formatContent(
        result.content,
        result.structuredContent,
      );
      const content = capOutput(
        formatted === '' ? '(the tool returned no content)' : formatted,
        options.maxOutputBytes,
      );
      return result.isError === true ? { content, isError: true } : { content };
    },
  };
}

function listResourcesTool(connection: McpConnection, name: string, options: ToolBuildOptions) {
  return defineTool({
    name,
    description:
      `[MCP server ${connection.name}] Lists the resources (files, records, documents…) the ` +
      'server offers: their URI, name and type. Read one with this server\'s read_resource tool.',
    risk: riskOf(connection, resourceToolNames.list),
    schema: z.object({}),
    execute: async (_args, context) => {
      const resources = await connection.listResources({ signal: context.signal });
      if (resources.length === 0) return 'the server lists no resources';
      const lines = resources.map((resource) =>
        `- ${resource.uri}` +
        `${resource.name === resource.uri ? '' : ` ${resource.name}`}` +
        `${resource.mimeType === undefined ? '' : ` (${resource.mimeType})`}` +
        `${resource.description === undefined ? '' : ` — ${resource.description}`}`);
      return capOutput(lines.join('\n'), options.maxOutputBytes);
    },
  });
}

function readResourceTool(connection: McpConnection, name: string, options: ToolBuildOptions) {
  return defineTool({
    name,
    description:
      `[MCP server ${connection.name}] Reads one resource of the server by its URI (as this ` +
      'server\'s list_resources tool lists it) and returns its text; binary contents are described.',
    risk: riskOf(connection, resourceToolNames.read),
    schema: z.object({ uri: z.string().min(1).describe('The URI of the resource, as listed.') }),
    execute: async (args, context) => {
      const result = await connection.readResource(args.uri, { signal: context.signal });
      const text = formatResourceContents(result.contents);
      return capOutput(text === '' ? '(the resource is empty)' : text, options.maxOutputBytes);
    },
  });
}

const maxPromptListChars = 2000;

function getPromptTool(
  connection: McpConnection,
  prompts: readonly Prompt[],
  name: string,
  options: ToolBuildOptions,
) {
  let listing = prompts.map((prompt) => {
    const args = (prompt.arguments ?? [])
      .map((argument) => `${argument.name}${argument.required === true ? '*' : ''}`)
      .join(', ');
    return `${prompt.name}(${args})${prompt.description === undefined ? '' : ` — ${prompt.description}`}`;
  }).join('; ');
  if (listing.length > maxPromptListChars) listing = `${listing.slice(0, maxPromptListChars)}…`;
  return defineTool({
    name,
    description:
      `[MCP server ${connection.name}] Gets one of the server's prompts, filled in with its ` +
      `arguments (* = required). Prompts: ${listing}`,
    risk: riskOf(connection, promptToolName),
    schema: z.object({
      name: z.string().min(1).describe('The name of the prompt.'),
      arguments: z.record(z.string(), z.string()).optional()
        .describe('The prompt\'s arguments, by name (text values).'),
    }),
    execute: async (args, context) => {
      const result = await connection.getPrompt(args.name, args.arguments ?? {}, {
        signal: context.signal,
      });
      const messages = result.messages.map((message) =>
        `${message.role}: ${formatContent([message.content as ContentBlock])}`);
      const text = [result.description, ...messages]
        .filter((part): part is string => part !== undefined && part !== '')
        .join('\n\n');
      return capOutput(text === '' ? '(the prompt is empty)' : text, options.maxOutputBytes);
    },
  });
}
