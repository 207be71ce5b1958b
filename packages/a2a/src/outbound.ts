import { randomUUID } from 'node:crypto';
import type { AgentCard, Artifact, Message, StreamResponse, Task } from '@a2a-js/sdk';
import { abortReason, errorMessage, throwIfAborted, type ToolProgress } from '@claw/core';
import { A2aRemoteError } from './errors.js';
import { artifactText, messageText, textPart } from './parts.js';

/** How a delegated task ended, as the remote agent said (v1.0 state names, lower case). */
export type DelegationState =
  | 'completed'
  | 'failed'
  | 'canceled'
  | 'rejected'
  | 'input-required'
  | 'auth-required'
  | 'unknown';

/** What came back from a remote agent: its final word and its artifacts, not its tool trace. */
export interface DelegationReport {
  state: DelegationState;
  /** The remote task's id (none when the agent answered with a plain message). */
  taskId: string | undefined;
  contextId: string | undefined;
  /** The final message text (the last status message, or the agent's answer message). */
  text: string;
  artifacts: readonly Artifact[];
  /** The agent's name from its card. */
  agentName: string;
}

export interface DelegateOptions {
  /** The agent's base URL, or the full URL of its agent card (ending in `.json`). */
  url: string;
  message: string;
  /** Sent with every request, the agent card fetch included. */
  headers?: Readonly<Record<string, string>>;
  /** Status updates of a streaming agent. */
  onProgress?: (progress: ToolProgress) => void;
  /** Aborting stops the call and asks the agent to cancel the remote task (`CancelTask`). */
  signal?: AbortSignal;
  /** For tests and proxies; default the global `fetch`. */
  fetch?: typeof fetch;
}

const cardPath = '.well-known/agent-card.json';

/** Where an agent's card is: a `.json` URL is the card itself, else the card is under the URL. */
export function agentCardUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.pathname.endsWith('.json')) return parsed.href;
  if (!parsed.pathname.endsWith('/')) parsed.pathname += '/';
  return new URL(cardPath, parsed).href;
}

const stateNames: Record<number, DelegationState> = {
  3: 'completed',
  4: 'failed',
  5: 'canceled',
  6: 'input-required',
  7: 'rejected',
  8: 'auth-required',
};

/**
 * Hands a task to a remote A2A agent (A2A-1, A2A-3): reads its agent card, speaks v1.0 over the
 * official SDK (JSON-RPC; streaming when the card says the agent streams, each status reported to
 * `onProgress`), and returns its final report. Aborting the call sends `CancelTask` for the
 * remote task (in the background: the call itself returns at once) and rejects with the
 * signal's reason.
 *
 * @throws A2aRemoteError `a2a_unreachable` (no card), `a2a_auth_failed` (401/403),
 *   `a2a_request_failed` (the agent refused the request); the signal's reason on abort.
 */
export async function delegateTask(options: DelegateOptions): Promise<DelegationReport> {
  const { signal } = options;
  throwIfAborted(signal);
  const { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } =
    await import('@a2a-js/sdk/client');
  const baseFetch = options.fetch ?? fetch;
  const headers = options.headers ?? {};
  const fetchWithHeaders: typeof fetch = (input, init) => {
    const merged = new Headers(init?.headers);
    for (const [name, value] of Object.entries(headers)) merged.set(name, value);
    return baseFetch(input, { ...init, headers: merged });
  };
  // Only the card fetch takes the call's signal here; the SDK passes it to its own requests, and
  // the CancelTask sent after an abort must not carry the aborted signal.
  const cardFetch: typeof fetch = (input, init) =>
    fetchWithHeaders(input, { ...init, signal: init?.signal ?? signal ?? null });
  const cardUrl = agentCardUrl(options.url);
  let card: AgentCard;
  try {
    card = await new DefaultAgentCardResolver({ fetchImpl: cardFetch }).resolve(cardUrl, '');
  } catch (error) {
    throwIfAborted(signal);
    const status = /: (\d{3})$/.exec(errorMessage(error))?.[1];
    if (status === '401' || status === '403') throw authError(cardUrl, status, error);
    throw new A2aRemoteError(
      `could not read the agent card at ${cardUrl} (${errorMessage(error)}): check the URL (an ` +
      'agent\'s base URL, or its card URL ending in .json) and that the agent is running',
      { code: 'a2a_unreachable', url: cardUrl, cause: error },
    );
  }
  // JSON-RPC only: every request then goes through the fetch that carries the peer's headers.
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl: fetchWithHeaders })],
    preferredTransports: ['JSONRPC'],
  });
  let client: Awaited<ReturnType<typeof factory.createFromAgentCard>>;
  try {
    client = await factory.createFromAgentCard(card);
  } catch (error) {
    throw new A2aRemoteError(
      `the agent "${card.name}" (${cardUrl}) offers no interface claw speaks (JSON-RPC, A2A ` +
      `1.0): ${errorMessage(error)}`,
      { code: 'a2a_request_failed', url: cardUrl, cause: error },
    );
  }
  const report: DelegationReport & { artifacts: Artifact[] } = {
    state: 'unknown',
    taskId: undefined,
    contextId: undefined,
    text: '',
    artifacts: [],
    agentName: card.name,
  };
  const message: Message = {
    messageId: randomUUID(),
    contextId: '',
    taskId: '',
    role: 1,
    parts: [textPart(options.message)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  const cancelRemote = (): void => {
    if (report.taskId === undefined) return;
    // The caller does not wait for the remote: the request runs on without the aborted signal.
    client.cancelTask({ tenant: '', id: report.taskId, metadata: undefined }).catch(() => undefined);
  };
  signal?.addEventListener('abort', cancelRemote, { once: true });
  let updates = 0;
  try {
    const stream = client.sendMessageStream(
      { tenant: '', message, configuration: undefined, metadata: undefined },
      signal === undefined ? {} : { signal },
    );
    for await (const event of stream) {
      updates += 1;
      const status = apply(report, event);
      if (status !== undefined) {
        options.onProgress?.({ progress: updates, message: status });
      }
    }
  } catch (error) {
    if (signal?.aborted === true) throw abortReason(signal);
    const text = errorMessage(error);
    if (/\b(401|403)\b/.test(text)) throw authError(cardUrl, /\b403\b/.test(text) ? '403' : '401', error);
    throw new A2aRemoteError(
      `the agent "${card.name}" (${cardUrl}) refused or broke the request: ${text}`,
      { code: 'a2a_request_failed', url: cardUrl, cause: error },
    );
  } finally {
    signal?.removeEventListener('abort', cancelRemote);
  }
  if (signal?.aborted === true) {
    cancelRemote();
    throw abortReason(signal);
  }
  return report;
}

function authError(url: string, status: string, cause: unknown): A2aRemoteError {
  return new A2aRemoteError(
    `the agent at ${url} refused claw's credentials (HTTP ${status}): check the "headers" of ` +
    'the peer in .claw/a2a.json (e.g. "Authorization": "Bearer ${TOKEN}") and the token in the ' +
    'environment variable',
    { code: 'a2a_auth_failed', url, cause },
  );
}

/** Folds one stream event into the report; returns a status line worth reporting, if any. */
function apply(
  report: DelegationReport & { artifacts: Artifact[] },
  event: StreamResponse,
): string | undefined {
  const payload = event.payload;
  if (payload === undefined) return undefined;
  switch (payload.$case) {
    case 'message':
      report.text = messageText(payload.value);
      if (report.state === 'unknown') report.state = 'completed';
      return 'the agent answered';
    case 'task':
      return applyTask(report, payload.value);
    case 'statusUpdate': {
      const { status } = payload.value;
      report.taskId ??= payload.value.taskId;
      report.contextId ??= payload.value.contextId;
      if (status === undefined) return undefined;
      const text = messageText(status.message);
      if (text !== '') report.text = text;
      report.state = stateNames[status.state] ?? report.state;
      return text === '' ? stateLabel(status.state) : text;
    }
    case 'artifactUpdate': {
      const artifact = payload.value.artifact;
      if (artifact === undefined) return undefined;
      const index = report.artifacts.findIndex((known) => known.artifactId === artifact.artifactId);
      const existing = index < 0 ? undefined : report.artifacts[index];
      if (existing !== undefined && payload.value.append) {
        report.artifacts[index] = { ...existing, parts: [...existing.parts, ...artifact.parts] };
      } else if (index >= 0) {
        report.artifacts[index] = artifact;
      } else {
        report.artifacts.push(artifact);
      }
      return `artifact ${artifact.name || artifact.artifactId}`;
    }
    default:
      return undefined;
  }
}

function applyTask(report: DelegationReport & { artifacts: Artifact[] }, task: Task): string {
  report.taskId = task.id;
  report.contextId = task.contextId;
  if (task.artifacts.length > 0) report.artifacts = [...task.artifacts];
  const state = task.status?.state ?? 0;
  report.state = stateNames[state] ?? report.state;
  const text = messageText(task.status?.message);
  if (text !== '') report.text = text;
  return text === '' ? stateLabel(state) : text;
}

function stateLabel(state: number): string {
  switch (state) {
    case 1: return 'submitted';
    case 2: return 'working';
    default: return stateNames[state] ?? 'unknown state';
  }
}

/**
 * The report as the model's Observation: the final text and the artifacts for a completed task;
 * for any other end, what happened and what the model can do next.
 */
export function formatReport(report: DelegationReport): { content: string; isError: boolean } {
  const who = `remote agent "${report.agentName}"`;
  const body = [report.text, ...report.artifacts.map(artifactText)]
    .filter((part) => part !== '').join('\n\n');
  const said = body === '' ? '' : `\nIt said:\n${body}`;
  switch (report.state) {
    case 'completed':
      return { content: body === '' ? `The ${who} completed the task without a report.` : body, isError: false };
    case 'input-required':
      return {
        content: `The ${who} needs more input before it can go on (input-required).${said}\n` +
          'Answer its question yourself if you can and delegate again with a message that ' +
          'contains the whole task and the answer, or ask the user.',
        isError: true,
      };
    case 'auth-required':
      return {
        content: `The ${who} needs credentials claw did not send (auth-required).${said}\n` +
          'Tell the user: the peer\'s "headers" in .claw/a2a.json must carry them.',
        isError: true,
      };
    case 'rejected':
      return {
        content: `The ${who} rejected the task.${said}\nDo not send the same task again; do it ` +
          'another way or tell the user.',
        isError: true,
      };
    case 'failed':
      return {
        content: `The ${who} failed the task.${said}\nYou may retry once with a clearer ` +
          'message, do the work yourself, or tell the user.',
        isError: true,
      };
    case 'canceled':
      return { content: `The ${who} canceled the task.${said}`, isError: true };
    case 'unknown':
      return {
        content: `The ${who} ended without saying how the task went.${said}`,
        isError: true,
      };
  }
}
