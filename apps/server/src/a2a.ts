import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type {
  A2aJsonRpcServer,
  InboundOutcome,
  InboundRun,
  InboundRunner,
  InboundTask,
  InboundTaskClock,
  InboundTaskLimit,
  InboundTaskStore,
} from '@claw/a2a/server';
import type { ApprovalAnswer, ApprovalHandler } from '@claw/approval';
import { abortReason, errorMessage, type Reporter } from '@claw/core';
import type { Task } from '@claw/runtime';
import { sendJson } from './http-replies.js';
import type { ServerSessions } from './sessions.js';

type AgentCard = A2aJsonRpcServer['card'];

/** Who denies an inbound task's question (shown as `by` in `approval_resolved`). */
export const inboundDenier = 'claw-server (A2A: no operator answered)';

/** Default time an operator has to answer an inbound task's question (60 s). */
export const defaultA2aApprovalTimeoutMs = 60_000;

export interface A2aEndpointsOptions {
  sessions: ServerSessions;
  /** Whether a connected console or channel client controls the session (can answer). */
  hasController: (sessionId: string) => boolean;
  /** Inbound tasks run in the first workspace root. */
  workDir: string;
  version: string;
  /** How long a question of an inbound task waits for an operator; then it is denied. */
  approvalTimeoutMs: number;
  /** Timers of the approval timeout (tests drive them). */
  setTimer?: (callback: () => void, ms: number) => () => void;
  /** The most inbound tasks that run at once (TRUST-6); default 8. */
  maxTasks?: number;
  /** How long a finished inbound task stays answerable by `GetTask`; default 24 h. */
  taskRetentionMs?: number;
  /** The most finished inbound tasks remembered, the oldest forgotten first; default 10,000. */
  maxRememberedTasks?: number;
  /** The time of the task store (tests drive it); default the real one. */
  taskClock?: InboundTaskClock;
}

/**
 * claw as an A2A agent on the HTTP port (A2A-2, A2A-3): the public agent card, the JSON-RPC
 * endpoint of the official protocol v1.0 (`POST /a2a`) and the seed's envelope (`POST
 * /a2a/message`, `GET /a2a/agent-card`). Each inbound task is a claw session (`a2a-<task id>`)
 * made through the server's sessions, so the console and channel clients see it; every tool call
 * that would ask goes to the session's controllers as an approval request and is denied when
 * none is connected, or when nobody answers within the approval timeout — never allowed by
 * default. The A2A SDK is loaded on the first A2A request only.
 *
 * One task store and one limit on inbound tasks serve every address the server is reached at
 * (TRUST-6): only the agent card differs by the Host the client used (it names the endpoint
 * there). Both ways in (JSON-RPC and the envelope) share the limit.
 */
export class A2aEndpoints {
  private readonly options: A2aEndpointsOptions;
  private readonly cards = new Map<string, AgentCard>();
  private inbound: Promise<{ tasks: InboundTaskStore; limit: InboundTaskLimit }> | undefined;
  private jsonRpc: Promise<A2aJsonRpcServer> | undefined;
  private closed = false;

  constructor(options: A2aEndpointsOptions) {
    this.options = options;
  }

  /** `GET /.well-known/agent-card.json` (v1.0 JSON) and `GET /a2a/agent-card` (in the envelope). */
  async card(request: IncomingMessage, response: ServerResponse, path: string): Promise<void> {
    const card = await this.agentCard(request);
    const { agentCardJson } = await import('@claw/a2a/server');
    const json = await agentCardJson(card);
    if (path === '/a2a/agent-card') return sendJson(response, 200, { code: 0, message: 'ok', data: json });
    return sendJson(response, 200, json);
  }

  /** `POST /a2a` (JSON-RPC) and `POST /a2a/message` (the envelope); the token was checked. */
  async handle(request: IncomingMessage, response: ServerResponse, path: string): Promise<void> {
    const body = await readBody(request, 1024 * 1024);
    if (body === undefined) {
      return sendJson(response, 413, { code: 413, message: 'the body is over 1 MiB', data: null });
    }
    if (path === '/a2a') return (await this.server(request)).handle(request, response, body);
    return this.envelope(request, response, body);
  }

  /** Forgets the inbound tasks and stops the store's timer (the server stops). */
  async close(): Promise<void> {
    this.closed = true;
    const inbound = await this.inbound?.catch(() => undefined);
    inbound?.tasks.close();
  }

  private async envelope(
    request: IncomingMessage,
    response: ServerResponse,
    body: string,
  ): Promise<void> {
    let message: unknown;
    try {
      message = (JSON.parse(body) as { message?: unknown }).message;
    } catch (error) {
      return sendJson(response, 400, { code: 400, message: `the body is not JSON: ${errorMessage(error)}`, data: null });
    }
    if (typeof message !== 'string' || message.trim() === '') {
      return sendJson(response, 400, {
        code: 400,
        message: 'the message is empty: send {"message": "<what to do>"}',
        data: null,
      });
    }
    const { limit } = await this.inboundTasks();
    const slot = limit.tryAcquire();
    if (slot === undefined) {
      return sendJson(response, 503, { code: 503, message: limit.refusal(), data: null });
    }
    const taskId = randomUUID();
    let run: InboundRun;
    try {
      run = await this.runner.start(
        { taskId, contextId: taskId, text: message.trim() },
        { onProgress: () => undefined },
      );
    } catch (error) {
      slot.release();
      return sendJson(response, 500, { code: 500, message: `claw could not start the task: ${errorMessage(error)}`, data: null });
    }
    // A caller that goes away (its delegate call was canceled) cancels the task.
    const onClose = (): void => {
      if (!response.writableEnded) run.cancel(new Error('the envelope client went away'));
    };
    response.on('close', onClose);
    const outcome = await run.done.finally(() => slot.release());
    response.off('close', onClose);
    if (response.destroyed) return;
    sendJson(response, 200, {
      code: 0,
      message: outcome.status,
      data: { session_id: run.sessionId, status: outcome.status, report: outcome.report },
    });
  }

  /** The task store and the limit, made on the first A2A request. */
  private inboundTasks(): Promise<{ tasks: InboundTaskStore; limit: InboundTaskLimit }> {
    if (this.inbound !== undefined) return this.inbound;
    this.inbound = (async () => {
      const { InboundTaskLimit, InboundTaskStore } = await import('@claw/a2a/server');
      const { maxTasks, taskRetentionMs, maxRememberedTasks, taskClock } = this.options;
      const tasks = new InboundTaskStore({
        ...(taskRetentionMs === undefined ? {} : { retentionMs: taskRetentionMs }),
        ...(maxRememberedTasks === undefined ? {} : { maxFinished: maxRememberedTasks }),
        ...(taskClock === undefined ? {} : { clock: taskClock }),
      });
      if (this.closed) tasks.close();
      return { tasks, limit: new InboundTaskLimit(maxTasks) };
    })();
    const made = this.inbound;
    made.catch(() => {
      if (this.inbound === made) this.inbound = undefined;
    });
    return made;
  }

  /** The JSON-RPC server of every origin (its card only says what the protocol needs). */
  private server(request: IncomingMessage): Promise<A2aJsonRpcServer> {
    if (this.jsonRpc === undefined) {
      const made = (async () => {
        const { createA2aJsonRpcServer } = await import('@claw/a2a/server');
        const { tasks, limit } = await this.inboundTasks();
        return createA2aJsonRpcServer({
          card: await this.agentCard(request),
          runner: this.runner,
          tasks,
          limit,
        });
      })();
      this.jsonRpc = made;
      made.catch(() => {
        if (this.jsonRpc === made) this.jsonRpc = undefined;
      });
    }
    return this.jsonRpc;
  }

  /** The card at the address the client used (the Host was checked), naming the endpoint there. */
  private async agentCard(request: IncomingMessage): Promise<AgentCard> {
    const origin = `http://${request.headers.host ?? '127.0.0.1'}`;
    const known = this.cards.get(origin);
    if (known !== undefined) return known;
    const { clawAgentCard } = await import('@claw/a2a/server');
    const card = clawAgentCard({
      name: 'claw',
      description:
        'A coding agent: give it a task in its workspace; it reads, writes and runs code and ' +
        'reports back. Tools that need permission wait for an operator in the claw console.',
      version: this.options.version,
      url: `${origin}/a2a`,
    });
    this.cards.set(origin, card);
    return card;
  }

  private readonly runner: InboundRunner = {
    start: async (task: InboundTask, hooks): Promise<InboundRun> => {
      const sessionId = `a2a-${task.taskId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 120)}`;
      const denied: string[] = [];
      const reporter: Reporter = {
        onToolCall: (call) => hooks.onProgress(`calling ${call.name}`),
        onToolResult: (result) => {
          if (result.isError && /permission (denied|could not be obtained)/.test(result.content)) {
            denied.push(`${result.toolName}: ${(result.content.split('\n')[0] ?? '').replace(/^Error: /, '')}`);
          }
        },
      };
      const runtime = await this.options.sessions.createLocalRuntime({
        // Its id is who answered (`by`) when its denial wins.
        id: inboundDenier,
        sessionId,
        workDir: this.options.workDir,
        approvalHandler: this.approvals(sessionId),
        // Whatever the server's mode: what would ask is put to an operator, never allowed.
        approval: 'ask',
      });
      let started;
      try {
        started = runtime.start(task.text, reporter);
      } catch (error) {
        await runtime.close({ cancel: false });
        throw error;
      }
      const done = started.wait()
        .then((result) => outcomeOf(result, denied))
        .finally(() => runtime.close({ cancel: false }));
      return { sessionId, done, cancel: (reason) => started.cancel(reason) };
    },
  };

  /**
   * Denies at once without a controller; else waits for one's answer up to the timeout. A request
   * for input of an MCP server (MCP-7) is declined the same way.
   */
  private approvals(sessionId: string): ApprovalHandler {
    const { approvalTimeoutMs } = this.options;
    const setTimer = this.options.setTimer ?? ((callback, ms) => {
      const timer = setTimeout(callback, ms);
      return () => clearTimeout(timer);
    });
    /** Resolves once the timeout is up, unless a controller's answer wins first (`signal`). */
    const timeUp = (signal: AbortSignal): Promise<void> => new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        cancel();
        reject(abortReason(signal));
      };
      const cancel = setTimer(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, approvalTimeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    return {
      approve: (_prompt, signal) => {
        if (!this.options.hasController(sessionId)) {
          return Promise.resolve<ApprovalAnswer>({
            decision: 'deny',
            reason: 'this task came from a remote agent (A2A) and no console or channel client ' +
              'controls its session to allow it',
          });
        }
        return timeUp(signal).then((): ApprovalAnswer => ({
          decision: 'deny',
          reason: `this task came from a remote agent (A2A) and no operator answered within ${approvalTimeoutMs} ms`,
        }));
      },
      elicit: (_prompt, signal) => {
        const declined = { action: 'decline' } as const;
        if (!this.options.hasController(sessionId)) return Promise.resolve(declined);
        return timeUp(signal).then(() => declined);
      },
    };
  }
}

type RunResult = Awaited<ReturnType<Task['wait']>>;

function outcomeOf(result: RunResult, denied: readonly string[]): InboundOutcome {
  const deniedText = denied.length === 0
    ? ''
    : `\n\nTool calls denied (nobody allowed them):\n${denied.map((line) => `- ${line}`).join('\n')}`;
  if (result.status === 'completed') return { status: 'completed', report: `${result.finalText}${deniedText}`.trim() };
  if (result.status === 'canceled') return { status: 'canceled', report: `the claw task was canceled${deniedText}` };
  const why = result.error?.message ?? (result.status === 'max_turns' ? 'it reached the most turns it may take' : 'unknown');
  return { status: 'failed', report: `the claw task failed: ${why}${deniedText}` };
}

function readBody(request: IncomingMessage, limit: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        resolve(undefined);
        request.resume();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(size > limit ? undefined : Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}
