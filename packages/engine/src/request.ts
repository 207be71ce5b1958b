import type { Message, ModelRequest, ToolDefinition } from '@claw/core';
import { estimateMessageTokens, estimateTextTokens } from './working-memory.js';

/** What shapes every request of an engine (part of `EngineOptions`). */
export interface RequestSettings {
  /**
   * The system prompt, sent first in every request and not stored in the session; none when
   * absent or empty. (The engine builds it from `EngineOptions`: see `buildSystemPrompt`.)
   */
  systemPrompt?: string;
  /** Model name for requests; default: the provider's own. */
  model?: string;
  /**
   * The model's context size in tokens (default 128,000): the conversation is compacted before
   * a request would fill `compactAtRatio` of it (CMP-1).
   */
  contextWindowTokens?: number;
  /** Tokens kept free for the reply (default 8,192, at most a tenth of the window). */
  reservedOutputTokens?: number;
  /**
   * No longer used: requests are no longer a sliding window of the history, which forgot the
   * task first; the conversation is compacted instead (CMP-2).
   *
   * @deprecated
   */
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

/** The estimated size of a request (ENG-8, CMP-1): its system prompt, tools and messages. */
export function estimateRequestTokens(
  systemPrompt: string | undefined,
  tools: readonly ToolDefinition[],
  messages: readonly Message[],
): number {
  let tokens = systemPrompt === undefined || systemPrompt === '' ? 0 : estimateTextTokens(systemPrompt);
  for (const tool of tools) tokens += estimateDefinitionTokens(tool);
  for (const message of messages) tokens += estimateMessageTokens(message);
  return tokens;
}

/**
 * One model request: the system prompt, then `messages` (the conversation as the model is to
 * see it: compacted, CMP-2), and the tools.
 */
export function buildRequest(
  messages: readonly Message[],
  tools: ToolDefinition[],
  settings: RequestSettings,
): ModelRequest {
  const systemPrompt = settings.systemPrompt === '' ? undefined : settings.systemPrompt;
  return {
    messages:
      systemPrompt === undefined ? [...messages] : [{ role: 'system', content: systemPrompt }, ...messages],
    ...(tools.length > 0 ? { tools } : {}),
    ...(settings.model === undefined ? {} : { model: settings.model }),
  };
}
