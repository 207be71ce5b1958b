import { randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import {
  PROTOCOL_VERSION,
  RequestError,
  type AgentContext,
  type ContentBlock,
  type InitializeRequest,
  type InitializeResponse,
  type LoadSessionRequest,
  type McpServer,
  type NewSessionRequest,
  type NewSessionResponse,
  type PromptRequest,
  type PromptResponse,
  type SessionUpdate,
} from '@agentclientprotocol/sdk';
import type { ApprovalHandler, ApprovalPrompt } from '@claw/approval';
import {
  ClawError,
  TextFileNotFoundError,
  errorMessage,
  isUserError,
  type TextFileAccess,
} from '@claw/core';
import {
  RuntimeFactory,
  SessionBusyError,
  SessionLifecycle,
  createFileTracing,
  resolveSettings,
  untrustedNotice,
  type McpServerConfig,
  type Runtime,
  type SettingOverrides,
  type Settings,
  type Tracing,
} from '@claw/runtime';
import { SessionLockedError, assertSessionId } from '@claw/session-store';
import { askEditorForInput } from './elicitation.js';
import { argumentsOf, kindOf, toolCallUpdate } from './tool-views.js';
import { createAcpReporter, historyUpdates } from './updates.js';

/** JSON-RPC error codes claw answers with, beyond the standard ones. */
export const acpErrorCodes = {
  /** A session id this process does not know (the ACP convention for a missing resource). */
  notFound: -32002,
  /** claw refused the request (busy session, a session another process holds, a bad config). */
  refused: -32000,
} as const;

export interface ClawAcpAgentOptions {
  env: Readonly<Record<string, string | undefined>>;
  overrides: SettingOverrides;
  version: string;
  /** Writes a note for people (stderr): never the protocol's stdout. */
  note: (text: string) => void;
  /**
   * How long an MCP server's request for input (MCP-7) waits for the editor's answer before claw
   * declines it. Default: `@claw/mcp`'s (5 minutes).
   */
  elicitationTimeoutMs?: number;
}

interface AcpSession {
  id: string;
  workDir: string;
  runtime: Runtime;
  settings: Settings;
  /** The editor's file system, when it offers one (ACP-4). */
  files: TextFileAccess | undefined;
  /** Tells the running task's reporter that a call the editor allowed is running. */
  allowed?: (toolCallId: string) => Promise<void>;
}

interface Workspace {
  factory: RuntimeFactory;
  /** Opens the workspace's sessions (LIFE-1): local only, each let go when the editor leaves it. */
  sessions: SessionLifecycle;
  settings: Settings;
  tracing: Tracing;
}

/**
 * claw as an ACP agent (ACP-1 … ACP-5): one per `claw acp` process, one editor connection. Each
 * session is a claw session of the workspace the editor names (its `.claw/` sessions, grants,
 * audit log and settings), run by a `RuntimeFactory` of that workspace: the same engine,
 * approvals, sandbox and budgets as `claw -p`. Nothing here decides permissions or runs tools;
 * it maps the protocol onto the runtime.
 */
export class ClawAcpAgent {
  private readonly options: ClawAcpAgentOptions;
  private readonly sessions = new Map<string, AcpSession>();
  private readonly workspaces = new Map<string, Promise<Workspace>>();
  private client: AgentContext | undefined;
  private clientFiles: { read: boolean; write: boolean } = { read: false, write: false };
  /** Whether the editor fills in forms (`elicitation.form`): MCP servers' requests for input. */
  private clientForms = false;
  private closing: Promise<void> | undefined;

  constructor(options: ClawAcpAgentOptions) {
    this.options = options;
  }

  /** The connection to the editor (its client side), once open. */
  connected(client: AgentContext): void {
    this.client = client;
  }

  initialize(request: InitializeRequest): InitializeResponse {
    const fs = request.clientCapabilities?.fs;
    this.clientFiles = { read: fs?.readTextFile === true, write: fs?.writeTextFile === true };
    // `form: {}` offers forms; omitted or null does not (URL mode is not used: claw's MCP client
    // does not declare it).
    const forms = request.clientCapabilities?.elicitation?.form;
    this.clientForms = forms !== undefined && forms !== null;
    return {
      protocolVersion: PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: false, audio: false, embeddedContext: true },
        mcpCapabilities: { http: true, sse: false },
      },
      agentInfo: { name: 'claw', title: 'claw', version: this.options.version },
      authMethods: [],
    };
  }

  async newSession(request: NewSessionRequest): Promise<NewSessionResponse> {
    const workDir = await checkedFolder(request.cwd);
    const id = `acp-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
    await this.open(id, workDir, request.mcpServers);
    return { sessionId: id };
  }

  /**
   * Opens a stored session of the workspace and replays its history as updates (ACP-1), then
   * answers.
   */
  async loadSession(request: LoadSessionRequest): Promise<Record<string, never>> {
    const workDir = await checkedFolder(request.cwd);
    try {
      assertSessionId(request.sessionId);
    } catch (error) {
      throw notFound(`there is no session ${JSON.stringify(request.sessionId)} here: ${errorMessage(error)}`);
    }
    const known = this.sessions.get(request.sessionId);
    if (known !== undefined && known.workDir !== workDir) {
      throw refused(`session ${request.sessionId} is open in ${known.workDir}, not ${workDir}`, 'session_workdir_conflict');
    }
    const workspace = await this.workspace(workDir);
    const listed = await workspace.factory.listSessions(workDir);
    if (known === undefined && !listed.some((summary) => summary.id === request.sessionId)) {
      throw notFound(
        `there is no session ${JSON.stringify(request.sessionId)} in ${workDir} (claw sessions ` +
        'lists them); start one with session/new',
      );
    }
    const session = known ?? await this.open(request.sessionId, workDir, request.mcpServers);
    for (const update of historyUpdates(session.runtime.session.history(), workDir)) {
      await this.send(session.id, update);
    }
    return {};
  }

  /**
   * Runs one task (ACP-1): its updates as it goes, then how it stopped. A task that fails is a
   * JSON-RPC error saying why; a cancelled one stops with `cancelled`.
   */
  async prompt(request: PromptRequest, signal: AbortSignal): Promise<PromptResponse> {
    const session = this.session(request.sessionId);
    const text = promptText(request.prompt);
    const reporter = createAcpReporter({
      send: (update) => this.send(session.id, update),
      workDir: session.workDir,
      before: (file) => this.textBefore(session, file, signal),
      contextWindowTokens: session.settings.contextWindowTokens,
    });
    let task;
    try {
      const options = session.files === undefined ? {} : { files: session.files };
      task = session.runtime.start(text, reporter, options);
    } catch (error) {
      if (error instanceof SessionBusyError) {
        throw refused(
          `session ${session.id} is running a task already: wait for it to end, or cancel it ` +
          '(session/cancel)',
          'session_busy',
        );
      }
      throw asRequestError(error);
    }
    session.allowed = (toolCallId) => reporter.started(toolCallId);
    const onAbort = (): void => task.cancel(new Error('the editor cancelled the prompt request'));
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const result = await task.wait();
      switch (result.status) {
        case 'completed':
          return { stopReason: 'end_turn' };
        case 'canceled':
          return { stopReason: 'cancelled' };
        case 'max_turns':
          return { stopReason: 'max_turn_requests' };
        case 'failed':
          throw asRequestError(result.error ?? new ClawError('the task failed', { code: 'run_failed' }));
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      session.allowed = undefined;
    }
  }

  /** `session/cancel`: the running task stops, its questions are withdrawn. */
  cancel(sessionId: string): void {
    this.sessions.get(sessionId)?.runtime.cancel(new Error('cancelled in the editor'));
  }

  /** The editor closed the connection: running tasks are cancelled, every session stored. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const sessions = [...this.sessions.values()];
      this.sessions.clear();
      await Promise.allSettled(sessions.map((session) => session.runtime.close()));
      const workspaces = await Promise.allSettled([...this.workspaces.values()]);
      for (const workspace of workspaces) {
        if (workspace.status !== 'fulfilled') continue;
        await workspace.value.sessions.close();
        await workspace.value.factory.close().catch(() => undefined);
        await workspace.value.tracing.shutdown().catch(() => undefined);
      }
    })();
    return this.closing;
  }

  private session(id: string): AcpSession {
    const session = this.sessions.get(id);
    if (session === undefined) {
      throw notFound(
        `there is no open session ${JSON.stringify(id)}: open it with session/new or session/load first`,
      );
    }
    return session;
  }

  private async open(
    id: string,
    workDir: string,
    servers: readonly McpServer[],
  ): Promise<AcpSession> {
    const workspace = await this.workspace(workDir);
    const mcpServers = this.mcpServers(servers);
    let runtime: Runtime;
    try {
      runtime = await workspace.sessions.openLocal({
        id: `acp-${id}`,
        sessionId: id,
        workDir,
        approvalHandler: this.approvals(id),
        mcpServers,
      });
    } catch (error) {
      if (error instanceof SessionLockedError) throw refused(error.message, 'session_locked');
      throw asRequestError(error);
    }
    for (const warning of runtime.instructions.warnings) this.options.note(`claw: ${warning}`);
    const session: AcpSession = {
      id,
      workDir,
      runtime,
      settings: workspace.settings,
      files: this.editorFiles(id),
    };
    this.sessions.set(id, session);
    return session;
  }

  /** The factory of a workspace, made once: its settings are its own `.claw/config.json`'s. */
  private workspace(workDir: string): Promise<Workspace> {
    let made = this.workspaces.get(workDir);
    if (made === undefined) {
      made = (async () => {
        const settings = await resolveSettings({
          workDir,
          overrides: this.options.overrides,
          env: this.options.env,
          // The editor answers the questions.
          defaultApproval: 'ask',
        }).catch((error: unknown) => {
          throw asRequestError(error);
        });
        // claw acp never asks (TRUST-3): it says in the editor's log what it left out.
        const notice = settings.workspaceTrust === undefined ? undefined : untrustedNotice(
          settings.workspaceTrust,
          settings.ignoredSettings ?? [],
          `run \`claw trust --workdir ${workDir}\` in a terminal to use them, or give claw acp ` +
          '--trust-workspace',
        );
        if (notice !== undefined) this.options.note(`claw: ${workDir}: ${notice}`);
        const tracing = createFileTracing({ workDir });
        let factory: RuntimeFactory;
        try {
          factory = new RuntimeFactory({
            settings,
            env: this.options.env,
            tracer: tracing.tracer,
            mcp: {
              onWarning: (warning) => this.options.note(`claw: ${warning.message}`),
              ...(this.options.elicitationTimeoutMs === undefined
                ? {}
                : { elicitationTimeoutMs: this.options.elicitationTimeoutMs }),
            },
          });
        } catch (error) {
          await tracing.shutdown().catch(() => undefined);
          throw asRequestError(error);
        }
        factory.isolation().then(
          (spawner) => this.options.note(spawner.description),
          () => undefined,
        );
        return { factory, sessions: new SessionLifecycle({ factory }), settings, tracing };
      })();
      made.catch(() => this.workspaces.delete(workDir));
      this.workspaces.set(workDir, made);
    }
    return made;
  }

  /** The editor's MCP servers as claw's (stdio and HTTP; SSE is not offered). */
  private mcpServers(servers: readonly McpServer[]): McpServerConfig[] {
    const common = { enabled: true, risk: 'dangerous' as const, toolRisk: {}, startupTimeoutMs: 30_000, callTimeoutMs: 60_000 };
    const configs: McpServerConfig[] = [];
    for (const server of servers) {
      if ('type' in server && server.type === 'sse') {
        this.options.note(`claw: MCP server ${server.name} skipped: claw speaks Streamable HTTP and stdio, not SSE`);
        continue;
      }
      if ('type' in server && server.type === 'http') {
        configs.push({
          ...common,
          name: server.name,
          transport: 'http',
          url: server.url,
          headers: Object.fromEntries(server.headers.map((header) => [header.name, header.value])),
        });
        continue;
      }
      if ('command' in server) {
        configs.push({
          ...common,
          name: server.name,
          transport: 'stdio',
          command: server.command,
          args: server.args,
          env: Object.fromEntries(server.env.map((variable) => [variable.name, variable.value])),
        });
      }
    }
    return configs;
  }

  /**
   * The session's questions go to the editor as `session/request_permission` (ACP-3): allow once,
   * allow always (claw's grant for the session), reject. Claw's gate asks only what its policy
   * asks, records the answer in the audit log and lets the first answer of any client win; a
   * cancelled prompt withdraws the request.
   */
  private approvals(sessionId: string): ApprovalHandler {
    return {
      approve: async (prompt: ApprovalPrompt, signal: AbortSignal) => {
        const client = this.client;
        if (client === undefined) return { decision: 'deny', reason: 'no editor is connected to ask' };
        const call = {
          id: prompt.toolCallId ?? prompt.requestId,
          name: prompt.toolName,
          arguments: prompt.arguments,
        };
        const response = await client.request(
          'session/request_permission',
          {
            sessionId,
            toolCall: {
              ...toolCallUpdate(call, prompt.workDir),
              // What claw's policy says the call will do.
              title: prompt.reason,
              kind: kindOf(prompt.toolName),
              rawInput: argumentsOf(call),
            },
            options: [
              { optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' },
              { optionId: 'allow_always', name: 'Allow for this session', kind: 'allow_always' },
              { optionId: 'reject_once', name: 'Reject', kind: 'reject_once' },
            ],
          },
          { cancellationSignal: signal, stopWaitingOnCancel: true },
        );
        const outcome = response.outcome;
        if (outcome.outcome !== 'selected' || outcome.optionId === 'reject_once') return 'deny';
        await this.sessions.get(sessionId)?.allowed?.(call.id).catch(() => undefined);
        return outcome.optionId === 'allow_always' ? 'allow_session' : 'allow_once';
      },
      // An MCP server's request for input (MCP-7) goes to the editor as `elicitation/create`
      // when it offered forms at `initialize`; else it is declined at once, with a note, rather
      // than left to run out of time. The answer is checked against the form before it is sent.
      elicit: (prompt, signal) => askEditorForInput(prompt, signal, {
        client: this.client,
        forms: this.clientForms,
        sessionId,
        note: this.options.note,
      }),
    };
  }

  /**
   * The editor's file system (ACP-4), for what it offers (reading, writing or both); `undefined`
   * when it offers neither.
   */
  private editorFiles(sessionId: string): TextFileAccess | undefined {
    const client = this.client;
    const { read, write } = this.clientFiles;
    if (client === undefined || (!read && !write)) return undefined;
    return {
      name: 'the editor',
      ...(read
        ? {
            readTextFile: async (file: string, { signal }: { signal: AbortSignal }) => {
              try {
                const response = await client.request(
                  'fs/read_text_file',
                  { sessionId, path: file },
                  { cancellationSignal: signal, stopWaitingOnCancel: true },
                );
                return response.content;
              } catch (error) {
                if (signal.aborted) throw error;
                // Editors answer a missing file with an error; claw tells it as a missing file.
                if (isMissing(error)) throw new TextFileNotFoundError(file, { cause: error });
                throw error;
              }
            },
          }
        : {}),
      ...(write
        ? {
            writeTextFile: async (
              file: string,
              content: string,
              { signal }: { signal: AbortSignal },
            ) => {
              await client.request(
                'fs/write_text_file',
                { sessionId, path: file, content },
                { cancellationSignal: signal, stopWaitingOnCancel: true },
              );
            },
          }
        : {}),
    };
  }

  /** A file's text before a write, for its diff: the editor's (unsaved) buffer, else the disk's. */
  private async textBefore(
    session: AcpSession,
    file: string,
    signal: AbortSignal,
  ): Promise<string | null | undefined> {
    const read = session.files?.readTextFile?.bind(session.files);
    if (read !== undefined) return read(file, { signal }).catch(() => null);
    const info = await stat(file).catch(() => undefined);
    if (info === undefined) return null;
    if (!info.isFile() || info.size > 1024 * 1024) return undefined;
    return readFile(file, 'utf8').catch(() => undefined);
  }

  private async send(sessionId: string, update: SessionUpdate): Promise<void> {
    const client = this.client;
    if (client === undefined) throw new ClawError('the editor is not connected', { code: 'acp_closed' });
    await client.notify('session/update', { sessionId, update });
  }
}

/** `cwd` checked: absolute and an existing folder (ACP-5). */
async function checkedFolder(cwd: string): Promise<string> {
  if (!path.isAbsolute(cwd)) {
    throw RequestError.invalidParams({ cwd }, `cwd must be an absolute path, got ${JSON.stringify(cwd)}`);
  }
  const info = await stat(cwd).catch(() => undefined);
  if (info === undefined || !info.isDirectory()) {
    throw RequestError.invalidParams({ cwd }, `cwd ${cwd} is not an existing folder`);
  }
  return path.resolve(cwd);
}

/**
 * A prompt's content as the task's text: text as it is, an embedded resource's text in a
 * `<resource>` block, a resource link named with its address. Images and audio are not offered
 * (`promptCapabilities`), so they are refused.
 */
export function promptText(blocks: readonly ContentBlock[]): string {
  const parts: string[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case 'text':
        parts.push(block.text);
        break;
      case 'resource': {
        const resource = block.resource;
        if ('text' in resource) {
          parts.push(`<resource uri=${JSON.stringify(resource.uri)}>\n${resource.text}\n</resource>`);
        } else {
          parts.push(`[a binary resource the model cannot read: ${resource.uri}]`);
        }
        break;
      }
      case 'resource_link':
        parts.push(`[${block.title ?? block.name}: ${block.uri}]`);
        break;
      case 'image':
      case 'audio':
        throw RequestError.invalidParams(
          { type: block.type },
          `claw takes text, embedded resources and resource links, not ${block.type} content`,
        );
    }
  }
  const text = parts.join('\n\n');
  if (text.trim() === '') throw RequestError.invalidParams(undefined, 'the prompt is empty');
  return text;
}

/** An editor's answer that the file is not there. */
function isMissing(error: unknown): boolean {
  if (error instanceof RequestError && error.code === acpErrorCodes.notFound) return true;
  return /not found|no such file|does not exist|ENOENT/i.test(errorMessage(error));
}

function notFound(message: string): RequestError {
  return new RequestError(acpErrorCodes.notFound, message, { code: 'session_not_found' });
}

function refused(message: string, code: string): RequestError {
  return new RequestError(acpErrorCodes.refused, message, { code });
}

/** Any failure as a JSON-RPC error with claw's message and code. */
function asRequestError(error: unknown): RequestError {
  if (error instanceof RequestError) return error;
  const code = error instanceof ClawError ? error.code : 'internal_error';
  return new RequestError(
    isUserError(error) ? acpErrorCodes.refused : -32603,
    errorMessage(error),
    { code },
  );
}
