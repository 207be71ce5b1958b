// The console's state: what the reducer computes from server events and local actions.
import type {
  InstructionFile,
  ServerEvent,
  ServerEventOf,
  TaskTally,
} from '@claw/channel/protocol';

export type ConnectionStatus =
  | 'connecting'
  | 'connected'
  | 'reconnecting'
  | 'unauthorized'
  | 'disconnected';

export type RunState = ServerEventOf<'state'>['state'];
/** Stored sessions the server cannot read, as `welcome` and the listing name them. */
export type UnreadableSessions = NonNullable<ServerEventOf<'welcome'>['unreadable_sessions']>;
export type Decision = ServerEventOf<'approval_resolved'>['decision'];
export type Risk = ServerEventOf<'approval_request'>['risk'];
export type ElicitationAction = ServerEventOf<'elicitation_resolved'>['action'];
/** The form an MCP server asks for (MCP-7), as its `elicitation_request` gives it. */
export type ElicitationSchema = ServerEventOf<'elicitation_request'>['requested_schema'];
/** What an answer to a request for input sends: the form's content with `accept`. */
export type ElicitationReply =
  | { action: 'accept'; content: Record<string, string | number | boolean | string[]> }
  | { action: 'decline' | 'cancel' };
export type TaskEnd = 'completed' | 'canceled' | 'failed';
export type CompactionReason = ServerEventOf<'context_compacted'>['reason'];

export interface UserItem {
  kind: 'user';
  key: string;
  text: string;
  /** `pending` until the session's `task_started` confirms it; `failed` when it was refused. */
  status: 'sent' | 'pending' | 'failed';
  error?: string;
}

export interface AssistantItem {
  kind: 'assistant';
  key: string;
  text: string;
  streaming: boolean;
}

/**
 * What the model reasoned in one model call (REAL-4), apart from its answer: the call's thinking
 * deltas grow it, as text deltas grow an assistant bubble. It sits before the call's answer.
 */
export interface ThinkingItem {
  kind: 'thinking';
  key: string;
  text: string;
  /** True while the model is still reasoning (until its answer, a tool call or the call's end). */
  streaming: boolean;
}

export interface ToolItem {
  kind: 'tool';
  key: string;
  toolCallId: string;
  name: string;
  arguments: string;
  result?: { text: string; isError: boolean };
  /** What the running tool last said of its progress (`tool_progress`), until its result. */
  progress?: string;
}

export interface ApprovalItem {
  kind: 'approval';
  key: string;
  requestId: string;
  seq: number;
  toolName: string;
  risk: Risk;
  reason: string;
  arguments: string;
  resolution?: { decision: Decision; by: string };
  /** The answer this page sent and waits to see resolved (the server decides, not the page). */
  answering?: Decision;
  error?: string;
}

/**
 * An MCP server's request for input (MCP-7): its form, until it is resolved (answered here or
 * elsewhere, timed out, withdrawn); then only how it ended.
 */
export interface ElicitationItem {
  kind: 'elicitation';
  key: string;
  requestId: string;
  seq: number;
  server: string;
  message: string;
  schema: ElicitationSchema;
  resolution?: { action: ElicitationAction; by: string };
  /** The answer this page sent and waits to see resolved (the server may refuse it). */
  answering?: ElicitationAction;
  error?: string;
}

export interface NoticeItem {
  kind: 'notice';
  key: string;
  tone: 'info' | 'warning' | 'error';
  text: string;
}

/**
 * Where the conversation was compacted to fit the model's context (CMP-5): what is above it, the
 * model sees only as a summary (and the user's own messages) or, with no summary, not at all.
 */
export interface CompactionItem {
  kind: 'compaction';
  key: string;
  /**
   * What the live `context_compacted` said. Absent on a divider rebuilt from a `history`, which
   * keeps only where the compaction was and its summary.
   */
  figures?: {
    reason: CompactionReason;
    tokensBefore: number;
    tokensAfter: number;
    prunedResults: number;
    summarisedMessages: number;
  };
  /** What the model wrote for the messages above (plain text). */
  summary?: string;
  /** Why the summary failed: the messages above were then left out. */
  error?: string;
}

export type TranscriptItem =
  | UserItem
  | AssistantItem
  | ThinkingItem
  | ToolItem
  | ApprovalItem
  | ElicitationItem
  | NoticeItem
  | CompactionItem;

export interface Figures {
  /** Tokens over the session's life (from the last `usage`). */
  sessionTokens?: number;
  /** Of the session's prompt tokens, those the server read from its prompt cache (REAL-5). */
  sessionCachedTokens?: number;
  /** Tokens of the last task so far. */
  runTokens?: number;
  sessionCostUsd?: number;
  unpricedCalls?: number;
  budgetsLeft?: ServerEventOf<'usage'>['budgets_left'];
  /** Time to first token of the last reply, in milliseconds. */
  ttftMs?: number;
}

/** What the server last said about a session (welcome, the session listing, live events). */
export interface Listing {
  state: RunState;
  lastSeq: number;
  updatedAt?: string;
  /** The first line of its first prompt, as the server lists it. */
  title?: string;
}

export interface SessionView {
  id: string;
  listing: Listing;
  /** closed: not attached (only in the list); opening: `open` sent; open: attached. */
  status: 'closed' | 'opening' | 'open';
  /**
   * True when the transcript holds every event up to `lastSeq`, so a reopen may ask only for
   * what follows (`open` with `after`); false until a history or a fresh session gives a base.
   */
  synced: boolean;
  /** The server asked for a reopen without cursor (`cursor_expired`). */
  resync: boolean;
  lastSeq: number;
  runState: RunState;
  lastEnd?: TaskEnd;
  role?: 'controller' | 'observer';
  workdir?: string;
  /** The project instruction files the model is given, in order (`session_opened`, REAL-2). */
  instructions?: InstructionFile[];
  items: TranscriptItem[];
  /** The key of the assistant bubble that text deltas grow, if one is streaming. */
  streamingKey?: string;
  /** The key of the thinking block of the current model call, once it has one. */
  thinkingKey?: string;
  /** When the current model turn began (ms since epoch), until its first delta (any kind). */
  turnStartedAt?: number;
  /** `session_opened.pending_approvals`, kept to re-add after a `history` rebuild. */
  openPending: Array<ServerEventOf<'approval_request'>>;
  /** `session_opened.pending_elicitations`, kept likewise (absent: none). */
  openElicitations?: Array<ServerEventOf<'elicitation_request'>>;
  figures: Figures;
  /**
   * Since when (this page's clock, ms) the current model call has sent nothing: the page says so
   * after a while. Undefined when no call waits.
   */
  waitingSince?: number;
  /** What the running task has done so far, when this page saw it start (for its summary). */
  tally?: TaskTally;
  /**
   * The running task, when this page saw it start as `/compact`: its end tells what it did when
   * there is no divider to tell it (`nothing to compact: …`).
   */
  compactTaskId?: string;
  error?: string;
}

export interface ConsoleState {
  connection: ConnectionStatus;
  connectionDetail?: string;
  sessions: Record<string, SessionView>;
  /** The session list's order. */
  order: string[];
  /** Open sessions, in the order of their panels. */
  panels: string[];
  /** `open` messages without a session id sent and not answered yet. */
  pendingNew: number;
  server?: { name: string; version: string };
  /** The last problem that belongs to no open session. */
  notice?: string;
  /** Counter for keys of local items. */
  localCounter: number;
  /** Stored sessions the server cannot read (damaged), named apart from the list, with why. */
  unreadable: UnreadableSessions;
}

export type Action =
  | { type: 'server_event'; event: ServerEvent; receivedAt: number }
  | { type: 'connection'; status: ConnectionStatus; detail?: string }
  | { type: 'new_session_requested' }
  | { type: 'open_requested'; sessionId: string; after?: number }
  | { type: 'close_requested'; sessionId: string }
  | { type: 'prompt_sent'; sessionId: string; content: string }
  | { type: 'approval_answered'; sessionId: string; requestId: string; decision: Decision }
  | {
    type: 'elicitation_answered';
    sessionId: string;
    requestId: string;
    action: ElicitationAction;
  }
  | {
    type: 'listing';
    sessions: ServerEventOf<'welcome'>['sessions'];
    unreadable: UnreadableSessions;
  }
  | { type: 'dismiss_notice' };
