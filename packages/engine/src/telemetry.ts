import { trace, type Tracer } from '@opentelemetry/api';

/** Span names (OBS-1). */
export const spanNames = {
  run: 'Agent.Run',
  subagent: 'RunSub',
  thinking: 'Thinking',
  action: 'Action',
  tool: 'Tool',
  /** The summary call of a compaction (CMP-6). */
  compact: 'Compact',
  /** The root span of a compaction asked for on its own (`Engine.compact`). */
  compaction: 'Agent.Compact',
} as const;

/**
 * Span attributes. claw's own figures (OBS-2) sit beside the OpenTelemetry GenAI semantic
 * convention names where one exists, so generic GenAI dashboards and claw-eval both read them.
 */
export const attributes = {
  ttfbMs: 'ttfb_ms',
  promptTokens: 'prompt_tokens',
  completionTokens: 'completion_tokens',
  toolWallMs: 'tool_wall_ms',
  costUsd: 'claw.cost.usd',
  turn: 'claw.turn',
  turns: 'claw.run.turns',
  runStatus: 'claw.run.status',
  toolCount: 'claw.tool.count',
  toolOutcome: 'claw.tool.outcome',
  genAiOperation: 'gen_ai.operation.name',
  genAiProvider: 'gen_ai.provider.name',
  genAiAgentName: 'gen_ai.agent.name',
  genAiConversationId: 'gen_ai.conversation.id',
  genAiRequestModel: 'gen_ai.request.model',
  genAiResponseModel: 'gen_ai.response.model',
  genAiFinishReasons: 'gen_ai.response.finish_reasons',
  genAiInputTokens: 'gen_ai.usage.input_tokens',
  genAiOutputTokens: 'gen_ai.usage.output_tokens',
  genAiToolName: 'gen_ai.tool.name',
  genAiToolCallId: 'gen_ai.tool.call.id',
} as const;

/** The engine's tracer: a no-op until the app installs a tracer provider. */
export function defaultTracer(): Tracer {
  return trace.getTracer('@claw/engine');
}
