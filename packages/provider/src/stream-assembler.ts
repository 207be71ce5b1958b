import { ClawError, type ModelResponse, type StreamEvent, type ToolCall } from '@claw/core';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import { fromFinishReason, fromUsage } from './convert.js';
import { ModelServerError } from './errors.js';
import { reasoningOf } from './reasoning.js';

interface PartialToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** A tool-call piece as servers send it: `index` is missing on some (older Ollama). */
type ToolCallPiece = NonNullable<ChatCompletionChunk.Choice.Delta['tool_calls']>[number];

/**
 * Chunk fields the SDK's types do not declare, or declare stricter than servers send them:
 * Groq's older streams put the usage under `x_groq`, and a chunk may come without `choices`.
 */
interface ChunkExtras {
  choices?: ChatCompletionChunk.Choice[] | null;
  x_groq?: { usage?: CompletionUsage | null } | null;
}

function nonEmpty(value: string | null | undefined): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * Turns Chat Completions stream chunks into claw stream events and assembles the whole reply.
 *
 * - Reasoning (`reasoning_content`, `reasoning`, `reasoning_details[].text`; REAL-4) becomes
 *   `reasoning_delta` events and `message.reasoning`, never part of the text.
 * - Tool calls are assembled by `index`, so several parallel calls whose pieces interleave come
 *   out whole; the first non-empty `id` and `name` of a call win (some servers repeat them in
 *   every piece, and concatenating would corrupt them). A piece without `index` belongs to the
 *   last call, and a piece whose `id` differs from its call's starts a new call (servers that
 *   omit the index, or send every call under index 0). Calls are numbered in the order they
 *   start; that number is the `index` of their `tool_call_delta` events.
 * - Usage is read from any chunk that has it (a last chunk with empty `choices`, the finish
 *   chunk, or Groq's `x_groq.usage`).
 */
export class StreamAssembler {
  private text = '';
  private reasoning = '';
  /** The calls in the order they started. */
  private readonly calls: PartialToolCall[] = [];
  /** A server's `index` → position in `calls`. */
  private readonly positions = new Map<number, number>();
  private usage: ModelResponse['usage'];
  private finishReason: ModelResponse['finishReason'];
  private model: string | undefined;

  /** True once the server sent a finish reason: the reply itself is complete. */
  get finished(): boolean {
    return this.finishReason !== undefined;
  }

  /**
   * The events one chunk produces, in order.
   *
   * @throws ModelServerError (retryable) when the chunk ends the reply with
   * `finish_reason: "error"`: a failed generation, never a normal end.
   */
  push(chunk: ChatCompletionChunk): StreamEvent[] {
    const events: StreamEvent[] = [];
    const extras = chunk as ChunkExtras;
    if (chunk.model) this.model = chunk.model;
    const usage = fromUsage(chunk.usage) ?? fromUsage(extras.x_groq?.usage);
    if (usage !== undefined) this.usage = usage;
    // claw asks for one choice; ignore any other.
    const choice = (extras.choices ?? []).find((candidate) => (candidate.index ?? 0) === 0);
    if (choice === undefined) return events;
    const delta = choice.delta ?? {};
    const reasoning = reasoningOf(delta);
    if (reasoning !== '') {
      this.reasoning += reasoning;
      events.push({ type: 'reasoning_delta', delta: reasoning });
    }
    const content = delta.content;
    if (typeof content === 'string' && content.length > 0) {
      this.text += content;
      events.push({ type: 'text_delta', delta: content });
    }
    for (const piece of delta.tool_calls ?? []) {
      const event = this.pushToolCall(piece);
      if (event !== undefined) events.push(event);
    }
    // Not in the SDK's union of finish reasons; OpenRouter sends it when generation failed.
    const finish: string | null = choice.finish_reason;
    if (finish === 'error') {
      throw new ModelServerError(
        { message: 'the reply ended with finish_reason "error"', code: undefined, type: undefined },
        { source: 'stream', retryable: true },
      );
    }
    const finishReason = fromFinishReason(choice.finish_reason);
    if (finishReason !== undefined) this.finishReason = finishReason;
    return events;
  }

  private pushToolCall(piece: ToolCallPiece): StreamEvent | undefined {
    const wireIndex: unknown = piece.index;
    const id = nonEmpty(piece.id);
    const name = nonEmpty(piece.function?.name);
    const argumentsDelta = piece.function?.arguments ?? '';
    let position =
      typeof wireIndex === 'number'
        ? this.positions.get(wireIndex)
        : this.calls.length > 0 ? this.calls.length - 1 : undefined;
    let call = position === undefined ? undefined : this.calls[position];
    // A different id is a different call, whatever index (or none) it came with.
    if (call !== undefined && id !== undefined && call.id !== '' && id !== call.id) call = undefined;
    if (call === undefined || position === undefined) {
      position = this.calls.length;
      call = { id: '', name: '', arguments: '' };
      this.calls.push(call);
    }
    if (typeof wireIndex === 'number') this.positions.set(wireIndex, position);
    const newId = id !== undefined && call.id === '' ? id : undefined;
    const newName = name !== undefined && call.name === '' ? name : undefined;
    if (newId !== undefined) call.id = newId;
    if (newName !== undefined) call.name = newName;
    call.arguments += argumentsDelta;
    if (newId === undefined && newName === undefined && argumentsDelta === '') return undefined;
    return {
      type: 'tool_call_delta',
      index: position,
      ...(newId === undefined ? {} : { id: newId }),
      ...(newName === undefined ? {} : { name: newName }),
      argumentsDelta,
    };
  }

  /**
   * The whole reply; `message.reasoning` holds the reasoning when there was any.
   *
   * @throws ClawError `invalid_response` when a tool call never got an id or a name.
   */
  response(): ModelResponse {
    const toolCalls: ToolCall[] = this.calls.map((call, index) => {
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
        ...(this.reasoning === '' ? {} : { reasoning: this.reasoning }),
      },
      ...(this.usage === undefined ? {} : { usage: this.usage }),
      ...(this.finishReason === undefined ? {} : { finishReason: this.finishReason }),
      ...(this.model === undefined ? {} : { model: this.model }),
    };
  }
}
