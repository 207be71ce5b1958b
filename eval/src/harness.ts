import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { staticHandler, type ApprovalHandler, type AuditEntry } from '@claw/approval';
import {
  ClawError,
  abortReason,
  emptyUsage,
  errorMessage,
  settlesWithin,
  type ApprovalDecision,
  type Compaction,
  type Message,
  type Provider,
  type Reporter,
} from '@claw/core';
import {
  RuntimeFactory,
  WorkspaceSessions,
  defaultSettings,
  type Runtime,
  type SessionSource,
  type Settings,
  type Task,
} from '@claw/runtime';
import { plainCommandSpawner } from '@claw/sandbox';
import { FileSessionManager } from '@claw/session-store';
import { canceledObservationText } from '@claw/engine';
import { context, trace } from '@opentelemetry/api';
import type { ApprovalSpec, CompactionSeed, EvalCase, HarnessFaults, SessionSeed } from './case.js';
import { EvalError } from './errors.js';
import { createScriptedModel, withRequestFaults, type ScriptedModel } from './model.js';
import type { ApprovalRecord, RunLimits, RunRecord, TimelineEvent } from './run-record.js';
import { fillRound, parseArguments, type Round } from './script.js';
import { scriptedTools } from './scripted-tools.js';
import { cpuWaitMs } from './cpu-wait.js';
import { withSlowTurns } from './slow-faults.js';
import { InMemoryTracing, ensureContextPropagation, evalSpanName } from './tracing.js';
import {
  makeRunFolders,
  removeRunFolders,
  snapshot,
  writeFiles,
  type RunFolders,
} from './workspace.js';

/** The session every case runs in. */
export const evalSessionId = 'eval';

/** The model name scripted runs ask for. */
export const scriptedModelName = 'claw-eval-script';

export interface RunCaseOptions {
  /** 0-based repeat (or trial) number. Default 0. */
  sample?: number;
  /**
   * `scripted` (default): the case's script is the model. `real`: the settings' model (or
   * `provider`) answers instead, and the script is not used.
   */
  mode?: 'scripted' | 'real';
  /** Real mode: the resolved settings (API key, base URL, model). */
  settings?: Settings;
  /** Real mode: a provider to use instead of the one the settings describe (record mode). */
  provider?: Provider;
  /** Faults added to the case's own (seeded regressions, in tests). */
  faults?: HarnessFaults;
  /** Keep the run's temporary folders (for debugging). Default false. */
  keepFolders?: boolean;
  /** Aborting cancels the run and ends the case as an infrastructure error. */
  signal?: AbortSignal;
  /**
   * How long a run may take before the harness cancels it (a run that does not end fails the
   * case). Default 30 000 ms; 600 000 ms in real mode.
   */
  timeoutMs?: number;
}

/** How long a scripted run may take by default before the harness cancels it. */
export const defaultRunTimeoutMs = 30_000;

/** The same for a run against a real model, which may think for minutes. */
export const defaultRealRunTimeoutMs = 600_000;

/** How long a canceled run may take to stop before the harness gives up on it. */
const stopGraceMs = 5_000;

/**
 * The task's result; past `limitMs` the task is canceled (`onLimit` is told) and waited for a
 * little longer.
 *
 * @throws EvalError `harness_failed` when the task does not stop even then.
 */
async function waitWithLimit(task: Task, limitMs: number, onLimit: () => void) {
  const done = task.wait();
  if (await settlesWithin(done, limitMs)) return done;
  onLimit();
  task.cancel(new ClawError(`claw-eval canceled the run after ${limitMs} ms`, { code: 'eval_timeout' }));
  if (!(await settlesWithin(done, stopGraceMs))) {
    throw new EvalError(
      `the run did not end within ${limitMs} ms and did not stop within ${stopGraceMs} ms of ` +
      'being canceled; its workspace and processes may be left behind',
      { code: 'harness_failed' },
    );
  }
  return done;
}

/** Whether `work` (when there is any) settled within `limitMs`: 'stuck' when it did not. */
async function endsWithin(work: Promise<unknown> | undefined, limitMs: number): Promise<'ended' | 'stuck'> {
  if (work === undefined) return 'ended';
  return (await settlesWithin(work, limitMs)) ? 'ended' : 'stuck';
}

/** The record of a run that has not started yet (`not_run`, nothing observed): what runs fill. */
export function emptyRunRecord(caseId: string, sample: number, mode: RunRecord['mode']): RunRecord {
  return {
    caseId,
    sample,
    mode,
    status: 'not_run',
    finalText: '',
    seededMessages: 0,
    history: [],
    sessionUsage: { ...emptyUsage },
    files: { before: {}, after: {} },
    outside: { before: {}, after: {} },
    audit: [],
    approvals: [],
    modelCalls: [],
    unusedRounds: [],
    retryWaits: [],
    toolExecutions: [],
    compactions: [],
    compactionEvents: [],
    spans: [],
    timeline: [],
    reported: { started: [], results: [], usage: [] },
    limits: {},
    script: [],
    wallMs: 0,
    cpuWaitMs: 0,
  };
}

/**
 * Runs one case once through the real runtime (EVAL-2): a temporary workspace with the case's
 * files (and a folder beside it that nothing may change), the `RuntimeFactory` with the scripted
 * model as its provider, the case's tools, budgets and approval answers, spans into memory under
 * an "Eval" span; then collects what the scorers need. Never throws: a failure of the harness
 * itself is recorded as `infraError` (an infrastructure error, never a pass).
 */
export async function runCase(
  evalCase: EvalCase,
  options: RunCaseOptions = {},
): Promise<RunRecord> {
  const origin = performance.now();
  const now = (): number => performance.now() - origin;
  const mode = options.mode ?? 'scripted';
  const timeoutMs = options.timeoutMs ?? (mode === 'real' ? defaultRealRunTimeoutMs : defaultRunTimeoutMs);
  const faults: HarnessFaults = { ...evalCase.faults, ...options.faults };
  const record = emptyRunRecord(evalCase.id, options.sample ?? 0, mode);
  let folders: RunFolders | undefined;
  let model: ScriptedModel | undefined;
  let factory: RuntimeFactory | undefined;
  let runtime: Runtime | undefined;
  const tracing = new InMemoryTracing();
  try {
    options.signal?.throwIfAborted();
    ensureContextPropagation();
    folders = await makeRunFolders(evalCase.id);
    const workDir = evalCase.workdir === undefined
      ? folders.workspace
      : path.join(folders.workspace, ...evalCase.workdir.split('/'));
    const userConfig = evalCase.userConfig === undefined ? undefined : path.join(folders.root, 'config', 'claw');
    record.folders = { ...folders, workDir, ...(userConfig === undefined ? {} : { userConfig }) };
    const places = { workspace: folders.workspace, outside: folders.outside };
    await writeFiles(folders.workspace, evalCase.files ?? {});
    await mkdir(workDir, { recursive: true });
    await writeFiles(folders.outside, evalCase.outside ?? {});
    if (userConfig !== undefined) {
      await mkdir(userConfig, { recursive: true });
      await writeFiles(userConfig, evalCase.userConfig ?? {});
    }
    if (evalCase.session !== undefined) {
      await seedSession(workDir, evalCase.session);
    }
    // claw's own state (sessions, grants, audit log) is kept in the working folder's `.claw/`.
    const ownState = evalCase.workdir === undefined ? ['.claw'] : ['.claw', `${evalCase.workdir}/.claw`];
    record.files.before = await snapshot(folders.workspace, ownState);
    record.outside.before = await snapshot(folders.root, ['workspace']);
    const rounds: Round[] = evalCase.script.map((round) => fillRound(round, places));
    record.script = rounds;

    let task: Task | undefined;
    let cancelRequested = false;
    const cancelNow = (): void => {
      if (cancelRequested) return;
      cancelRequested = true;
      record.canceledAt = now();
      task?.cancel(new ClawError('claw-eval canceled the task at the case\'s cancel point', {
        code: 'eval_cancel',
      }));
    };
    const cancel = evalCase.cancel;

    const settings = runSettings(evalCase, options, mode);
    const limits: RunLimits = {
      maxSessionTokens: settings.maxSessionTokens,
      maxRunTokens: settings.maxRunTokens,
      maxSessionCostUsd: settings.maxSessionCostUsd,
      maxRunCostUsd: settings.maxRunCostUsd,
      toolTimeBudgetMs: settings.toolTimeBudgetMs,
      maxSubagents: settings.maxSubagents,
    };
    record.limits = Object.fromEntries(
      Object.entries(limits).filter(([, limit]) => limit !== undefined),
    );
    if (userConfig !== undefined) settings.userConfigDir = userConfig;
    if (mode === 'scripted') {
      model = await createScriptedModel({
        rounds,
        ...(evalCase.model === undefined ? {} : { model: evalCase.model }),
        limits: {
          retries: settings.retries,
          callTimeoutMs: settings.callTimeoutMs,
          firstTokenTimeoutMs: settings.firstTokenTimeoutMs,
          streamIdleTimeoutMs: settings.streamIdleTimeoutMs,
        },
        faults,
        now,
        modelName: settings.model,
        onCall: (attempt) => {
          if (cancel?.when === 'model_call' && cancel.call === attempt) cancelNow();
        },
      });
      if (faults.budgetLeak === true) settings.maxRunTokens = leakyRunBudget(settings, rounds);
    }
    const tools = scriptedTools({
      specs: evalCase.tools ?? [],
      now,
      serial: faults.serialTools === true,
      onStart: (name) => {
        if (cancel?.when === 'tool_started' && (cancel.tool === undefined || cancel.tool === name)) {
          cancelNow();
        }
      },
    });
    record.toolExecutions = tools.executions;
    const sessions: SessionSource | undefined =
      faults.dropCanceledObservation === true || faults.failJournal !== undefined
        ? new FaultySessions(new WorkspaceSessions(), faults)
        : undefined;
    const given = model?.provider ?? options.provider;
    const slow = given === undefined ? undefined : withSlowTurns(given, faults);
    const provider = slow === undefined ? undefined : withRequestFaults(slow.provider, faults);
    factory = new RuntimeFactory({
      settings,
      env: {},
      ...(provider === undefined ? {} : { provider }),
      tracer: tracing.tracer,
      // EVAL-2: the file tools and the case's own, no bash, no MCP.
      builtinTools: ['read_file', 'write_file', 'edit_file'],
      mcp: { enabled: false },
      tools: tools.tools,
      subagents: evalCase.subagents ?? false,
      spawner: plainCommandSpawner(),
      ...(sessions === undefined ? {} : { sessions }),
    });
    const handler = approvalHandler(evalCase.approval, record.approvals, now, () => {
      if (cancel?.when === 'approval') {
        cancelNow();
        return true;
      }
      return false;
    });
    runtime = await factory.createRuntime({
      workDir,
      sessionId: evalSessionId,
      approvalHandler: handler,
    });
    record.seededMessages = runtime.session.history().length;
    const storedBefore = runtime.session.compaction();
    if (storedBefore !== undefined) record.compactionBefore = structuredClone(storedBefore);

    const evalSpan = tracing.tracer.startSpan(evalSpanName, {
      attributes: {
        'claw.eval.case': evalCase.id,
        'claw.eval.sample': record.sample,
        'claw.eval.mode': mode,
      },
    });
    const reporter = timelineReporter(record, now, faults);
    const onAbort = (): void => {
      task?.cancel(abortReason(options.signal as AbortSignal));
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const events = watchCompactionEvents(runtime, record);
    let result;
    const waitedBefore = cpuWaitMs();
    try {
      slow?.begin();
      task = context.with(trace.setSpan(context.active(), evalSpan), () =>
        (runtime as Runtime).start(evalCase.prompt, reporter),
      );
      if (cancelRequested) task.cancel(new Error('claw-eval canceled the task at its cancel point'));
      result = await waitWithLimit(task, timeoutMs, () => {
        record.timedOut = true;
      });
      await events.finish();
    } finally {
      record.cpuWaitMs = cpuWaitMs() - waitedBefore;
      events.stop();
      options.signal?.removeEventListener('abort', onAbort);
      evalSpan.end();
    }
    options.signal?.throwIfAborted();
    record.status = result.status;
    record.finalText = result.finalText;
    record.runCost = { ...result.cost };
    record.result = {
      ...(result.compactions === undefined ? {} : { compactions: result.compactions }),
      ...(result.summaryCalls === undefined ? {} : { summaryCalls: result.summaryCalls }),
    };
    if (result.error !== undefined) {
      record.errorCode = result.error.code;
      record.errorMessage = result.error.message;
    }
    record.history = structuredClone([...runtime.session.history()]);
    record.sessionUsage = runtime.session.usage();
    const storedAfter = runtime.session.compaction();
    if (storedAfter !== undefined) record.compactionAfter = structuredClone(storedAfter);
    await runtime.close();
    runtime = undefined;
    await factory.close();
    factory = undefined;
    record.audit = await readAudit(workDir);
    record.files.after = await snapshot(folders.workspace, ownState);
    record.outside.after = await snapshot(folders.root, ['workspace']);
  } catch (error) {
    record.infraError = `${errorMessage(error)}${error instanceof Error && error.stack !== undefined ? `\n${error.stack.split('\n').slice(1, 6).join('\n')}` : ''}`;
  } finally {
    // A run that never stopped (an engine that hangs) keeps its runtime from closing: give up on
    // it after a grace, say so, and go on with the next case (nothing else may wait for it).
    let stuck = await endsWithin(runtime?.close(), stopGraceMs) === 'stuck';
    // The factory of a stuck runtime waits for it too: closed behind, not waited for.
    if (stuck) void factory?.close().catch(() => undefined);
    else stuck = await endsWithin(factory?.close(), stopGraceMs) === 'stuck';
    if (stuck) {
      const [first = '', ...rest] = (record.infraError ?? 'the run ended').split('\n');
      record.infraError = [
        `${first}; its runtime did not close within ${stopGraceMs} ms and was left behind`,
        ...rest,
      ].join('\n');
    }
    if (model !== undefined) {
      record.modelCalls = model.calls;
      record.unusedRounds = model.unusedRounds();
      record.retryWaits = [...model.retryWaits];
      await model.close().catch(() => undefined);
    }
    record.spans = tracing.spans(origin);
    await tracing.shutdown().catch(() => undefined);
    if (folders !== undefined && options.keepFolders !== true) {
      await removeRunFolders(folders).catch(() => undefined);
    }
    record.wallMs = now();
  }
  return record;
}

/**
 * The runtime settings of one run: the case's budgets, model limits and (scripted) model name and
 * price over the runtime's defaults.
 */
export function runSettings(
  evalCase: EvalCase,
  options: Pick<RunCaseOptions, 'settings'>,
  mode: 'scripted' | 'real',
): Settings {
  const base: Settings = mode === 'real' && options.settings !== undefined
    ? options.settings
    : {
        ...defaultSettings,
        apiKey: undefined,
        baseUrl: undefined,
        model: scriptedModelName,
        approval: 'ask',
        sandbox: { isolation: 'off', allowNetwork: false },
      };
  const spec = evalCase.model ?? {};
  const model = mode === 'scripted' ? spec.name ?? base.model : base.model;
  return {
    ...base,
    // The handler answers for the case: every call the policy asks about reaches it.
    approval: 'ask',
    ...(spec.retries === undefined ? {} : { retries: spec.retries }),
    ...(spec.firstTokenTimeoutMs === undefined
      ? {}
      : { firstTokenTimeoutMs: spec.firstTokenTimeoutMs }),
    ...(spec.streamIdleTimeoutMs === undefined
      ? {}
      : { streamIdleTimeoutMs: spec.streamIdleTimeoutMs }),
    ...(spec.callTimeoutMs === undefined ? {} : { callTimeoutMs: spec.callTimeoutMs }),
    ...(mode === 'scripted'
      ? {
          model,
          ...(spec.price === undefined ? {} : { prices: { ...base.prices, [model]: spec.price } }),
        }
      : {}),
    ...(evalCase.contextWindowTokens === undefined
      ? {}
      : { contextWindowTokens: evalCase.contextWindowTokens }),
    ...(evalCase.compactAtRatio === undefined ? {} : { compactAtRatio: evalCase.compactAtRatio }),
    ...evalCase.budgets,
  };
}

/** Seeded fault: the run budget admits one more model call (the first reply's tokens more). */
function leakyRunBudget(settings: Settings, rounds: readonly Round[]): number {
  const first = rounds.find((round) => round.fault === undefined);
  const tokens = (first?.usage?.promptTokens ?? 0) + (first?.usage?.completionTokens ?? 0);
  return settings.maxRunTokens > 0 ? settings.maxRunTokens + tokens : settings.maxRunTokens;
}

/** Writes the seeded session through the session store, as a crashed run would have left it. */
async function seedSession(workDir: string, seed: SessionSeed): Promise<void> {
  const manager = new FileSessionManager({ workDir });
  try {
    const lease = await manager.open(evalSessionId, { workDir });
    try {
      const session = lease.session;
      if (seed.history.length > 0) await session.append(...structuredClone(seed.history));
      const calls = seed.history.flatMap((message) =>
        message.role === 'assistant' ? message.toolCalls ?? [] : [],
      );
      for (const id of seed.started ?? []) {
        const call = calls.find((candidate) => candidate.id === id);
        if (call !== undefined) await session.toolStarted(call);
      }
      if (seed.compaction !== undefined) {
        await session.compact(seededCompaction(seed.history, seed.compaction));
      }
      await session.flush();
    } finally {
      await lease.release();
    }
  } finally {
    await manager.close();
  }
}

/** A seeded compaction with its defaults filled in, as the engine would have stored it. */
export function seededCompaction(history: readonly Message[], seed: CompactionSeed): Compaction {
  const kept = seed.kept ?? history
    .slice(0, seed.upTo)
    .flatMap((message, index) => (message.role === 'user' ? [index] : []));
  return {
    reason: seed.reason ?? 'threshold',
    upTo: seed.upTo,
    kept,
    ...(seed.summary === undefined ? {} : { summary: seed.summary }),
    pruned: seed.pruned ?? [],
    tokensBefore: seed.tokensBefore ?? 0,
    tokensAfter: seed.tokensAfter ?? 0,
    prunedResults: seed.pruned?.length ?? 0,
    summarisedMessages: seed.upTo - kept.length,
    ...(seed.summaryError === undefined ? {} : { summaryError: seed.summaryError }),
  };
}

/** How long the harness waits for the task's end event once the task has ended. */
const endEventWaitMs = 2_000;

const taskEnds = new Set(['task_completed', 'task_canceled', 'task_failed']);

/**
 * Reads the session's events from now on while the task runs (so that a long run never leaves
 * the reader behind its bound), keeping the `context_compacted` ones (CMP-5), until the task's
 * end event. `finish` waits for that event once the task has ended; a failure to read is recorded
 * as `eventsError`, which the compaction scorer reports.
 */
function watchCompactionEvents(
  runtime: Runtime,
  record: RunRecord,
): { finish(): Promise<void>; stop(): void } {
  const controller = new AbortController();
  let ended = false;
  const reading = (async () => {
    for await (const event of runtime.events({ signal: controller.signal })) {
      if (event.type === 'context_compacted') record.compactionEvents.push(structuredClone(event));
      if (taskEnds.has(event.type)) {
        ended = true;
        return;
      }
    }
  })().catch((error: unknown) => {
    if (!controller.signal.aborted) record.eventsError = errorMessage(error);
  });
  return {
    async finish() {
      const timer = setTimeout(() => controller.abort(), endEventWaitMs);
      try {
        await reading;
      } finally {
        clearTimeout(timer);
      }
      if (!ended && record.eventsError === undefined) {
        record.eventsError = `the task's end event was not logged within ${endEventWaitMs} ms of its end`;
      }
    },
    stop() {
      controller.abort();
    },
  };
}

/**
 * The case's approval answers (EVAL-2): `allow_once` unless a rule or the default says otherwise.
 * `onAsked` returning true means the harness canceled the task here: the handler then waits for
 * the abort, as a person who never answers would.
 */
function approvalHandler(
  spec: ApprovalSpec | undefined,
  approvals: ApprovalRecord[],
  now: () => number,
  onAsked: () => boolean,
): ApprovalHandler {
  return {
    async approve(prompt, signal) {
      if (onAsked()) {
        approvals.push({ toolName: prompt.toolName, arguments: prompt.arguments, decision: 'canceled', at: now() });
        await new Promise<never>((_, reject) => {
          if (signal.aborted) reject(abortReason(signal));
          else signal.addEventListener('abort', () => reject(abortReason(signal)), { once: true });
        });
      }
      const args = parseArguments(prompt.arguments);
      const rule = spec?.rules?.find(
        (candidate) =>
          candidate.tool === prompt.toolName &&
          (candidate.path === undefined || candidate.path === args.path),
      );
      const decision: ApprovalDecision = rule?.decision ?? spec?.default ?? 'allow_once';
      const { toolName, arguments: text } = prompt;
      approvals.push({ toolName, arguments: text, decision, at: now() });
      return staticHandler(decision).approve(prompt, signal);
    },
  };
}

/** The reporter fault's failure: what a reporter whose connection closed would throw. */
export const reporterFaultMessage = 'claw-eval: the reporter failed (seeded fault)';

function timelineReporter(
  record: Pick<RunRecord, 'timeline' | 'compactions' | 'reported'>,
  now: () => number,
  faults: HarnessFaults,
): Reporter {
  const { timeline, compactions, reported } = record;
  const push = (event: Omit<TimelineEvent, 'at'>): void => {
    timeline.push({ at: now(), ...event });
  };
  const counts = { onToolCall: 0, onToolResult: 0 };
  // The seeded reporter fault: the nth call of one callback rejects (after it was recorded).
  // Otherwise the callbacks return nothing, as a reporter that is done when it returns does.
  const failing = (callback: keyof typeof counts): Promise<void> | undefined => {
    counts[callback] += 1;
    const fault = faults.failReporter;
    return fault?.callback === callback && fault.nth === counts[callback]
      ? Promise.reject(new Error(reporterFaultMessage))
      : undefined;
  };
  let misreportNext = faults.misreportResult === true;
  return {
    onCompacted: (compaction) => {
      compactions.push({ at: now(), compaction: structuredClone(compaction) });
      const summarised = compaction.summarisedMessages === 0
        ? ''
        : `, ${compaction.summarisedMessages} message(s) ${compaction.summaryError === undefined ? 'summarised' : `left out (${compaction.summaryError})`}`;
      push({
        type: 'compacted',
        detail: `${compaction.reason}: ${compaction.tokensBefore} → ${compaction.tokensAfter} tokens, ` +
          `${compaction.prunedResults} result(s) pruned${summarised}`,
      });
    },
    onThinking: ({ turn }) => push({ type: 'thinking', detail: `model call ${turn}` }),
    onThinkingDelta: (delta) => push({ type: 'thinking_delta', detail: delta }),
    onTextCompleted: (text) => push({ type: 'text', detail: text }),
    onToolCall: (call) => {
      push({ type: 'tool_call', detail: `${call.name} ${call.arguments}`, toolCallId: call.id });
      return failing('onToolCall');
    },
    onToolStarted: (call) => {
      reported.started.push({ at: now(), toolCallId: call.id, name: call.name });
    },
    onToolResult: (result) => {
      const isError = misreportNext ? !result.isError : result.isError;
      misreportNext = false;
      reported.results.push({ at: now(), ...result, isError });
      push({
        type: 'tool_result',
        detail: result.content,
        toolCallId: result.toolCallId,
        isError: result.isError,
      });
      return failing('onToolResult');
    },
    onUsage: (report) => {
      reported.usage.push({ at: now(), ...structuredClone(report) });
      push({
        type: 'usage',
        detail: `+${report.call.promptTokens} prompt, +${report.call.completionTokens} completion tokens`,
      });
    },
  };
}

async function readAudit(workDir: string): Promise<AuditEntry[]> {
  const file = path.join(workDir, '.claw', 'audit.jsonl');
  const text = await readFile(file, 'utf8').catch((error: unknown) => {
    if ((error as { code?: unknown }).code === 'ENOENT') return '';
    throw error;
  });
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as AuditEntry);
}

/** The journal fault's failure: what a session on a full disk would throw. */
export const journalFaultMessage = 'claw-eval: the tool journal write failed (seeded fault)';

/**
 * Seeded session faults. `dropCanceledObservation`: sessions that lose every synthetic "tool call
 * canceled" Observation of the first canceled call, as a cancel that drops one synthetic result
 * would. `failJournal`: from the nth record of a call starting on, each rejects, as a disk that
 * filled up would.
 */
class FaultySessions implements SessionSource {
  constructor(
    private readonly inner: SessionSource,
    private readonly faults: HarnessFaults,
  ) {}

  async open(id: string, options: { workDir: string }) {
    const lease = await this.inner.open(id, options);
    const { faults } = this;
    let dropped: string | undefined;
    let starts = 0;
    const session = lease.session;
    const append = async (...messages: Message[]): Promise<void> => {
      const kept = messages.filter((message) => {
        if (faults.dropCanceledObservation !== true) return true;
        if (message.role !== 'tool' || message.content !== canceledObservationText) return true;
        dropped ??= message.toolCallId;
        return message.toolCallId !== dropped;
      });
      if (kept.length > 0) await session.append(...kept);
    };
    const toolStarted = (...args: Parameters<NonNullable<typeof session.toolStarted>>) => {
      starts += 1;
      if (faults.failJournal !== undefined && starts >= faults.failJournal) {
        return Promise.reject(new Error(journalFaultMessage));
      }
      return session.toolStarted?.(...args) ?? Promise.resolve();
    };
    const proxied = new Proxy(session, {
      get(target, property) {
        if (property === 'append') return append;
        if (property === 'toolStarted') return toolStarted;
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    return { session: proxied, release: () => lease.release() };
  }

  list(workDir: string) {
    return this.inner.list(workDir);
  }
}
