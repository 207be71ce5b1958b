import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgentCard, SendMessageRequest, StreamResponse, Message, Task } from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { errorMessage } from '@claw/core';
import { ClawAgentExecutor, type InboundRunner } from './executor.js';
import { messageText } from './parts.js';

/** The protocol version claw serves; the `A2A-Version` header must name it. */
export const a2aProtocolVersion = '1.0';

export interface A2aJsonRpcServer {
  readonly card: AgentCard;
  /**
   * Answers one JSON-RPC request (`SendMessage`, `SendStreamingMessage`, `GetTask`,
   * `CancelTask`, …): a JSON answer, or an SSE stream for a streaming method. The caller has
   * checked the token and the content type and read the body.
   */
  handle(request: IncomingMessage, response: ServerResponse, body: string): Promise<void>;
}

/**
 * claw as an A2A v1.0 agent over JSON-RPC (A2A-2, A2A-3), on plain `node:http`: the SDK's
 * `DefaultRequestHandler` (tasks in memory) over a `ClawAgentExecutor`, wrapped so that a
 * message without text is refused (-32602) before any run starts, and served through the SDK's
 * framework-neutral `JsonRpcTransportHandler` with the version check (`A2A-Version: 1.0`).
 */
export async function createA2aJsonRpcServer(options: {
  card: AgentCard;
  runner: InboundRunner;
}): Promise<A2aJsonRpcServer> {
  const sdk = await import('@a2a-js/sdk/server');
  const { RequestMalformedError } = await import('@a2a-js/sdk/errors');
  const { formatSSEEvent, formatSSEErrorEvent, SSE_HEADERS } = await import('@a2a-js/sdk');

  const requireText = (params: SendMessageRequest): void => {
    if (messageText(params.message).trim() === '') {
      throw new RequestMalformedError(
        'the message is empty: send a message with at least one text part saying what to do',
      );
    }
  };
  class ClawRequestHandler extends sdk.DefaultRequestHandler {
    override async sendMessage(
      params: SendMessageRequest,
      context: ServerCallContext,
    ): Promise<Message | Task> {
      requireText(params);
      return super.sendMessage(params, context);
    }

    override async *sendMessageStream(
      params: SendMessageRequest,
      context: ServerCallContext,
    ): AsyncGenerator<StreamResponse, void, undefined> {
      requireText(params);
      yield* super.sendMessageStream(params, context);
    }
  }
  const handler: A2ARequestHandler = new ClawRequestHandler(
    options.card,
    new sdk.InMemoryTaskStore(),
    new ClawAgentExecutor(options.runner),
  );
  const transport = new sdk.JsonRpcTransportHandler(handler);
  const user = { isAuthenticated: true, userName: 'claw-server-token' };

  return {
    card: options.card,
    handle: async (request, response, body) => {
      const headerVersion = request.headers['a2a-version'];
      const context = sdk.defaultServerCallContextBuilder({
        extensions: [],
        user,
        headers: request.headers,
        ...(typeof headerVersion === 'string' ? { requestedVersion: headerVersion } : {}),
      });
      const id = requestId(body);
      const errorReply = (error: unknown): { jsonrpc: string; id: unknown; error: unknown } => ({
        jsonrpc: '2.0',
        id,
        error: sdk.JsonRpcTransportHandler.mapToJSONRPCError(error),
      });
      let answer: Awaited<ReturnType<typeof transport.handle>>;
      try {
        // Without `A2A-Version` a v1.0 server assumes 0.3 and refuses (-32009).
        sdk.validateVersion(context.requestedVersion, options.card, 'JSONRPC');
        answer = await transport.handle(body, context);
      } catch (error) {
        return sendJson(response, 200, errorReply(error));
      }
      if (!isAsyncIterable(answer)) return sendJson(response, 200, answer);
      const iterator = answer[Symbol.asyncIterator]();
      let first: IteratorResult<unknown>;
      try {
        first = await iterator.next();
      } catch (error) {
        return sendJson(response, 200, errorReply(error));
      }
      response.writeHead(200, { ...SSE_HEADERS });
      // A client that goes away ends the stream (the task itself runs on; CancelTask stops it).
      const onClose = (): void => void iterator.return?.(undefined).catch(() => undefined);
      response.on('close', onClose);
      try {
        if (first.done !== true) response.write(formatSSEEvent(first.value));
        for (;;) {
          const next = await iterator.next();
          if (next.done === true) break;
          response.write(formatSSEEvent(next.value));
        }
      } catch (error) {
        if (!response.writableEnded) response.write(formatSSEErrorEvent(errorReply(error)));
      } finally {
        response.off('close', onClose);
        if (!response.writableEnded) response.end();
      }
    },
  };
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

function requestId(body: string): unknown {
  try {
    const parsed = JSON.parse(body) as { id?: unknown };
    return parsed.id ?? null;
  } catch {
    return null;
  }
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  let text: string;
  try {
    text = JSON.stringify(body);
  } catch (error) {
    text = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: errorMessage(error) } });
  }
  response.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
  });
  response.end(text);
}
