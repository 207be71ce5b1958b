import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as wait } from 'node:timers/promises';

/** A tool call the fake model makes; `argumentChunks` splits its JSON over several chunks. */
export interface FakeToolCall {
  id?: string;
  name: string;
  arguments: string;
  argumentChunks?: string[];
}

/** Something going wrong with a turn, to test error paths with the real client. */
export type FakeFault =
  /** Answer with this HTTP status and an OpenAI-style error body. */
  | { type: 'status'; status: number; message?: string; headers?: Record<string, string> }
  /**
   * Stop after `afterChunks` data chunks without `[DONE]`: destroy the connection, or with
   * `graceful` end the response cleanly (as a proxy that drops the tail would).
   */
  | { type: 'cut'; afterChunks: number; graceful?: boolean }
  /**
   * Stop answering and keep the connection open: before the response headers, or after the
   * headers and `afterChunks` data chunks.
   */
  | { type: 'hang'; afterChunks?: number };

export interface FakeTurn {
  text?: string;
  /** How `text` is cut into stream chunks; default: one chunk. */
  textChunks?: string[];
  /**
   * The model's reasoning: streamed one chunk per piece, before the text, under `reasoningField`;
   * in a non-streamed reply, the pieces joined in `message[reasoningField]`.
   */
  reasoning?: string[];
  /**
   * The field that carries `reasoning`: `reasoning_content` (DeepSeek, llama.cpp, LM Studio,
   * older vLLM; the default) or `reasoning` (OpenRouter, Ollama, Groq, newer vLLM).
   */
  reasoningField?: 'reasoning_content' | 'reasoning';
  toolCalls?: FakeToolCall[];
  /** Send the pieces of parallel tool calls round-robin instead of one call after another. */
  interleaveToolCalls?: boolean;
  /**
   * Usage for the final chunk; `null` sends none even when the client asks. `cachedTokens`, when
   * given, is sent as `prompt_tokens_details.cached_tokens` (the prompt tokens read from cache).
   */
  usage?: { promptTokens: number; completionTokens: number; cachedTokens?: number } | null;
  finishReason?: string;
  fault?: FakeFault;
  /** Wait before the response starts, before its headers (milliseconds). */
  delayMs?: number;
  /** Wait between data chunks (milliseconds). */
  chunkDelayMs?: number;
  /**
   * A silent wait after the headers (and after any keep-alive comments), before the first data
   * chunk (milliseconds): a server that accepted the request and then says nothing.
   */
  firstChunkDelayMs?: number;
  /** SSE comment lines (`: keep-alive`) sent after the headers, before the first chunk. */
  keepAlive?: { count: number; intervalMs: number };
  /**
   * Answer with exactly this instead of a scripted reply, for any request (streaming or not):
   * the text, reasoning, tool calls, usage, finish reason, keep-alive and fault of the turn are
   * ignored; `delayMs` (before the headers) and `firstChunkDelayMs` (after them) still apply.
   * `body` is written as is; an array is written piece by piece (with `chunkDelayMs` between
   * pieces), so that SSE events, or parts of them, arrive separately.
   */
  raw?: {
    /** Default 200. */
    status?: number;
    /**
     * Default `text/event-stream` when the request asked to stream, else `application/json`.
     */
    contentType?: string;
    /** More response headers. */
    headers?: Record<string, string>;
    body: string | string[];
    /** Wait between the pieces of an array `body` (milliseconds). */
    chunkDelayMs?: number;
  };
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The parsed JSON body (undefined when it was not JSON). */
  body: unknown;
  /**
   * When the request arrived (its headers were read), as `performance.now()` of the process that
   * runs the server: benchmarks time a client from the outside by these.
   */
  receivedAt: number;
  /** Settles when the response's connection closes; `completed` is false when cut short. */
  closed: Promise<{ completed: boolean }>;
}

export type FakeTurnSource = FakeTurn[] | ((body: unknown, index: number) => FakeTurn);

export interface FakeOpenAIServerOptions {
  turns?: FakeTurnSource;
  model?: string;
  /**
   * Called with each request as it is recorded (its body read), before it is answered. It must
   * not throw; what it returns is ignored.
   */
  onRequest?: (request: RecordedRequest) => void;
}

const defaultUsage = { promptTokens: 10, completionTokens: 5 };

/**
 * A fake OpenAI-compatible Chat Completions server on 127.0.0.1 (an OS-chosen port). It answers
 * `POST …/chat/completions` with scripted turns in the real wire format: SSE chunks with a role
 * chunk, reasoning, text and tool-call deltas, the finish reason, a usage chunk when the client
 * asks for one (`stream_options.include_usage`) and `data: [DONE]`; or a plain JSON completion
 * when the client does not stream. A turn may instead give a `raw` answer, written as it is (to
 * replay what a particular server sends). It records every request it receives.
 */
export class FakeOpenAIServer {
  readonly requests: RecordedRequest[] = [];
  private readonly server: Server;
  private readonly turns: FakeTurnSource;
  private readonly model: string;
  private readonly onRequest: ((request: RecordedRequest) => void) | undefined;
  private turnIndex = 0;
  private chunkCounter = 0;

  private constructor(options: FakeOpenAIServerOptions) {
    this.turns = options.turns ?? [];
    this.model = options.model ?? 'fake-model';
    this.onRequest = options.onRequest;
    this.server = createServer((request, response) => {
      const receivedAt = performance.now();
      this.handle(request, response, receivedAt).catch((error: unknown) => {
        if (!response.headersSent) response.writeHead(500);
        response.end(String(error));
      });
    });
  }

  /** Starts a server on 127.0.0.1 and an OS-chosen port; close it with `close()`. */
  static async start(options: FakeOpenAIServerOptions = {}): Promise<FakeOpenAIServer> {
    const instance = new FakeOpenAIServer(options);
    instance.server.listen(0, '127.0.0.1');
    await once(instance.server, 'listening');
    return instance;
  }

  /** Base URL for the `openai` client, e.g. `http://127.0.0.1:41234/v1`. */
  get baseURL(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}/v1`;
  }

  /** Appends turns to an array script. */
  enqueue(...turns: FakeTurn[]): void {
    if (typeof this.turns === 'function') throw new Error('enqueue needs an array of turns');
    this.turns.push(...turns);
  }

  /** Stops listening and drops every open connection (hung ones included). */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async handle(
    request: IncomingMessage,
    response: ServerResponse,
    receivedAt: number,
  ): Promise<void> {
    const raw = await readBody(request);
    let body: unknown;
    try {
      body = raw === '' ? undefined : JSON.parse(raw);
    } catch {
      body = undefined;
    }
    const closed = new Promise<{ completed: boolean }>((resolve) => {
      response.once('close', () => resolve({ completed: response.writableFinished }));
    });
    const recorded: RecordedRequest = {
      method: request.method ?? '',
      path: request.url ?? '',
      headers: request.headers,
      body,
      receivedAt,
      closed,
    };
    this.requests.push(recorded);
    this.onRequest?.(recorded);
    if (request.method !== 'POST' || !(request.url ?? '').endsWith('/chat/completions')) {
      sendError(response, 404, `fake server: no route for ${request.method} ${request.url}`);
      return;
    }
    if (typeof body !== 'object' || body === null) {
      sendError(response, 400, 'fake server: the body is not a JSON object');
      return;
    }
    const turn = this.nextTurn(body);
    if (turn === undefined) {
      sendError(response, 500, `fake server: no scripted turn left for request ${this.turnIndex}`);
      return;
    }
    if (turn.delayMs !== undefined) await wait(turn.delayMs);
    const parsed = body as { stream?: boolean; stream_options?: { include_usage?: boolean } };
    if (turn.raw !== undefined) {
      await writeRaw(response, turn, parsed.stream === true);
      return;
    }
    const fault = turn.fault;
    if (fault?.type === 'status') {
      sendError(response, fault.status, fault.message ?? `fake ${fault.status}`, fault.headers);
      return;
    }
    if (fault?.type === 'hang' && fault.afterChunks === undefined) return;
    if (parsed.stream === true) {
      await this.stream(response, turn, parsed.stream_options?.include_usage === true);
    } else {
      this.complete(response, turn);
    }
  }

  private nextTurn(body: unknown): FakeTurn | undefined {
    const index = this.turnIndex;
    this.turnIndex += 1;
    return typeof this.turns === 'function' ? this.turns(body, index) : this.turns[index];
  }

  private complete(response: ServerResponse, turn: FakeTurn): void {
    const toolCalls = (turn.toolCalls ?? []).map((call, index) => ({
      id: call.id ?? `call_fake_${index}`,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
    const usage = turn.usage === null ? undefined : wireUsage(turn.usage ?? defaultUsage);
    const json = JSON.stringify({
      id: `chatcmpl-fake-${this.turnIndex}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: this.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: turn.text ?? null,
            refusal: null,
            ...(turn.reasoning === undefined
              ? {}
              : { [turn.reasoningField ?? 'reasoning_content']: turn.reasoning.join('') }),
            ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          },
          finish_reason: turn.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
          logprobs: null,
        },
      ],
      ...(usage === undefined ? {} : { usage }),
    });
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(json);
  }

  private async stream(response: ServerResponse, turn: FakeTurn, withUsage: boolean) {
    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    response.flushHeaders();
    for (let count = 0; count < (turn.keepAlive?.count ?? 0); count += 1) {
      response.write(': keep-alive\n\n');
      await wait(turn.keepAlive?.intervalMs ?? 0);
      if (response.destroyed) return;
    }
    if (turn.firstChunkDelayMs !== undefined) {
      await wait(turn.firstChunkDelayMs);
      if (response.destroyed) return;
    }
    const chunks = this.chunksOf(turn, withUsage);
    const fault = turn.fault;
    for (const [index, chunk] of chunks.entries()) {
      if (fault?.type === 'cut' && index === fault.afterChunks) {
        if (fault.graceful === true) response.end();
        else response.destroy();
        return;
      }
      if (fault?.type === 'hang' && index === fault.afterChunks) return;
      if (index > 0 && turn.chunkDelayMs !== undefined) await wait(turn.chunkDelayMs);
      if (response.destroyed) return;
      response.write(`data: ${JSON.stringify(chunk)}\n\n`);
    }
    if (fault?.type === 'hang') return;
    if (fault?.type === 'cut') {
      if (fault.graceful === true) response.end();
      else response.destroy();
      return;
    }
    response.end('data: [DONE]\n\n');
  }

  /** The data chunks of one streamed turn, in the order the real API sends them. */
  private chunksOf(turn: FakeTurn, withUsage: boolean): object[] {
    this.chunkCounter += 1;
    const base = {
      id: `chatcmpl-fake-${this.chunkCounter}`,
      object: 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model: this.model,
    };
    const choice = (delta: object, finishReason: string | null = null) => ({
      ...base,
      choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    });
    const chunks: object[] = [choice({ role: 'assistant', content: '' })];
    const reasoningField = turn.reasoningField ?? 'reasoning_content';
    for (const piece of turn.reasoning ?? []) chunks.push(choice({ [reasoningField]: piece }));
    const text = turn.textChunks ?? (turn.text === undefined ? [] : [turn.text]);
    for (const piece of text) chunks.push(choice({ content: piece }));

    const calls = turn.toolCalls ?? [];
    const pieces = calls.map((call, index) =>
      (call.argumentChunks ?? [call.arguments]).map((argumentsPiece, position) =>
        position === 0
          ? {
              index,
              id: call.id ?? `call_fake_${this.chunkCounter}_${index}`,
              type: 'function',
              function: { name: call.name, arguments: argumentsPiece },
            }
          : { index, function: { arguments: argumentsPiece } },
      ),
    );
    const ordered =
      turn.interleaveToolCalls === true ? roundRobin(pieces) : pieces.flat();
    for (const piece of ordered) chunks.push(choice({ tool_calls: [piece] }));

    const finishReason = turn.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop');
    chunks.push(choice({}, finishReason));
    if (withUsage && turn.usage !== null) {
      chunks.push({ ...base, choices: [], usage: wireUsage(turn.usage ?? defaultUsage) });
    }
    return chunks;
  }
}

function roundRobin<T>(lists: T[][]): T[] {
  const result: T[] = [];
  const longest = Math.max(0, ...lists.map((list) => list.length));
  for (let position = 0; position < longest; position += 1) {
    for (const list of lists) {
      const item = list[position];
      if (item !== undefined) result.push(item);
    }
  }
  return result;
}

function wireUsage(usage: NonNullable<FakeTurn['usage']>) {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    ...(usage.cachedTokens === undefined
      ? {}
      : { prompt_tokens_details: { cached_tokens: usage.cachedTokens } }),
  };
}

/** Writes a turn's `raw` answer as it is (see `FakeTurn.raw`). */
async function writeRaw(
  response: ServerResponse,
  turn: FakeTurn,
  streaming: boolean,
): Promise<void> {
  const raw = turn.raw;
  if (raw === undefined) return;
  response.writeHead(raw.status ?? 200, {
    'content-type': raw.contentType ?? (streaming ? 'text/event-stream' : 'application/json'),
    ...raw.headers,
  });
  response.flushHeaders();
  if (turn.firstChunkDelayMs !== undefined) await wait(turn.firstChunkDelayMs);
  const pieces = typeof raw.body === 'string' ? [raw.body] : raw.body;
  for (const [index, piece] of pieces.entries()) {
    if (index > 0 && raw.chunkDelayMs !== undefined) await wait(raw.chunkDelayMs);
    if (response.destroyed) return;
    response.write(piece);
  }
  response.end();
}

function sendError(
  response: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(
    JSON.stringify({ error: { message, type: 'fake_error', param: null, code: String(status) } }),
  );
}

async function readBody(request: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}
