import path from 'node:path';
import {
  DefaultPolicy,
  FileAuditLog,
  FileGrantStore,
  Gate,
  type ApprovalHandler,
  type ApprovalMode,
  type AuditLog,
  type GrantStore,
  type Policy,
} from '@claw/approval';
import {
  ClawUserError,
  SharedResources,
  raceAbort,
  type Provider,
  type Reporter,
  type SharedLease,
  type Tool,
} from '@claw/core';
import { Engine, builtinTools, joinToolSources, type ToolSource } from '@claw/engine';
import { OpenAIProvider, RetryingProvider } from '@claw/provider';
import { createCommandSpawner, type CommandSpawner } from '@claw/sandbox';
import type { SessionListOptions } from '@claw/session-store';
import type { Tracer } from '@opentelemetry/api';
import type { McpServerConfig, McpServers } from '@claw/mcp';
import { RuntimeClosedError } from './errors.js';
import { collectEnvironment, findGitRepository } from './environment.js';
import { loadInstructions } from './instructions.js';
import { FirstReplyProvider } from './first-reply.js';
import type { EventRetention, SubscriberBound } from './event-log.js';
import { WorkspaceA2a, type A2aOptions } from './a2a.js';
import { ElicitationRoutes, WorkspaceMcp, askSession, type McpOptions } from './mcp.js';
import { Runtime } from './runtime.js';
import type { SessionApprovals } from './session-approvals.js';
import { SessionHost, type SessionContext } from './session-host.js';
import { commandEnvironment, type Settings } from './settings.js';
import { checkWorkspaceTrust, userClawFolders, type WorkspaceTrust } from './trust.js';
import { WorkspaceSessions, WorkspaceShared, type SessionSource } from './workspaces.js';

/** What a policy factory is told about where its policy will be used. */
export interface PolicyContext {
  workDir: string;
  /** True when bash runs isolated (bubblewrap); the default policy then lets `allow` cover it. */
  bashIsolated: boolean;
}

/** What a `RuntimeFactory` builds every runtime from: the resolved settings and the app's hooks. */
export interface RuntimeFactoryOptions {
  settings: Settings;
  /** The process environment, for the allow-listed environment of bash commands. */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * The model, instead of the OpenAI-compatible one the settings describe (the demo's scripted
   * model, tests, eval). Used as given: it is not wrapped in retries.
   */
  provider?: Provider;
  /** Tools added to the built-in ones. */
  tools?: readonly Tool[];
  /**
   * Which built-in tools the model gets, by name (`read_file`, `write_file`, `edit_file`,
   * `bash`). Default: all four. An unknown name is an error.
   */
  builtinTools?: readonly string[];
  /** Where spans go (e.g. `createFileTracing(...).tracer`); default: the global tracer provider. */
  tracer?: Tracer;
  /** Where sessions live. Default: on disk, under each workspace's `.claw/sessions/`. */
  sessions?: SessionSource;
  /** The grant store of a workspace (RT-2). Default: `<workDir>/.claw/grants.json`. */
  grantStore?: (workDir: string) => GrantStore | Promise<GrantStore>;
  /** The audit log of a workspace (RT-2). Default: `<workDir>/.claw/audit.jsonl`. */
  auditLog?: (workDir: string) => AuditLog | Promise<AuditLog>;
  /** The approval policy (RT-2). Default: `DefaultPolicy`. */
  policy?: (context: PolicyContext) => Policy;
  /**
   * A task that a stopped process (or an instance that lost the session) left waiting for
   * approvals goes on when the session is opened again: its questions are raised again, and what
   * they allow runs (SCALE-3). Default false: the task is ended as interrupted (a one-shot CLI
   * run must not find its session busy with an old task).
   */
  resumeInterrupted?: boolean;
  /** How many recent events each session keeps for replay (RT-4). */
  eventRetention?: EventRetention;
  /**
   * Hears a failure of a session's background work that no caller awaits (storing and letting a
   * session go after its task, LIFE-2), with what was being done. Default: not reported.
   */
  onError?: (error: unknown, what: string) => void;
  /** How far an event subscriber may fall behind (RT-3). */
  subscriberBound?: SubscriberBound;
  /** Give subagents to the model (`spawn_subagent`). Default true. */
  subagents?: boolean;
  /**
   * Prepared bash isolation (skips the probe), e.g. shared between factories in one process; a
   * promise is waited for by the first tool call only.
   */
  spawner?: CommandSpawner | Promise<CommandSpawner>;
  /**
   * The MCP servers of each workspace's `.claw/mcp.json` (MCP-1..5): their tools join the
   * built-in ones in that workspace's sessions, behind the same approval gate. Where warnings go,
   * and the timers (for tests).
   */
  mcp?: McpOptions;
  /**
   * `delegate_agent` (A2A-1) in the sessions of each workspace that has `.claw/a2a.json`, behind
   * the same approval gate (risk dangerous).
   */
  a2a?: A2aOptions;
  /**
   * Replaces claw's own part of the system prompt (REAL-1): who it is, how to work, its tools.
   * The environment block, the project instructions and `appendSystemPrompt` still follow it.
   * Default: the settings' (`--system-prompt-file`), else claw's own.
   */
  systemPrompt?: string;
  /** Added at the end of the system prompt (REAL-1). Default: the settings'. */
  appendSystemPrompt?: string;
  /**
   * Give the model the project instructions (`AGENTS.md` of the user and from the repository
   * root down to the workspace, REAL-2). Default true.
   */
  instructions?: boolean;
  /** The clock of the environment block's date (REAL-1). Default: the system clock. */
  now?: () => Date;
}

/** One runtime of `RuntimeFactory.createRuntime`: its session, workspace and per-client hooks. */
export interface CreateRuntimeOptions {
  /** Default: `runtime-N`. */
  id?: string;
  /** Default: "default". An existing one is resumed; one a runtime already holds is shared. */
  sessionId?: string;
  workDir: string;
  /**
   * Answers the calls the policy asks about (a terminal prompt, an unattended denial). Optional:
   * a runtime without one answers with `respond` (a channel client's `approval_response`); the
   * session's questions go to every runtime attached to it, the first answer wins.
   */
  approvalHandler?: ApprovalHandler;
  /** Used when a task is started without its own. */
  reporter?: Reporter;
  /** Overrides the settings' approval mode for this runtime's tasks (e.g. remote runs deny). */
  approval?: ApprovalMode;
  /**
   * Called once the runtime has closed (e.g. a server counting who watches a session); its
   * close waits for what this returns.
   */
  onClose?: () => Promise<void> | void;
  /**
   * MCP servers of this session only, next to the workspace's `.claw/mcp.json` (an editor's,
   * ACP-1): started when the session opens here and closed when it is let go. A workspace
   * server of the same name wins. Used only when this runtime opens the session (not when it
   * joins a session another runtime holds).
   */
  mcpServers?: readonly McpServerConfig[];
}

interface Workspace {
  grants: GrantStore;
  audit: AuditLog;
}

/**
 * Builds runtimes from settings (RT-2): the model (OpenAI-compatible, wrapped in retries and
 * timeouts), one engine with the built-in tools (bash isolated where the machine allows) for
 * every session, approval gates from the policy, grant store and audit log of each workspace, the
 * sessions, budgets and tracing. Each session has one host in the process (RT-5) that every
 * runtime on it shares; hosts (used by their runtimes and their running task), session stores and
 * per-workspace grant stores are released when nothing uses them. The expensive shared parts
 * (the isolation probe, the engine) are made once, lazily, and `close()` releases everything.
 */
export class RuntimeFactory {
  readonly settings: Settings;
  private readonly options: RuntimeFactoryOptions;
  private readonly provider: FirstReplyProvider;
  private readonly sessions: SessionSource;
  private readonly workspaces: WorkspaceShared<Workspace>;
  private readonly mcp: WorkspaceMcp;
  /** Where the workspace's servers' requests for input go (MCP-7). */
  private readonly inputRoutes = new ElicitationRoutes();
  private readonly a2a: WorkspaceA2a;
  private spawner: Promise<CommandSpawner> | undefined;
  private engineReady: Promise<Engine> | undefined;
  /** The session hosts by workspace and session; their users are runtimes and running tasks. */
  private readonly hosts = new SharedResources<string, SessionHost>({
    dispose: (host) => this.letGo(host.release()),
  });

  /** Hosts being let go, which `close` waits for. */
  private readonly releasing = new Set<Promise<void>>();
  private readonly runtimes = new Set<Runtime>();
  private counter = 0;
  private closed = false;

  /**
   * @throws ClawUserError `config_missing` when no provider is given and the settings have no API
   *   key (the message names OPENAI_API_KEY).
   */
  constructor(options: RuntimeFactoryOptions) {
    this.options = options;
    this.settings = options.settings;
    this.provider = new FirstReplyProvider(
      options.provider ?? createOpenAIProvider(options.settings),
    );
    this.sessions = options.sessions ?? new WorkspaceSessions();
    const grantStore = options.grantStore ?? ((workDir) => new FileGrantStore({ workDir }));
    const auditLog = options.auditLog ?? ((workDir) => new FileAuditLog({ workDir }));
    this.workspaces = new WorkspaceShared(
      async (workDir) => ({ grants: await grantStore(workDir), audit: await auditLog(workDir) }),
      // The audit log keeps its file open while the workspace is used.
      (workspace) => workspace.audit.close?.(),
    );
    if (options.spawner !== undefined) this.spawner = Promise.resolve(options.spawner);
    const trusted = async (root: string) => (await this.workspaceTrust(root)).trusted;
    this.mcp = new WorkspaceMcp(
      options.mcp ?? {},
      options.env ?? {},
      trusted,
      (request, servers) => this.inputRoutes.ask(request, servers),
    );
    this.a2a = new WorkspaceA2a(options.a2a ?? {}, options.env ?? {}, trusted);
  }

  /**
   * Whether a workspace's settings files (`.claw/mcp.json`, `.claw/a2a.json`) may be used, read
   * now (TRUST-1/2): with `settings.trustWorkspaces` always; else when the record of trusted
   * workspaces (in the claw folder of `options.env`'s home) has them as they are.
   *
   * @throws ClawUserError `trust_record_invalid` for a record that is not claw's.
   */
  workspaceTrust(workDir: string): Promise<WorkspaceTrust> {
    return checkWorkspaceTrust(workDir, {
      env: this.options.env ?? {},
      trustAll: this.settings.trustWorkspaces === true,
    });
  }

  /**
   * How bash runs on this machine, probed once (SBX-4): bubblewrap, or not isolated (with why).
   *
   * @throws IsolationUnavailableError when the settings require isolation and it does not work.
   */
  isolation(): Promise<CommandSpawner> {
    this.spawner ??= createCommandSpawner({
      isolation: this.settings.sandbox.isolation,
      allowNetwork: this.settings.sandbox.allowNetwork,
      env: commandEnvironment(this.options.env ?? {}),
      hiddenFolders: userClawFolders(this.options.env ?? {}),
    });
    return this.spawner;
  }

  /**
   * Resolves once the model has first answered a call of this factory's runtimes (its first
   * streamed event, its response, or its failure): true when it answered, false when that call
   * failed. Never rejects. Work that is not needed before then, such as the isolation probe of a
   * one-shot task, can start then and not delay the first model request (PERF-2).
   */
  firstModelReply(): Promise<boolean> {
    return this.provider.replied;
  }

  /**
   * The one engine of this factory, shared by every session (RT-2). It does not wait for the
   * isolation probe (PERF-2: the first model call goes out while bubblewrap is tried); the first
   * bash command does. Where isolation is `required`, the probe comes first, so a machine that
   * cannot isolate fails before any work.
   */
  engine(): Promise<Engine> {
    const ready = this.settings.sandbox.isolation === 'required'
      ? this.isolation().then(() => undefined)
      : Promise.resolve();
    this.engineReady ??= ready.then(() => {
      const { settings } = this;
      return new Engine({
        provider: this.provider,
        tools: [
          ...chosenBuiltins(this.options.builtinTools, () => this.isolation()),
          ...(this.options.tools ?? []),
        ],
        model: settings.model,
        maxTurns: settings.maxTurns,
        ...definedOnly({
          systemPrompt: this.options.systemPrompt ?? settings.systemPrompt,
          appendSystemPrompt: this.options.appendSystemPrompt ?? settings.appendSystemPrompt,
        }),
        subagents: this.options.subagents ?? true,
        contextWindowTokens: settings.contextWindowTokens,
        compactAtRatio: settings.compactAtRatio,
        prices: settings.prices,
        maxSessionTokens: settings.maxSessionTokens,
        maxRunTokens: settings.maxRunTokens,
        maxSubagents: settings.maxSubagents,
        maxSessionCostUsd: settings.maxSessionCostUsd,
        maxRunCostUsd: settings.maxRunCostUsd,
        toolTimeBudgetMs: settings.toolTimeBudgetMs,
        ...(this.options.tracer === undefined ? {} : { tracer: this.options.tracer }),
      });
    });
    // A failed build is not kept: the next call tries again.
    this.engineReady.catch(() => {
      this.engineReady = undefined;
    });
    return this.engineReady;
  }

  /**
   * The MCP servers of a workspace (its `.claw/mcp.json`), opened once for this factory and shared
   * by all its runtimes, started in the background (`ready()` waits for them); `undefined` when
   * the workspace has none. `close()` closes them.
   *
   * @throws RuntimeClosedError after `close()`; McpConfigError when the file cannot be used; the
   *   signal's reason when it aborts (the servers are opened all the same).
   */
  async mcpServers(
    workDir: string,
    options: { signal?: AbortSignal } = {},
  ): Promise<McpServers | undefined> {
    if (this.closed) throw new RuntimeClosedError('the runtime factory');
    return raceAbort(this.mcp.servers(path.resolve(workDir)), options.signal);
  }

  /**
   * A runtime on one session: it attaches to the session's host (made, and the session opened and
   * locked, when no runtime of this process holds it yet). The workspace's MCP servers start in
   * the background; a task's first model call waits for them.
   *
   * @throws RuntimeClosedError after `close()` (also when `close()` came while it was being made);
   *   McpConfigError when the workspace's `.claw/mcp.json` cannot be used; SessionLockedError
   *   when another process holds the session; what opening the session throws.
   */
  async createRuntime(options: CreateRuntimeOptions): Promise<Runtime> {
    if (this.closed) throw new RuntimeClosedError('the runtime factory');
    const workDir = path.resolve(options.workDir);
    await this.engine();
    await this.mcpServers(workDir);
    const lease = await this.attach(
      options.sessionId ?? 'default',
      workDir,
      options.mcpServers ?? [],
    );
    if (this.closed) {
      await lease.release();
      throw new RuntimeClosedError('the runtime factory');
    }
    const host = lease.value;
    this.counter += 1;
    const id = options.id ?? `runtime-${this.counter}`;
    const handler = options.approvalHandler;
    // A runtime without a handler is a client that answers with `respond` (a channel client).
    const removeResponder =
      handler === undefined
        ? host.approvals.addClient()
        : host.approvals.addResponder({ name: id, handler });
    const runtime: Runtime = new Runtime({
      id,
      host,
      detach: async () => {
        removeResponder();
        await lease.release();
      },
      ...(options.reporter === undefined ? {} : { reporter: options.reporter }),
      ...(options.approval === undefined ? {} : { mode: options.approval }),
      onClose: () => {
        this.runtimes.delete(runtime);
        return options.onClose?.();
      },
    });
    this.runtimes.add(runtime);
    return runtime;
  }

  /**
   * The sessions of a workspace, most recently changed first; those that cannot be read are left
   * out and go to `options.onUnreadable`.
   */
  listSessions(workDir: string, options: SessionListOptions = {}) {
    return this.sessions.list(path.resolve(workDir), options);
  }

  /**
   * Lets session `sessionId` go in every workspace, now, whoever is attached: its task is
   * canceled (its tool processes killed) and the session released. For a session this process
   * may no longer write (its lease was lost, SCALE-2): the next `createRuntime` on it opens it
   * again from the store instead of reusing what this process had in memory.
   */
  async closeSession(sessionId: string, reason: unknown = new Error('the session was closed')): Promise<void> {
    await this.closeHosts((host) => host.sessionId === sessionId, reason);
  }

  /** How many sessions have a host now (nothing is kept that nobody uses). */
  get openSessions(): number {
    return this.hosts.size;
  }

  /**
   * Closes every runtime it made, cancels running tasks (history stays paired), stores and
   * releases every session, and closes the MCP servers (HTTP sessions deleted, child processes
   * killed). Idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.runtimes].map((runtime) => runtime.close()));
    await this.closeHosts(() => true, new Error('the runtime factory was closed'));
    await Promise.allSettled([...this.releasing]);
    await this.mcp.close();
  }

  /**
   * Closes the hosts `which` picks, whoever uses them: they are taken out first (their runtimes'
   * and tasks' uses then do nothing), so that the next `createRuntime` makes a new host.
   */
  private async closeHosts(which: (host: SessionHost) => boolean, reason: unknown): Promise<void> {
    await Promise.allSettled(this.hosts.entries().map(async ([key, pending]) => {
      const host = await pending;
      if (!which(host)) return;
      if (this.hosts.peek(key) === pending) void this.hosts.forget(key);
      await this.letGo(host.close(reason));
    }));
  }

  /** `released`, tracked until it settles (`close` waits for every host to be let go). */
  private letGo(released: Promise<void>): Promise<void> {
    const tracked = released.catch(() => undefined);
    this.releasing.add(tracked);
    void tracked.then(() => this.releasing.delete(tracked));
    return released;
  }

  /** A use of the session's host, made if nobody uses it (again, after it was let go). */
  private attach(
    sessionId: string,
    workDir: string,
    mcpServers: readonly McpServerConfig[],
  ): Promise<SharedLease<SessionHost>> {
    const key = `${workDir}\u0000${sessionId}`;
    return this.hosts.acquire(key, () => this.openHost(key, sessionId, workDir, mcpServers));
  }

  /**
   * The MCP servers a client brought for one session (an editor's), started now; `undefined`
   * when there are none. Loaded only when needed (PERF-2).
   */
  private async sessionMcp(
    workDir: string,
    servers: readonly McpServerConfig[],
    approvals: () => SessionApprovals | undefined,
  ): Promise<McpServers | undefined> {
    if (servers.length === 0 || this.options.mcp?.enabled === false) return undefined;
    const { McpServers: Servers, mcpAuthFile } = await import('@claw/mcp');
    const { onWarning, setTimer, reconnect, elicitationTimeoutMs } = this.options.mcp ?? {};
    // OAuth tokens (MCP-8) where `claw mcp login` keeps them; never a browser from here.
    const authFile = mcpAuthFile(this.options.env ?? {});
    const made = new Servers({
      config: { file: 'the servers the client gave for this session', servers },
      workDir,
      ...(setTimer === undefined ? {} : { setTimer }),
      ...(reconnect === undefined ? {} : { reconnect }),
      ...(onWarning === undefined ? {} : { onWarning: (warning) => onWarning(warning, workDir) }),
      ...(authFile === undefined ? {} : { oauth: { authFile } }),
      // Requests for input go to the session's own questions (MCP-7); none before it is open.
      elicitation: (request) => {
        const session = approvals();
        return session === undefined
          ? Promise.resolve({ action: 'decline' })
          : askSession(request, session);
      },
      ...(elicitationTimeoutMs === undefined ? {} : { elicitationTimeoutMs }),
    });
    made.start();
    return made;
  }

  /**
   * What the model is told about a session's workspace (REAL-1, REAL-2): where it is, the
   * platform, the date, git, how bash runs (the isolation probe's finding, when bash is offered)
   * and the project instructions.
   */
  private async sessionContext(workDir: string): Promise<SessionContext> {
    const offersBash = this.options.builtinTools === undefined || this.options.builtinTools.includes('bash');
    const [git, spawner] = await Promise.all([
      findGitRepository(workDir),
      offersBash ? this.isolation() : Promise.resolve(undefined),
    ]);
    const [environment, instructions] = await Promise.all([
      collectEnvironment({
        workDir,
        git,
        ...(spawner === undefined
          ? {}
          : {
              bash: {
                isolated: spawner.mode === 'bubblewrap',
                network: spawner.mode !== 'bubblewrap' || this.settings.sandbox.allowNetwork,
              },
            }),
        approval: this.settings.approval,
        now: this.options.now?.() ?? new Date(),
      }),
      this.options.instructions === false
        ? { files: [], warnings: [] }
        : loadInstructions({
            workDir,
            repositoryRoot: git?.root,
            userConfigDir: this.settings.userConfigDir,
          }),
    ]);
    return { environment, instructions };
  }

  /**
   * The approval policy of a workspace. It depends on how bash runs, known once the isolation
   * probe is done: the default policy waits for it only on a bash call (file tools are judged at
   * once, never behind the probe); an injected policy is made once the probe is done, which the
   * first tool call (never the first model call) waits for.
   */
  private policyFor(workDir: string): Policy {
    const bashIsolated = (): Promise<boolean> =>
      this.isolation().then((spawner) => spawner.mode === 'bubblewrap');
    const custom = this.options.policy;
    // Asked by the first bash call, which starts the probe if nothing has.
    if (custom === undefined) {
      const { allowFiles } = this.settings;
      return new DefaultPolicy({
        bashIsolated,
        ...(allowFiles === undefined ? {} : { allowFiles }),
        // The user's settings, trust record and tokens, when the workspace holds them (TRUST-4).
        privateFolders: userClawFolders(this.options.env ?? {}),
      });
    }
    let made: Promise<Policy> | undefined;
    return {
      evaluate: async (request) => {
        made ??= bashIsolated().then((isolated) => custom({ workDir, bashIsolated: isolated }));
        return (await made).evaluate(request);
      },
    };
  }

  private async openHost(
    key: string,
    sessionId: string,
    workDir: string,
    mcpServers: readonly McpServerConfig[],
  ): Promise<SessionHost> {
    // Before anything is held: a configuration that cannot be used leaves nothing to release.
    const [mcp, a2a] = await Promise.all([this.mcp.servers(workDir), this.a2a.tools(workDir)]);
    // The session's questions, once it is open: its servers' requests for input go there.
    const made: { host?: SessionHost } = {};
    const own = await this.sessionMcp(workDir, mcpServers, () => made.host?.approvals);
    // What the model is told about the session's workspace is read while the session opens.
    const context = this.sessionContext(workDir);
    context.catch(() => undefined);
    const workspace = await this.workspaces.acquire(workDir);
    let lease;
    try {
      lease = await this.sessions.open(sessionId, { workDir });
    } catch (error) {
      workspace.release();
      await own?.close();
      throw error;
    }
    let engine: Engine;
    let sessionContext: SessionContext;
    try {
      [engine, sessionContext] = await Promise.all([this.engine(), context]);
    } catch (error) {
      await lease.release().catch(() => undefined);
      workspace.release();
      await own?.close();
      throw error;
    }
    const policy = this.policyFor(workDir);
    const { environment, instructions } = sessionContext;
    // The workspace's servers' requests for input may go to this session (MCP-7).
    const route = this.inputRoutes.add({
      approvals: () => made.host?.approvals,
      workspace: mcp,
      busy: () => made.host?.activeTask !== undefined,
    });
    const runTools = joinAll([route.tools, own, a2a]);
    const host: SessionHost = new SessionHost({
      lease,
      workDir,
      context: sessionContext,
      ...(this.options.onError === undefined ? {} : { onError: this.options.onError }),
      ...(this.options.eventRetention === undefined
        ? {}
        : { retention: this.options.eventRetention }),
      ...(this.options.subscriberBound === undefined
        ? {}
        : { subscriberBound: this.options.subscriberBound }),
      ...(this.options.resumeInterrupted === true ? { resumeInterrupted: true } : {}),
      runTask: async (task) => {
        const { prompt, session, reporter, approvals, mode, signal, resumeCalls, compact } = task;
        const { files } = task;
        // The model is told about the MCP tools from its first call: wait until each server is
        // ready or has failed (within its start-up time). An abort ends the wait; the run then
        // ends as canceled.
        await Promise.all([
          mcp?.ready({ signal }).catch(() => undefined),
          own?.ready({ signal }).catch(() => undefined),
        ]);
        const promptParts = {
          ...(environment === undefined
            ? {}
            : { environment: { ...environment, approval: mode ?? this.settings.approval } }),
          instructions: instructions.files,
        };
        if (compact !== undefined) {
          return engine.compact({
            session,
            reporter,
            signal,
            ...(compact.focus === undefined ? {} : { focus: compact.focus }),
            ...(runTools === undefined ? {} : { tools: runTools }),
            ...promptParts,
          });
        }
        return engine.run(prompt, {
          session,
          reporter,
          signal,
          gate: new Gate({
            policy,
            handler: approvals,
            grants: workspace.value.grants,
            audit: workspace.value.audit,
            mode: mode ?? this.settings.approval,
          }),
          ...(runTools === undefined ? {} : { tools: runTools }),
          ...(resumeCalls === undefined ? {} : { resumeCalls }),
          ...(files === undefined ? {} : { files }),
          // The approval mode is the task's (a remote agent's tasks are denied what a console's
          // are asked): the same in every task of a session that keeps one mode.
          ...promptParts,
        });
      },
      // Its running task is a user of the host too (the host is made now: this use joins it).
      hold: () => {
        const use = this.hosts.acquire(key);
        use.catch(() => undefined);
        return async () => {
          await (await use.catch(() => undefined))?.release();
        };
      },
      onReleased: () => {
        route.remove();
        workspace.release();
        // The session's own servers go with it (the workspace's stay for the factory).
        void own?.close().catch(() => undefined);
      },
    });
    made.host = host;
    return host;
  }
}

function createOpenAIProvider(settings: Settings): Provider {
  if (settings.apiKey === undefined) {
    throw new ClawUserError(
      'OPENAI_API_KEY is not set: set it to your API key (and OPENAI_BASE_URL for another ' +
      'OpenAI-compatible server), or try `claw demo`, which needs no key',
      { code: 'config_missing' },
    );
  }
  return new RetryingProvider(
    new OpenAIProvider({
      apiKey: settings.apiKey,
      model: settings.model,
      ...(settings.baseUrl === undefined ? {} : { baseURL: settings.baseUrl }),
    }),
    {
      attempts: settings.retries + 1,
      callTimeoutMs: settings.callTimeoutMs,
      firstTokenTimeoutMs: settings.firstTokenTimeoutMs,
      streamIdleTimeoutMs: settings.streamIdleTimeoutMs,
    },
  );
}

/** One source of the tools there are (the first of a name wins); `undefined` when none. */
function joinAll(sources: ReadonlyArray<ToolSource | undefined>): ToolSource | undefined {
  const present = sources.filter((source): source is ToolSource => source !== undefined);
  if (present.length <= 1) return present[0];
  return joinToolSources(...present);
}

/** `values` without its undefined entries (for options that must be absent, not undefined). */
function definedOnly<T extends Record<string, unknown>>(values: T): Partial<T> {
  const result: Partial<T> = {};
  for (const [key, value] of Object.entries(values)) {
    if (value !== undefined) result[key as keyof T] = value as T[keyof T];
  }
  return result;
}

/**
 * The built-in tools named in `names` (all of them when undefined), in their usual order. The
 * isolation probe is started by the first bash command, not before.
 *
 * @throws ClawUserError `unknown_builtin_tool` naming the ones there are.
 */
function chosenBuiltins(
  names: readonly string[] | undefined,
  spawner: () => Promise<CommandSpawner>,
): Tool[] {
  const wantsBash = names === undefined || names.includes('bash');
  const all = builtinTools(wantsBash ? { bash: { spawner } } : {});
  if (names === undefined) return all;
  const known = all.map((tool) => tool.definition.name);
  const unknown = names.filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    throw new ClawUserError(
      `unknown built-in tool ${unknown.map((name) => JSON.stringify(name)).join(', ')}: the ` +
      `built-in tools are ${known.join(', ')}`,
      { code: 'unknown_builtin_tool' },
    );
  }
  return all.filter((tool) => names.includes(tool.definition.name));
}
