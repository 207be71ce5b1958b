import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgentCard, SendMessageRequest, StreamResponse, Message, Task } from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { errorMessage } from '@claw/core';
import { ClawAgentExecutor, type InboundRunner } from './executor.js';
import { messageText } from './parts.js';
import { attachInboundSlot, InboundTaskLimit } from './task-limit.js';
import { InboundTaskStore } from './task-store.js';

/** The protocol version claw serves; the `A2A-Version` header must name it. */
export const a2aProtocolVersion = '1.0';

/**
 * The JSON-RPC error code of a message refused because the server runs its maximum of inbound
 * tasks: from JSON-RPC's implementation-defined server errors, outside the A2A codes
 * (-32001 and on), since A2A 1.0 has none that means "not now, try again".
 */
export const tooManyTasksErrorCode = -32000;

export interface A2aJsonRpcServer {
  readonly card: AgentCard;
  /** The inbound tasks (running, and finished ones still answerable). */
  readonly tasks: InboundTaskStore;
  /** The limit on inbound tasks that run at once. */
  readonly limit: InboundTaskLimit;
  /**
   * Answers one JSON-RPC request (`SendMessage`, `SendStreamingMessage`, `GetTask`,
   * `CancelTask`, …): a JSON answer, or an SSE stream for a streaming method. The caller has
   * checked the token and the content type and read the body.
   */
  handle(request: IncomingMessage, response: ServerResponse, body: string): Promise<void>;
}

export interface A2aJsonRpcServerOptions {
  /** The agent card; only its capabilities and interfaces' protocol version matter here. */
  card: AgentCard;
  runner: InboundRunner;
  /** Where the tasks are kept (default: an `InboundTaskStore` with its defaults). */
  tasks?: InboundTaskStore;
  /** The limit on inbound tasks at once, shared with other ways in (default: 8). */
  limit?: InboundTaskLimit;
}

/**
 * claw as an A2A v1.0 agent over JSON-RPC (A2A-2, A2A-3, TRUST-6), on plain `node:http`: the
 * SDK's `DefaultRequestHandler` over an `InboundTaskStore` and a `ClawAgentExecutor`, wrapped so
 * that a message without text is refused (-32602), and a message that would start a task beyond
 * the limit on inbound tasks is refused ({@link tooManyTasksErrorCode}), before any run starts;
 * served through the SDK's framework-neutral `JsonRpcTransportHandler` with the version check
 * (`A2A-Version: 1.0`).
 *
 * A message naming a `taskId` starts nothing: the SDK refuses one for an unknown or finished task,
 * and claw refuses one for a task that still runs (a claw run takes no messages while it runs).
 * A message with only a `contextId` starts a new task, under the limit like any other.
 */
export async function createA2aJsonRpcServer(
  options: A2aJsonRpcServerOptions,
): Promise<A2aJsonRpcServer> {
  const sdk = await import('@a2a-js/sdk/server');
  const { JsonRpcTransportError, RequestMalformedError, UnsupportedOperationError } =
    await import('@a2a-js/sdk/errors');
  const { formatSSEEvent, formatSSEErrorEvent, SSE_HEADERS } = await import('@a2a-js/sdk');
  const tasks = options.tasks ?? new InboundTaskStore();
  const limit = options.limit ?? new InboundTaskLimit();

  const requireText = (params: SendMessageRequest): void => {
    if (messageText(params.message).trim() === '') {
      throw new RequestMalformedError(
        'the message is empty: send a message with at least one text part saying what to do',
      );
    }
  };
  /** A slot for a message that starts a task; `undefined` for one that continues a task. */
  const admit = async (
    params: SendMessageRequest,
    context: ServerCallContext,
  ): Promise<{ release(): void } | undefined> => {
    requireText(params);
    const taskId = params.message?.taskId ?? '';
    if (taskId !== '') {
      const task = await tasks.load(taskId, context);
      // Unknown or finished: the SDK answers (task not found, or a terminal task).
      if (task !== undefined && !finishedStates.has(task.status?.state ?? 0)) {
        throw new UnsupportedOperationError(
          `task ${taskId} is still running and takes no more messages: wait until it ends ` +
          '(GetTask), then send the follow-up as a new message without a taskId',
        );
      }
      return undefined;
    }
    const slot = limit.tryAcquire();
    if (slot === undefined) {
      throw new JsonRpcTransportError({
        jsonrpc: '2.0',
        id: null,
        error: { code: tooManyTasksErrorCode, message: limit.refusal() },
      });
    }
    attachInboundSlot(context, slot);
    return {
      // Unless the executor took the slot over (it gives it back when the run ends).
      release: () => {
        if (!slot.claimed) slot.release();
      },
    };
  };
  class ClawRequestHandler extends sdk.DefaultRequestHandler {
    override async sendMessage(
      params: SendMessageRequest,
      context: ServerCallContext,
    ): Promise<Message | Task> {
      const admitted = await admit(params, context);
      try {
        return await super.sendMessage(params, context);
      } finally {
        admitted?.release();
      }
    }

    override async *sendMessageStream(
      params: SendMessageRequest,
      context: ServerCallContext,
    ): AsyncGenerator<StreamResponse, void, undefined> {
      const admitted = await admit(params, context);
      try {
        yield* super.sendMessageStream(params, context);
      } finally {
        admitted?.release();
      }
    }
  }
  const handler: A2ARequestHandler = new ClawRequestHandler(
    options.card,
    tasks,
    new ClawAgentExecutor(options.runner),
  );
  const transport = new sdk.JsonRpcTransportHandler(handler);
  const user = { isAuthenticated: true, userName: 'claw-server-token' };

  return {
    card: options.card,
    tasks,
    limit,
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

// Terminal (completed, failed, canceled, rejected) as the SDK counts them.
const finishedStates = new Set<number>([3, 4, 5, 7]);

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
