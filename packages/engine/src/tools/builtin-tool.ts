import type { Tool, ToolContext, ToolResult } from '@claw/core';

/**
 * A `Tool` whose `execute` always resolves to a `ToolResult` object (never a bare string), so
 * callers can read `isError` without narrowing.
 */
export interface BuiltinTool<Args> extends Tool<Args> {
  execute(args: Args, context: ToolContext): Promise<ToolResult>;
}
