import {
  ClawError,
  type AgentSession,
  type Provider,
  type Reporter,
  type Tool,
} from '@claw/core';
import {
  DefaultPolicy,
  FileAuditLog,
  Gate,
  grantStoreForWorkspace,
  type ApprovalHandler,
} from '@claw/approval';
import { Engine, builtinTools } from '@claw/engine';
import { OpenAIProvider, RetryingProvider } from '@claw/provider';
import { createCommandSpawner, type CommandSpawner } from '@claw/sandbox';
import { FileSessionManager, type PersistentSession } from '@claw/session-store';
import path from 'node:path';
import type { Tracer } from '@opentelemetry/api';
import { RuntimeClosedError } from './errors.js';
import { Runtime } from './runtime.js';
import { commandEnvironment, type Settings } from './settings.js';

/** Where runtimes get their sessions; `FileSessionManager` and `MemorySessionManager` fit. */
export interface SessionSource {
  getOrCreate(id: string, options: { workDir: string }): Promise<AgentSession>;
}

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
  /** Where spans go (e.g. `createFileTracing(...).tracer`); default: the global tracer provider. */
  tracer?: Tracer;
  /** Where sessions live. Default: on disk, under each workspace's `.claw/sessions/`. */
  sessions?: SessionSource;
  /** Give subagents to the model (`spawn_subagent`). Default true. */
  subagents?: boolean;
  /** Prepared bash isolation (skips the probe), e.g. shared between factories in one process. */
  spawner?: CommandSpawner;
}

export interface CreateRuntimeOptions {
  /** Default: `runtime-N`. */
  id?: string;
  /** Default: "default". An existing session is resumed. */
  sessionId?: string;
  workDir: string;
  /** Answers the calls the policy asks about (a terminal prompt, a channel's approval cards). */
  approvalHandler: ApprovalHandler;
  /** Used when a task is started without its own. */
  reporter?: Reporter;
  /** Overrides the settings' approval mode for this runtime (e.g. remote runs deny). */
  approval?: Settings['approval'];
}

/**
 * Sessions on disk under each workspace's `.claw/sessions/` (SES-2, SES-6): one
 * `FileSessionManager` per workspace, made when first needed.
 */
export class WorkspaceSessions implements SessionSource {
  private readonly managers = new Map<string, FileSessionManager>();

  manager(workDir: string): FileSessionManager {
    const root = path.resolve(workDir);
    let manager = this.managers.get(root);
    if (manager === undefined) {
      manager = new FileSessionManager({ workDir: root });
      this.managers.set(root, manager);
    }
    return manager;
  }

  getOrCreate(id: string, options: { workDir: string }): Promise<PersistentSession> {
    const workDir = path.resolve(options.workDir);
    return this.manager(workDir).getOrCreate(id, { workDir });
  }
}

/**
 * Builds runtimes from settings (RT-2): the model (OpenAI-compatible, wrapped in retries and
 * timeouts), the built-in tools with bash isolated where the machine allows, an approval gate with
 * one file grant store per workspace and an audit log, the session, budgets and tracing. The
 * expensive shared parts (the isolation probe) are made once, lazily, and released by `close()`.
 */
export class RuntimeFactory {
  readonly settings: Settings;
  private readonly options: RuntimeFactoryOptions;
  private readonly provider: Provider;
  private readonly sessions: SessionSource;
  private spawner: Promise<CommandSpawner> | undefined;
  private readonly runtimes = new Set<Runtime>();
  private counter = 0;
  private closed = false;

  /**
   * @throws ClawError `config_missing` when no provider is given and the settings have no API key
   *   (the message names OPENAI_API_KEY).
   */
  constructor(options: RuntimeFactoryOptions) {
    this.options = options;
    this.settings = options.settings;
    this.provider = options.provider ?? createOpenAIProvider(options.settings);
    this.sessions = options.sessions ?? new WorkspaceSessions();
    if (options.spawner !== undefined) this.spawner = Promise.resolve(options.spawner);
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
    });
    return this.spawner;
  }

  /** Builds a runtime for one conversation. */
  async createRuntime(options: CreateRuntimeOptions): Promise<Runtime> {
    if (this.closed) throw new RuntimeClosedError('the runtime factory');
    const spawner = await this.isolation();
    const { settings } = this;
    const session = await this.sessions.getOrCreate(options.sessionId ?? 'default', {
      workDir: options.workDir,
    });
    const gate = new Gate({
      policy: new DefaultPolicy({ bashIsolated: spawner.mode === 'bubblewrap' }),
      handler: options.approvalHandler,
      grants: await grantStoreForWorkspace(options.workDir),
      audit: new FileAuditLog({ workDir: options.workDir }),
      mode: options.approval ?? settings.approval,
    });
    const engine = new Engine({
      provider: this.provider,
      gate,
      tools: [...builtinTools({ bash: { spawner } }), ...(this.options.tools ?? [])],
      model: settings.model,
      maxTurns: settings.maxTurns,
      subagents: this.options.subagents ?? true,
      contextWindowTokens: settings.contextWindowTokens,
      prices: settings.prices,
      maxSessionTokens: settings.maxSessionTokens,
      maxRunTokens: settings.maxRunTokens,
      maxSubagents: settings.maxSubagents,
      maxSessionCostUsd: settings.maxSessionCostUsd,
      maxRunCostUsd: settings.maxRunCostUsd,
      toolTimeBudgetMs: settings.toolTimeBudgetMs,
      ...(this.options.tracer === undefined ? {} : { tracer: this.options.tracer }),
    });
    this.counter += 1;
    const runtime: Runtime = new Runtime({
      id: options.id ?? `runtime-${this.counter}`,
      engine,
      session,
      ...(options.reporter === undefined ? {} : { reporter: options.reporter }),
      onClose: () => void this.runtimes.delete(runtime),
    });
    this.runtimes.add(runtime);
    return runtime;
  }

  /** Closes every runtime it made and releases shared resources. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.runtimes].map((runtime) => runtime.close()));
  }
}

function createOpenAIProvider(settings: Settings): Provider {
  if (settings.apiKey === undefined) {
    throw new ClawError(
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
    },
  );
}
