import type { ApprovalRequest } from '@claw/core';

/**
 * The call's arguments as an object: the parsed `arguments` of the request, or else its raw JSON
 * parsed here; `{}` when neither is an object.
 */
export function argumentsOf(request: ApprovalRequest): Record<string, unknown> {
  if (isRecord(request.arguments)) return request.arguments;
  try {
    const parsed: unknown = JSON.parse(request.toolCall.arguments);
    if (isRecord(parsed)) return parsed;
  } catch {
    // Not JSON: nothing to inspect.
  }
  return {};
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
