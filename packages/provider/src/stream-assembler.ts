import { ClawError, type ModelResponse, type StreamEvent, type ToolCall } from '@claw/core';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { fromFinishReason, fromUsage } from './convert.js';

interface PartialToolCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * Turns Chat Completions stream chunks into claw stream events and assembles the whole reply.
 * Tool calls are assembled by `index`, so several parallel calls whose pieces interleave come out
 * whole; the first non-empty `id` and `name` of an index win (some servers repeat them in every
 * piece, and concatenating would corrupt them).
 */
export class StreamAssembler {
  private text = '';
  private readonly toolCalls = new Map<number, PartialToolCall>();
  private usage: ModelResponse['usage'];
  private finishReason: ModelResponse['finishReason'];
  private model: string | undefined;

  /** True once the server sent a finish reason: the reply itself is complete. */
  get finished(): boolean {
    return this.finishReason !== undefined;
  }

  /** The events one chunk produces, in order. */
  push(chunk: ChatCompletionChunk): StreamEvent[] {
    const events: StreamEvent[] = [];
    if (chunk.model) this.model = chunk.model;
    const usage = fromUsage(chunk.usage);
    if (usage !== undefined) this.usage = usage;
    // claw asks for one choice; ignore any other.
    const choice = chunk.choices.find((candidate) => candidate.index === 0);
    if (choice === undefined) return events;
    const content = choice.delta.content;
    if (typeof content === 'string' && content.length > 0) {
      this.text += content;
      events.push({ type: 'text_delta', delta: content });
    }
    for (const piece of choice.delta.tool_calls ?? []) {
      let call = this.toolCalls.get(piece.index);
      if (call === undefined) {
        call = { id: '', name: '', arguments: '' };
        this.toolCalls.set(piece.index, call);
      }
      const id = piece.id ?? undefined;
      const name = piece.function?.name ?? undefined;
      const argumentsDelta = piece.function?.arguments ?? '';
      const newId = id !== undefined && id !== '' && call.id === '' ? id : undefined;
      const newName = name !== undefined && name !== '' && call.name === '' ? name : undefined;
      if (newId !== undefined) call.id = newId;
      if (newName !== undefined) call.name = newName;
      call.arguments += argumentsDelta;
      if (newId !== undefined || newName !== undefined || argumentsDelta !== '') {
        events.push({
          type: 'tool_call_delta',
          index: piece.index,
          ...(newId === undefined ? {} : { id: newId }),
          ...(newName === undefined ? {} : { name: newName }),
          argumentsDelta,
        });
      }
    }
    const finishReason = fromFinishReason(choice.finish_reason);
    if (finishReason !== undefined) this.finishReason = finishReason;
    return events;
  }

  /**
   * The whole reply.
   *
   * @throws ClawError `invalid_response` when a tool call never got an id or a name.
   */
  response(): ModelResponse {
    const toolCalls: ToolCall[] = [...this.toolCalls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, call]) => {
        if (call.id === '' || call.name === '') {
          throw new ClawError(
            `model stream sent tool call #${index} without ${call.id === '' ? 'an id' : 'a name'}`,
            { code: 'invalid_response' },
          );
        }
        return { id: call.id, name: call.name, arguments: call.arguments };
      });
    return {
      message: {
        role: 'assistant',
        content: this.text,
        ...(toolCalls.length > 0 ? { toolCalls } : {}),
      },
      ...(this.usage === undefined ? {} : { usage: this.usage }),
      ...(this.finishReason === undefined ? {} : { finishReason: this.finishReason }),
      ...(this.model === undefined ? {} : { model: this.model }),
    };
  }
}
