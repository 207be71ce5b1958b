import type { Message, ModelRequest, ToolDefinition } from '@claw/core';
import {
  defaultContextWindowTokens,
  defaultMaxWindowMessages,
  defaultReservedOutputTokens,
  estimateTextTokens,
  selectWindow,
} from './working-memory.js';

/** What shapes every request of an engine (part of `EngineOptions`). */
export interface RequestSettings {
  /**
   * The system prompt, sent first in every request and not stored in the session; none when
   * absent or empty. (The engine builds it from `EngineOptions`: see `buildSystemPrompt`.)
   */
  systemPrompt?: string;
  /** Model name for requests; default: the provider's own. */
  model?: string;
  /** The model's context size in tokens, which sizes the history window (default 128,000). */
  contextWindowTokens?: number;
  /** Tokens kept free for the reply (default 8,192). */
  reservedOutputTokens?: number;
  /** Most history messages per request (default 2,000). */
  maxWindowMessages?: number;
}

const definitionEstimates = new WeakMap<ToolDefinition, number>();

/** A tool definition's share of every request, estimated once per definition (ENG-8). */
function estimateDefinitionTokens(definition: ToolDefinition): number {
  let estimate = definitionEstimates.get(definition);
  if (estimate === undefined) {
    // The comma that joins it to the others in the request's list counts too.
    estimate = estimateTextTokens(`${JSON.stringify(definition)},`);
    definitionEstimates.set(definition, estimate);
  }
  return estimate;
}

/**
 * One model request: the system prompt, the window of the history that fits the model's context
 * next to it and the tool definitions (ENG-8), and the tools.
 */
export function buildRequest(
  history: readonly Message[],
  tools: ToolDefinition[],
  settings: RequestSettings,
): ModelRequest {
  const systemPrompt = settings.systemPrompt === '' ? undefined : settings.systemPrompt;
  let fixedTokens = systemPrompt === undefined ? 0 : estimateTextTokens(systemPrompt);
  for (const tool of tools) fixedTokens += estimateDefinitionTokens(tool);
  const window = selectWindow(history, {
    maxTokens: Math.max(
      0,
      (settings.contextWindowTokens ?? defaultContextWindowTokens) -
      (settings.reservedOutputTokens ?? defaultReservedOutputTokens) -
      fixedTokens,
    ),
    maxMessages: settings.maxWindowMessages ?? defaultMaxWindowMessages,
  });
  return {
    messages:
      systemPrompt === undefined ? window : [{ role: 'system', content: systemPrompt }, ...window],
    ...(tools.length > 0 ? { tools } : {}),
    ...(settings.model === undefined ? {} : { model: settings.model }),
  };
}
