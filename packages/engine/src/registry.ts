import { ClawError, type Tool, type ToolDefinition } from '@claw/core';

/** The tools of one engine, by name. Names are unique; the order is the order of registration. */
export class ToolRegistry {
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
