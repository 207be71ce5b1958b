import { ClawError, type Tool, type ToolDefinition } from '@claw/core';

/**
 * Tools the engine reads by name: a `ToolRegistry`, or a view whose tools change while it is
 * used (e.g. a workspace's MCP tools). The engine asks it again for every model call and every
 * tool call, so a change shows on the next one.
 */
export interface ToolSource {
  get(name: string): Tool | undefined;
  /** The names, in the source's order. */
  names(): string[];
  definitions(): ToolDefinition[];
}

/**
 * A live view of several sources, read through on every call (nothing is copied). When two hold
 * a tool of the same name, the earlier source's tool is the one used and listed.
 */
export function joinToolSources(...sources: readonly ToolSource[]): ToolSource {
  const visible = (): Array<[ToolSource, string]> => {
    const seen = new Set<string>();
    const entries: Array<[ToolSource, string]> = [];
    for (const source of sources) {
      for (const name of source.names()) {
        if (seen.has(name)) continue;
        seen.add(name);
        entries.push([source, name]);
      }
    }
    return entries;
  };
  return {
    get: (name) => {
      for (const source of sources) {
        const tool = source.get(name);
        if (tool !== undefined) return tool;
      }
      return undefined;
    },
    names: () => visible().map(([, name]) => name),
    definitions: () => visible().flatMap(([source, name]) => {
      const tool = source.get(name);
      return tool === undefined ? [] : [tool.definition];
    }),
  };
}

/** The tools of one engine, by name. Names are unique; the order is the order of registration. */
export class ToolRegistry implements ToolSource {
  private readonly tools = new Map<string, Tool>();

  constructor(tools: Iterable<Tool> = []) {
    for (const tool of tools) this.register(tool);
  }

  /** @throws ClawError `duplicate_tool` when a tool of that name is already registered. */
  register(tool: Tool): void {
    const name = tool.definition.name;
    if (this.tools.has(name)) {
      throw new ClawError(`a tool named "${name}" is already registered; tool names must be unique`, {
        code: 'duplicate_tool',
      });
    }
    this.tools.set(name, tool);
  }

  /** Removes a tool; returns whether it was there. */
  unregister(name: string): boolean {
    return this.tools.delete(name);
  }

  get(name: string): Tool | undefined {
    return this.tools.get(name);
  }

  /** The tools, in registration order. */
  all(): Tool[] {
    return [...this.tools.values()];
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  definitions(): ToolDefinition[] {
    return [...this.tools.values()].map((tool) => tool.definition);
  }

  get size(): number {
    return this.tools.size;
  }
}
