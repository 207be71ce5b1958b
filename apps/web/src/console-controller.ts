// Wires the socket, the reducer and sessionStorage together; React reads it as an external store.
import type { ClientMessage, ServerEvent } from '@claw/channel/protocol';
import { compactCommandText, parseComposerInput } from './commands.js';
import { restoreSessions, saveSessions } from './persistence.js';
import { ProtocolClient, socketUrl, type SocketLike } from './protocol-client.js';
import { fetchListing } from './session-listing.js';
import { followUps } from './state/decisions.js';
import { initialState, reduce } from './state/reducer.js';
import type {
  Action,
  ConsoleState,
  Decision,
  ElicitationReply,
  SessionView,
} from './state/types.js';
import { tokenKey } from './token.js';

export interface ControllerEnvironment {
  storage: Storage;
  location: { protocol: string; host: string };
  createSocket?: (url: string) => SocketLike;
}

const saveDelayMs = 250;
const listingEveryMs = 5_000;

export class ConsoleController {
  private state: ConsoleState;
  private readonly listeners = new Set<() => void>();
  private readonly env: ControllerEnvironment;
  private readonly written = new Map<string, SessionView>();
  private client: ProtocolClient | undefined;
  private token: string | undefined;
  private saveTimer: ReturnType<typeof setTimeout> | undefined;
  private listingTimer: ReturnType<typeof setInterval> | undefined;

  constructor(env: ControllerEnvironment) {
    this.env = env;
    this.state = initialState(restoreSessions(env.storage));
  }

  readonly getState = (): ConsoleState => this.state;

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** Connects with this token (from the URL, storage, or typed in). */
  start(token: string | undefined): void {
    this.client?.stop();
    this.token = token;
    if (token === undefined) {
      this.dispatch({ type: 'connection', status: 'disconnected', detail: 'no token' });
      return;
    }
    this.client = new ProtocolClient({
      url: socketUrl(this.env.location),
      token,
      onEvent: (event) => this.receive(event),
      onStatus: (status, detail) => {
        if (status === 'unauthorized') this.env.storage.removeItem(tokenKey);
        this.dispatch({ type: 'connection', status, ...(detail === undefined ? {} : { detail }) });
      },
      ...(this.env.createSocket === undefined ? {} : { createSocket: this.env.createSocket }),
    });
    this.client.start();
    clearInterval(this.listingTimer);
    this.listingTimer = setInterval(() => void this.refreshListing(), listingEveryMs);
  }

  /** The browser is back online: try now rather than after the backoff. */
  retryNow(): void {
    this.client?.retryNow();
  }

  /** Writes what a reload needs now (the page is going away). */
  flush(): void {
    clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    saveSessions(this.env.storage, this.state, this.written);
  }

  newSession(): void {
    if (this.send({ type: 'open' })) this.dispatch({ type: 'new_session_requested' });
  }

  openSession(sessionId: string): void {
    if (this.send({ type: 'open', session_id: sessionId })) {
      this.dispatch({ type: 'open_requested', sessionId });
    }
  }

  closeSession(sessionId: string): void {
    // Closed in the page at once: events still on their way for it are ignored.
    this.send({ type: 'close', session_id: sessionId });
    this.dispatch({ type: 'close_requested', sessionId });
  }

  /**
   * What the message box sends: `/compact [what to keep]` compacts the conversation, anything
   * else is a prompt. False when nothing could be sent.
   */
  submit(sessionId: string, text: string): boolean {
    const input = parseComposerInput(text);
    return input.type === 'compact'
      ? this.compact(sessionId, input.focus)
      : this.prompt(sessionId, input.content);
  }

  prompt(sessionId: string, content: string): boolean {
    if (content.trim() === '') return false;
    if (!this.send({ type: 'prompt', session_id: sessionId, content })) return false;
    this.dispatch({ type: 'prompt_sent', sessionId, content });
    return true;
  }

  /**
   * Compacts the session's conversation now (CMP-5). The command shows as the page's prompt until
   * the server starts its task (`task_started` content `/compact …`) or refuses it.
   */
  compact(sessionId: string, focus?: string): boolean {
    const message = { type: 'compact', session_id: sessionId, ...(focus === undefined ? {} : { focus }) } as const;
    if (!this.send(message)) return false;
    this.dispatch({ type: 'prompt_sent', sessionId, content: compactCommandText(focus) });
    return true;
  }

  interrupt(sessionId: string): void {
    this.send({ type: 'interrupt', session_id: sessionId });
  }

  /** Passes a person's answer on; the card changes only when the server says it resolved. */
  answer(sessionId: string, requestId: string, decision: Decision): void {
    const message = { type: 'approval_response', session_id: sessionId, request_id: requestId, decision } as const;
    if (this.send(message)) {
      this.dispatch({ type: 'approval_answered', sessionId, requestId, decision });
    }
  }

  /**
   * Passes an answer to an MCP server's request for input on (MCP-7): the form's content with
   * `accept`. The card goes only when the server says the request resolved; a refusal (the answer
   * does not fit the form, or another answer won) comes back as an error on the card.
   */
  answerElicitation(sessionId: string, requestId: string, reply: ElicitationReply): void {
    const message = {
      type: 'elicitation_response',
      session_id: sessionId,
      request_id: requestId,
      ...reply,
    } as const;
    if (this.send(message)) {
      this.dispatch({ type: 'elicitation_answered', sessionId, requestId, action: reply.action });
    }
  }

  dismissNotice(): void {
    this.dispatch({ type: 'dismiss_notice' });
  }

  private send(message: ClientMessage): boolean {
    return this.client?.send(message) ?? false;
  }

  private receive(event: ServerEvent): void {
    this.dispatch({ type: 'server_event', event, receivedAt: Date.now() });
    for (const open of followUps(this.state, event)) {
      if (!this.send(open)) continue;
      this.dispatch({
        type: 'open_requested',
        sessionId: open.session_id ?? '',
        ...(open.after === undefined ? {} : { after: open.after }),
      });
    }
  }

  private async refreshListing(): Promise<void> {
    if (this.token === undefined || this.state.connection !== 'connected') return;
    if (typeof document !== 'undefined' && document.visibilityState === 'hidden') return;
    const listing = await fetchListing(this.token);
    if (listing !== undefined) this.dispatch({ type: 'listing', ...listing });
  }

  private dispatch(action: Action): void {
    const next = reduce(this.state, action);
    if (next === this.state) return;
    this.state = next;
    this.saveTimer ??= setTimeout(() => this.flush(), saveDelayMs);
    for (const listener of this.listeners) listener();
  }
}
