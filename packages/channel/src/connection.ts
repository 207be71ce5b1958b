import { createHash, timingSafeEqual } from 'node:crypto';
import type { ApprovalHandler, ApprovalMode } from '@claw/approval';
import { SerialQueue, type SessionRunState } from '@claw/core';
import type { CreateRuntimeOptions, RuntimeHandle } from '@claw/runtime';
import { isValidSessionId } from '@claw/session-store';
import { ChannelSession, errorEvent, type ChannelRole } from './channel-session.js';
import { ChannelError, toChannelError } from './errors.js';
import {
  OutboundQueue,
  type ChannelWriter,
  type CloseReason,
  type OutboundLimits,
} from './outbound-queue.js';
import {
  parseClientMessage,
  protocolVersion,
  type ClientMessage,
  type ClientMessageOf,
  type ServerEvent,
} from './protocol.js';
import { allowedWorkDir } from './workspaces.js';

/** Where a connection gets its runtimes; `RuntimeFactory` fits. */
export interface RuntimeSource {
  createRuntime(options: CreateRuntimeOptions): Promise<RuntimeHandle>;
}

/** One session as `welcome` lists it. */
export interface WelcomeSession {
  session_id: string;
  state: SessionRunState;
  last_seq: number;
  updated_at: string;
  /** The first line of its first prompt (`sessionTitle`); absent when it has none. */
  title?: string;
}

/** A stored session `welcome` names apart: it cannot be read, so it is not in `sessions`. */
export interface UnreadableWelcomeSession {
  session_id: string;
  /** What is wrong and what to do, as the store says it. */
  reason: string;
}

/** What a `ChannelConnection` serves: its runtimes, its output, its workspaces and its token. */
export interface ChannelConnectionOptions {
  runtimes: RuntimeSource;
  writer: ChannelWriter;
  /** This connection's name: who answered an approval (`by`), part of its runtimes' ids. */
  name: string;
  /** The workspace roots sessions may use (SEC-7); the first is the default. */
  workspaces: readonly string[];
  /** When set, `hello` with this token must come first (CH-8); unset for in-process use. */
  token?: string;
  /** Closes the connection when no `hello` came within this time (CH-8). Default: no limit. */
  helloTimeoutMs?: number;
  /** The sessions `welcome` lists. */
  sessions?: () => Promise<WelcomeSession[]>;
  /** The stored sessions that cannot be read, which `welcome` names (when there are any). */
  unreadableSessions?: () => Promise<UnreadableWelcomeSession[]>;
  /** What `welcome` says the server is. */
  server?: { name: string; version: string };
  /** Ids for sessions a client opens without naming one. Default: `<name>-session-N`. */
  newSessionId?: () => string;
  /** Answers approvals in-process too (a terminal, an unattended denial); optional. */
  approvalHandler?: ApprovalHandler;
  /** The approval mode of tasks started here (default: the runtime settings'). */
  approval?: ApprovalMode;
  /** Largest client message in bytes (default 1 MiB, SEC-6). */
  maxMessageBytes?: number;
  /** Most sessions open at once on this connection (default 64, SEC-6). */
  maxSessions?: number;
  /** The outbound queue's bound (CH-5). */
  outbound?: OutboundLimits;
  /**
   * Cancel the tasks it started when the connection closes. Default false: a task outlives
   * its client (CH-10). True for a transport nobody can reconnect to (a one-shot stdio stream).
   */
  endTasksOnClose?: boolean;
}

/** What `open` did. */
export type OpenResult =
  | { ok: true; sessionId: string; lastSeq: number }
  | { ok: false; error: ChannelError };

/** How `open` is asked for, programmatically (a transport in the same process). */
export interface OpenOptions {
  sessionId?: string;
  /** `number`: replay after it; `'latest'`: only new events, no history; default: history. */
  after?: number | 'latest';
  role?: ChannelRole;
  workdir?: string;
}

/**
 * One client connection of the channel protocol (CH-1 to CH-5, CH-8 to CH-11), without a
 * socket: the transport hands it each message (`handleLine`) and gives it a writer. It opens
 * sessions (replaying exactly what a client with a cursor missed, or sending the history), starts
 * tasks in the background, and handles interrupts, approval answers, pings and closes while they
 * run. Approval requests reach every controller of a session through its events; the first
 * answer wins (`approval_resolved` to all), a later or an observer's gets `approval_not_pending`.
 * Output goes through one bounded queue (CH-5). Closing the connection detaches it from its
 * sessions; their tasks keep running (CH-10).
 */
export class ChannelConnection {
  readonly name: string;
  private readonly options: ChannelConnectionOptions;
  private readonly out: OutboundQueue;
  private readonly sessions = new Map<string, ChannelSession>();
  private readonly opening = new Set<string>();
  private readonly messages = new SerialQueue();
  private authenticated: boolean;
  private helloTimer: ReturnType<typeof setTimeout> | undefined;
  private counter = 0;
  private closing: Promise<void> | undefined;
  private readonly closedWith: Promise<CloseReason>;
  private resolveClosed!: (reason: CloseReason) => void;

  constructor(options: ChannelConnectionOptions) {
    this.options = options;
    this.name = options.name;
    this.authenticated = options.token === undefined;
    this.closedWith = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
    const writer = options.writer;
    // The transport's batch write, when it has one (a turn's events in one system call).
    const writeBatch = writer.writeBatch?.bind(writer);
    this.out = new OutboundQueue(
      {
        write: (json, event) => writer.write(json, event),
        ...(writeBatch === undefined ? {} : { writeBatch }),
        close: (reason) => {
          writer.close(reason);
          void this.close(reason);
        },
      },
      options.outbound,
    );
    if (!this.authenticated && options.helloTimeoutMs !== undefined) {
      this.helloTimer = setTimeout(() => {
        this.send({
          type: 'error',
          code: 'unauthorized',
          message: `no hello within ${options.helloTimeoutMs} ms: send {"type":"hello","token":…,"protocol":1} first`,
        });
        // Closing cannot fail in a way anyone could act on; it must not end the process either.
        this.finish({ code: 'unauthorized', message: 'no hello in time' }).catch(() => undefined);
      }, options.helloTimeoutMs);
    }
  }

  /** Resolves with the reason once the connection is closed. */
  get closed(): Promise<CloseReason> {
    return this.closedWith;
  }

  /** The ids of the sessions open on this connection. */
  openSessions(): string[] {
    return [...this.sessions.keys()];
  }

  /**
   * One message as the client sent it (a JSON line or a WebSocket text message). Messages are
   * handled in the order they came; this never rejects: problems become `error` events.
   */
  handleLine(line: string): Promise<void> {
    const parsed = parseClientMessage(line, {
      ...(this.options.maxMessageBytes === undefined
        ? {}
        : { maxBytes: this.options.maxMessageBytes }),
    });
    // Refused in turn, like any message: its error comes after the answers to earlier ones.
    if (!parsed.ok) return this.refuseMessage(parsed.code, parsed.message);
    return this.handle(parsed.message);
  }

  /**
   * A message the transport refused before it could be read (over the size limit, a binary
   * WebSocket frame, invalid UTF-8): an `error` event with `code`, and the connection goes on
   * (CH-1) — unless no `hello` was accepted yet, which closes it.
   */
  refuseMessage(code: string, message: string): Promise<void> {
    return this.messages.run(async () => {
      if (this.closing !== undefined) return;
      if (!this.authenticated) {
        await this.refuse('send hello with the token first');
        return;
      }
      this.send({ type: 'error', code, message });
    });
  }

  /** True once `hello` was accepted (or when no token is needed). */
  get isAuthenticated(): boolean {
    return this.authenticated;
  }

  /** One parsed message (see `handleLine`). */
  handle(message: ClientMessage): Promise<void> {
    return this.messages.run(async () => {
      if (this.closing !== undefined) return;
      try {
        await this.dispatch(message);
      } catch (error) {
        this.sendError(error);
      }
    });
  }

  /**
   * Opens a session for an in-process client, as an `open` message would, and says how it went
   * (the same `session_opened`, history and events are sent).
   */
  open(options: OpenOptions = {}): Promise<OpenResult> {
    return this.messages.run(async () => {
      try {
        const opened = await this.openSession(options);
        return { ok: true, sessionId: opened.id, lastSeq: opened.lastSeq };
      } catch (error) {
        const channelError = toChannelError(error);
        this.sendError(channelError);
        return { ok: false, error: channelError };
      }
    });
  }

  /**
   * Starts a task, as a `prompt` message would, and returns its id.
   *
   * @throws ChannelError (also sent as an `error` event).
   */
  prompt(content: string, sessionId?: string): Promise<string> {
    return this.messages.run(async () => {
      try {
        return await this.startTask(sessionId, content);
      } catch (error) {
        const channelError = toChannelError(error);
        this.sendError(channelError);
        throw channelError;
      }
    });
  }

  /** Cancels a session's task, as an `interrupt` would (for an in-process Ctrl-C). */
  interrupt(reason: string, sessionId?: string): void {
    const { runtime } = this.sessionFor(sessionId);
    void Promise.resolve(runtime.cancel(new Error(reason))).catch(() => undefined);
  }

  /** True when this connection has the session open as a controller (it can answer approvals). */
  controls(sessionId: string): boolean {
    return this.sessions.get(sessionId)?.role === 'controller';
  }

  /** Sends an event that is not a session's (e.g. `server_stopping`). */
  send(event: ServerEvent): void {
    this.out.push(event);
  }

  /** Resolves once everything sent so far was written. */
  flush(): Promise<void> {
    return this.out.drain();
  }

  /**
   * Detaches from every session (their tasks keep running, CH-10) and ends the connection.
   * Idempotent.
   */
  close(reason: CloseReason = { code: 'closed', message: 'the connection was closed' }): Promise<void> {
    this.closing ??= (async () => {
      clearTimeout(this.helloTimer);
      const open = [...this.sessions.values()];
      this.sessions.clear();
      const end = this.options.endTasksOnClose === true;
      // Only the tasks this connection started: not another client's task on the same session.
      await Promise.allSettled(open.map((session) => session.detach(end, this.name, true)));
      this.resolveClosed(reason);
    })();
    return this.closing;
  }

  private async dispatch(message: ClientMessage): Promise<void> {
    if (!this.authenticated) {
      if (message.type !== 'hello') {
        await this.refuse('send hello with the token first');
        return;
      }
      await this.hello(message);
      return;
    }
    switch (message.type) {
      case 'hello':
        throw new ChannelError('hello was already accepted on this connection', {
          code: 'hello_repeated',
        });
      case 'open':
        await this.openSession({
          ...(message.session_id === undefined ? {} : { sessionId: message.session_id }),
          ...(message.after === undefined ? {} : { after: message.after }),
          ...(message.role === undefined ? {} : { role: message.role }),
          ...(message.workdir === undefined ? {} : { workdir: message.workdir }),
        });
        return;
      case 'prompt':
        await this.startTask(message.session_id, message.content);
        return;
      case 'compact':
        await this.sessionFor(message.session_id).compact(message.focus);
        return;
      case 'interrupt':
        await this.sessionFor(message.session_id).interrupt(`interrupted by ${this.name}`);
        return;
      case 'approval_response':
        await this.sessionFor(message.session_id)
          .answer(message.request_id, message.decision, this.name);
        return;
      case 'elicitation_response':
        await this.sessionFor(message.session_id).answerElicitation(
          message.request_id,
          {
            action: message.action,
            ...(message.content === undefined ? {} : { content: message.content }),
          },
          this.name,
        );
        return;
      case 'close':
        await this.closeSession(message);
        return;
      case 'ping':
        this.send({ type: 'pong' });
        return;
    }
  }

  private async hello(message: ClientMessageOf<'hello'>): Promise<void> {
    if (!sameToken(message.token, this.options.token ?? '')) {
      await this.refuse('the token is wrong');
      return;
    }
    if (message.protocol !== protocolVersion) {
      this.send({
        type: 'error',
        code: 'unsupported_protocol',
        message: `protocol ${message.protocol} is not supported; this server speaks ${protocolVersion}`,
      });
      await this.finish({ code: 'unsupported_protocol', message: 'unsupported protocol' });
      return;
    }
    clearTimeout(this.helloTimer);
    this.authenticated = true;
    const unreadable = (await this.options.unreadableSessions?.()) ?? [];
    this.send({
      type: 'welcome',
      protocol: protocolVersion,
      server: this.options.server ?? { name: 'claw', version: '0.0.0' },
      sessions: (await this.options.sessions?.()) ?? [],
      ...(unreadable.length === 0 ? {} : { unreadable_sessions: unreadable }),
    });
  }

  private async openSession(options: OpenOptions): Promise<{ id: string; lastSeq: number }> {
    const id = options.sessionId ?? this.nextSessionId();
    if (!isValidSessionId(id)) {
      throw new ChannelError(
        `invalid session id ${JSON.stringify(id)}: use up to 128 letters, digits, "-", "_" or "."`,
        { code: 'invalid_session_id', sessionId: id },
      );
    }
    const role = options.role ?? 'controller';
    let existing = this.sessions.get(id);
    if (existing?.ended !== undefined) {
      // The server let it go while this connection followed it (LIFE-2): what it had of the
      // session is left behind, and the session is read afresh.
      this.sessions.delete(id);
      await existing.detach(false, this.name).catch(() => undefined);
      existing = undefined;
    }
    // Opened again (a resync): the old subscription ends, the new cursor counts.
    const session = existing ?? (await this.attach(id, options.workdir, role));
    try {
      return { id, lastSeq: session.open(role, options.after) };
    } catch (error) {
      if (existing === undefined) {
        this.sessions.delete(id);
        await session.detach(false, this.name);
      }
      throw error;
    }
  }

  /** A runtime on the session, for this connection. */
  private async attach(
    id: string,
    workdir: string | undefined,
    role: ChannelRole,
  ): Promise<ChannelSession> {
    if (this.sessions.size + this.opening.size >= (this.options.maxSessions ?? 64)) {
      throw new ChannelError(
        `this connection has ${this.sessions.size} sessions open, the most it may; close one first`,
        { code: 'too_many_sessions', sessionId: id },
      );
    }
    const workDir = allowedWorkDir(this.options.workspaces, workdir);
    this.opening.add(id);
    let runtime: RuntimeHandle;
    try {
      runtime = await this.options.runtimes.createRuntime({
        id: `${this.name}:${id}`,
        sessionId: id,
        workDir,
        ...(this.options.approvalHandler === undefined
          ? {}
          : { approvalHandler: this.options.approvalHandler }),
        ...(this.options.approval === undefined ? {} : { approval: this.options.approval }),
      });
    } catch (error) {
      throw toChannelError(error, id);
    } finally {
      this.opening.delete(id);
    }
    if (this.closing !== undefined) {
      await runtime.close({ cancel: false });
      throw new ChannelError('the connection is closed', { code: 'closed', sessionId: id });
    }
    const session = new ChannelSession({
      runtime,
      role,
      send: (event) => this.out.push(event, { paced: true }),
      room: () => (this.out.hasRoom ? undefined : this.out.room()),
      tooSlow: (reason) => this.out.close(reason),
    });
    this.sessions.set(id, session);
    return session;
  }

  private async startTask(sessionId: string | undefined, content: string): Promise<string> {
    // A prompt on a connection with no session opens one (the seed's flow).
    if (sessionId === undefined && this.sessions.size === 0) await this.openSession({});
    return this.sessionFor(sessionId).prompt(content);
  }

  private async closeSession(message: ClientMessageOf<'close'>): Promise<void> {
    const session = this.sessionFor(message.session_id);
    const end = message.end === true;
    if (end) session.requireController('end its task');
    this.sessions.delete(session.id);
    await session.detach(end, this.name);
    this.send({ type: 'session_closed', session_id: session.id, ended: end });
  }

  private sessionFor(sessionId: string | undefined): ChannelSession {
    if (sessionId !== undefined) {
      const session = this.sessions.get(sessionId);
      if (session === undefined) throw notOpen(sessionId);
      return session;
    }
    const [only, ...others] = this.sessions.values();
    if (only === undefined) {
      throw new ChannelError('no session is open on this connection: send open first', {
        code: 'no_session',
      });
    }
    if (others.length > 0) {
      throw new ChannelError(
        `this connection has ${this.sessions.size} sessions open: say which with session_id`,
        { code: 'session_required' },
      );
    }
    return only;
  }

  private nextSessionId(): string {
    if (this.options.newSessionId !== undefined) return this.options.newSessionId();
    this.counter += 1;
    return `${this.name}-session-${this.counter}`;
  }

  private sendError(error: unknown): void {
    this.send(errorEvent(toChannelError(error)));
  }

  private async refuse(why: string): Promise<void> {
    this.send({ type: 'error', code: 'unauthorized', message: `unauthorized: ${why}` });
    await this.finish({ code: 'unauthorized', message: why });
  }

  /** Sends what is queued, then closes through the writer. */
  private async finish(reason: CloseReason): Promise<void> {
    await this.out.drain();
    this.out.close(reason);
    await this.close(reason);
  }
}

function notOpen(sessionId: string): ChannelError {
  return new ChannelError(
    `session ${JSON.stringify(sessionId)} is not open on this connection: send open first`,
    { code: 'session_not_open', sessionId },
  );
}

/**
 * Compares tokens in constant time (SEC-2): equal-length digests, whatever the inputs. An empty
 * expected token matches nothing.
 */
export function sameToken(given: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected)) && expected !== '';
}
