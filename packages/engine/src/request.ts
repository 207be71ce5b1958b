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
  /** Sent first in every request; not stored in the session. */
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

/**
 * One model request: the system prompt, the window of the history that fits the model's context
 * next to it and the tool definitions (ENG-8), and the tools.
 */
export function buildRequest(
  history: readonly Message[],
  tools: ToolDefinition[],
  settings: RequestSettings,
): ModelRequest {
  const { systemPrompt } = settings;
  const fixedTokens =
    (systemPrompt === undefined ? 0 : estimateTextTokens(systemPrompt)) +
    estimateTextTokens(JSON.stringify(tools));
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
