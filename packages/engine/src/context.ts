import {
  compactedView,
  type AgentSession,
  type Compaction,
  type CompactionReason,
  type Message,
  type ModelRequest,
  type ToolDefinition,
  type Usage,
} from '@claw/core';
import {
  ContextExhaustedError,
  compact,
  limitTokens,
  thresholdTokens,
  type CompactionLimits,
  statedContextLimit,
  type SummaryRequest,
} from './compaction.js';
import { buildRequest, estimateRequestTokens, type RequestSettings } from './request.js';
import { estimateMessageTokens } from './working-memory.js';

/** What the last reply's usage says a request was (for the next one's size, CMP-1). */
export interface Measure {
  compaction: Compaction | undefined;
  /** The messages of the conversation that request sent (its system prompt apart). */
  sent: number;
  promptTokens: number;
}

export interface ContextKeeperOptions {
  session: AgentSession;
  /** The session as the caller knows it (measures are kept per session, across runs). */
  measures: WeakMap<object, Measure>;
  /** The windows servers said sessions' models have, when smaller than the settings' (overflow). */
  windows: WeakMap<object, number>;
  measureKey: object;
  settings: RequestSettings;
  limits: CompactionLimits;
  /** Makes the summary call (counted, traced); rejects when it fails. */
  summarise: (request: SummaryRequest) => Promise<{ text: string; usage?: Usage }>;
  /** Told of every compaction, once it is stored. */
  onCompacted: (compaction: Compaction) => Promise<void>;
  signal: AbortSignal;
}

/**
 * Keeps a run's requests inside the model's context (CMP-1 … CMP-3): builds each request from the
 * session's history as the latest compaction shows it, compacts first when the request would pass
 * the threshold (once a model call at most, and not again until the conversation has grown by a
 * tenth of the window since the last compaction: a summary is never made turn after turn), and
 * compacts once on an overflow the server reports. A request that does not fit even then ends the
 * task with `ContextExhaustedError`.
 */
export class ContextKeeper {
  /** A compaction of a session that cannot store one: it lasts for the run. */
  private local: Compaction | undefined;

  /** The window the run is sized by: the settings', or less once a server said so (overflow). */
  private limits: CompactionLimits;

  constructor(private readonly options: ContextKeeperOptions) {
    const learned = options.windows.get(options.measureKey);
    this.limits = learned === undefined || learned >= options.limits.contextWindowTokens
      ? options.limits
      : { ...options.limits, contextWindowTokens: learned };
  }

  /** The session's latest compaction. */
  current(): Compaction | undefined {
    return this.options.session.compaction?.() ?? this.local;
  }

  /**
   * The next request, compacted first when it would pass the threshold (CMP-1).
   *
   * @throws ContextExhaustedError when it does not fit even so.
   */
  async request(tools: ToolDefinition[]): Promise<{ request: ModelRequest; compacted: boolean }> {
    const { limits } = this;
    let view = this.view();
    let tokens = this.size(view, tools);
    let compacted = false;
    if (tokens > thresholdTokens(limits) && this.grownSinceLastCompaction(tokens)) {
      compacted = (await this.compact('threshold', tools, false)) !== undefined;
      view = this.view();
      tokens = this.size(view, tools);
    }
    this.checkFits(tokens);
    return { request: buildRequest(view, tools, this.options.settings), compacted };
  }

  /**
   * After the server said the request did not fit (CMP-1): compacts as far as it goes and gives
   * the request to send once more.
   *
   * @throws ContextExhaustedError when nothing could be compacted, or it still does not fit.
   */
  async afterOverflow(tools: ToolDefinition[], cause: unknown): Promise<ModelRequest> {
    // The server's context is smaller than claw assumed: what it states, else a little under
    // the request it refused. The rest of the run is sized by it.
    const refused = this.size(this.view(), tools);
    const stated = statedContextLimit(cause);
    const window = Math.min(
      this.limits.contextWindowTokens,
      stated ?? Math.max(1_000, Math.floor(refused * 0.9)),
    );
    if (window < this.limits.contextWindowTokens) {
      this.limits = { ...this.limits, contextWindowTokens: window };
      this.options.windows.set(this.options.measureKey, window);
    }
    const done = await this.compact('overflow', tools, true);
    const view = this.view();
    const tokens = this.size(view, tools);
    if (done === undefined) throw this.exhausted(tokens, cause);
    this.checkFits(tokens, cause);
    return buildRequest(view, tools, this.options.settings);
  }

  /**
   * The server said `request` does not fit, and it was compacted for this call already: the task
   * ends (CMP-3), never with a second compaction.
   */
  exhaustedBy(request: ModelRequest, tools: readonly ToolDefinition[], cause: unknown): never {
    const system = request.messages[0]?.role === 'system' ? request.messages[0].content : undefined;
    const messages = system === undefined ? request.messages : request.messages.slice(1);
    throw this.exhausted(estimateRequestTokens(system, tools, messages), cause);
  }

  /** A compaction asked for (`/compact`, CMP-5); `undefined` when there was nothing to compact. */
  manual(tools: ToolDefinition[], focus: string | undefined): Promise<Compaction | undefined> {
    return this.compact('manual', tools, true, focus);
  }

  /** Notes what the server counted of the request just sent (the next size starts from it). */
  measured(request: ModelRequest, usage: Usage | undefined): void {
    if (usage === undefined || usage.promptTokens <= 0) return;
    const system = request.messages[0]?.role === 'system' ? 1 : 0;
    this.options.measures.set(this.options.measureKey, {
      compaction: this.current(),
      sent: request.messages.length - system,
      promptTokens: usage.promptTokens,
    });
  }

  /** Throws when a request of `tokens` cannot be sent. */
  private checkFits(tokens: number, cause?: unknown): void {
    if (tokens > limitTokens(this.limits)) throw this.exhausted(tokens, cause);
  }

  private exhausted(tokens: number, cause: unknown): ContextExhaustedError {
    const { limits } = this;
    return new ContextExhaustedError({
      requestTokens: tokens,
      limitTokens: limitTokens(limits),
      contextWindowTokens: limits.contextWindowTokens,
      cause,
    });
  }

  private view(): Message[] {
    return compactedView(this.options.session.history(), this.current());
  }

  /**
   * A request's size: what the server counted for the last one, plus an estimate of what was
   * added since, when the conversation only grew since then; the estimate of the whole request
   * when that is larger (a server that reports too few tokens must not keep claw from compacting).
   */
  private size(view: readonly Message[], tools: readonly ToolDefinition[]): number {
    const estimate = estimateRequestTokens(this.options.settings.systemPrompt, tools, view);
    const measure = this.options.measures.get(this.options.measureKey);
    const grownOnly = measure !== undefined && measure.compaction === this.current() &&
      view.length >= measure.sent;
    if (measure === undefined || !grownOnly) {
      return estimate;
    }
    let measured = measure.promptTokens;
    for (const message of view.slice(measure.sent)) measured += estimateMessageTokens(message);
    return Math.max(estimate, measured);
  }

  /** True unless the last compaction left the request within a tenth of the window of `tokens`. */
  private grownSinceLastCompaction(tokens: number): boolean {
    const last = this.current();
    if (last === undefined) return true;
    return tokens - last.tokensAfter >= this.limits.contextWindowTokens / 10;
  }

  private async compact(
    reason: CompactionReason,
    tools: readonly ToolDefinition[],
    force: boolean,
    focus?: string,
  ): Promise<Compaction | undefined> {
    const { session, settings, signal } = this.options;
    const { limits } = this;
    const done = await compact({
      history: session.history(),
      current: this.current(),
      reason,
      limits,
      requestTokens: (view) => estimateRequestTokens(settings.systemPrompt, tools, view),
      summarise: this.options.summarise,
      force,
      signal,
      ...(focus === undefined ? {} : { focus }),
    });
    if (done === undefined) return undefined;
    if (session.compact === undefined) this.local = done;
    else await session.compact(done);
    await this.options.onCompacted(done);
    return done;
  }
}
