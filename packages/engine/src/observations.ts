import type { ToolMessage } from '@claw/core';

/** The Observation text for a call that was appended but did not finish because the run stopped. */
export const canceledObservationText = 'tool call canceled';

export function canceledObservation(toolCallId: string): ToolMessage {
  return { role: 'tool', toolCallId, content: canceledObservationText, isError: true };
}

/**
 * An error Observation: what went wrong and a short recovery hint for the model (the seed's
 * RecoveryManager), so that the loop can go on and the model can correct itself.
 */
export function errorObservation(toolCallId: string, problem: string, hint: string): ToolMessage {
  return {
    role: 'tool',
    toolCallId,
    content: `Error: ${problem}\nHint: ${hint}`,
    isError: true,
  };
}

export const recoveryHints = {
  unknownTool: (available: readonly string[]) =>
    available.length === 0
      ? 'no tools are available in this run; answer without tools'
      : `call one of the available tools: ${available.join(', ')}`,
  invalidJson: 'send the arguments as one JSON object that matches the tool\'s parameter schema',
  invalidArguments: 'fix the arguments to match the tool\'s parameter schema and call it again',
  denied:
    'do not repeat this call; choose another approach or ask the user for what you need',
  toolFailed:
    'read the error, fix the cause (paths are relative to the workspace), and try again or take another approach',
  journalFailed:
    'the run was stopped because claw could not keep its record of tool calls; the user must fix the session storage first',
  toolBroken:
    'this tool is broken; do not call it again, take another approach',
} as const;
