import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { CallOptions, ModelRequest, Provider, StreamEvent, Usage } from '@claw/core';
import { OpenAIProvider, RetryingProvider } from '@claw/provider';
import { resolveSettings, type Settings } from '@claw/runtime';
import type { EvalCase } from './case.js';
import { EvalError } from './errors.js';
import { runCase } from './harness.js';
import {
  normalizeRecording,
  recordingSchema,
  secretValues,
  type RecordedReply,
  type Recording,
} from './recorded.js';
import type { RunRecord } from './run-record.js';

/**
 * The settings of a real-model run (`claw-eval real`, `record`): the runtime's own resolution
 * (flag > OPENAI_* environment > `.claw/config.json` > default).
 *
 * @throws EvalError `config_missing` when no API key is configured.
 */
export async function realSettings(options: {
  env: Readonly<Record<string, string | undefined>>;
  workDir: string;
  model?: string;
}): Promise<Settings> {
  const settings = await resolveSettings({
    workDir: options.workDir,
    env: options.env,
    overrides: options.model === undefined ? {} : { model: options.model },
    defaultApproval: 'ask',
  });
  if (settings.apiKey === undefined) {
    throw new EvalError(
      'no model is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for another ' +
      'OpenAI-compatible server, OPENAI_MODEL for the model). Real and record modes call that ' +
      'model; the scripted suite (plain `claw-eval`) needs none',
      { code: 'config_missing', userError: true },
    );
  }
  return settings;
}

/** The model provider the runtime would build from these settings (wrapped in retries). */
export function settingsProvider(settings: Settings): Provider {
  return new RetryingProvider(
    new OpenAIProvider({
      apiKey: settings.apiKey ?? '',
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

function usageOf(usage: Usage | undefined) {
  if (usage === undefined) return {};
  const { promptTokens, completionTokens, cachedPromptTokens } = usage;
  return {
    usage: {
      promptTokens,
      completionTokens,
      ...(cachedPromptTokens === undefined ? {} : { cachedTokens: cachedPromptTokens }),
    },
  };
}

/** A provider that passes every call on and keeps each reply, with its timing, as it arrived. */
export class RecordingProvider implements Provider {
  readonly name: string;
  readonly replies: RecordedReply[] = [];
  readonly stream?: (request: ModelRequest, options?: CallOptions) => AsyncIterable<StreamEvent>;

  constructor(private readonly inner: Provider) {
    this.name = inner.name;
    const stream = inner.stream?.bind(inner);
    if (stream !== undefined) {
      this.stream = (request, options) => this.recordStream(stream(request, options));
    }
  }

  async generate(request: ModelRequest, options?: CallOptions) {
    const started = performance.now();
    const response = await this.inner.generate(request, options);
    const reasoning = response.message.reasoning;
    this.replies.push({
      text: response.message.content,
      chunks: response.message.content === '' ? [] : [response.message.content],
      ...(reasoning === undefined || reasoning === '' ? {} : { reasoning: [reasoning] }),
      toolCalls: response.message.toolCalls ?? [],
      ...usageOf(response.usage),
      ttfbMs: performance.now() - started,
      gapsMs: [],
    });
    return response;
  }

  private async *recordStream(events: AsyncIterable<StreamEvent>): AsyncGenerator<StreamEvent> {
    const started = performance.now();
    let last: number | undefined;
    let ttfbMs: number | undefined;
    const gapsMs: number[] = [];
    const chunks: string[] = [];
    const reasoning: string[] = [];
    for await (const event of events) {
      const now = performance.now();
      if (last === undefined) ttfbMs = now - started;
      else gapsMs.push(now - last);
      last = now;
      if (event.type === 'text_delta') chunks.push(event.delta);
      if (event.type === 'reasoning_delta') reasoning.push(event.delta);
      if (event.type === 'completed') {
        const { message, usage } = event.response;
        this.replies.push({
          text: message.content,
          chunks: chunks.join('') === message.content ? chunks : [message.content],
          ...(reasoning.length > 0 ? { reasoning } : {}),
          toolCalls: message.toolCalls ?? [],
          ...usageOf(usage),
          ...(ttfbMs === undefined ? {} : { ttfbMs }),
          gapsMs,
        });
      }
      yield event;
    }
  }
}

export interface RecordResult {
  recording: Recording;
  run: RunRecord;
}

/**
 * Records a real model working on a case (EVAL-6): the case's workspace and prompt, the
 * configured model (or `provider`), and its replies captured as script rounds — call ids left to
 * the harness, the run's temporary paths as placeholders, secrets (the API key, secret-looking
 * environment values, key patterns) redacted — so that the session replays as a case.
 *
 * @throws EvalError `case_invalid` for a case that cannot run against a real model;
 *   `harness_failed` when the run could not be made.
 */
export async function recordCase(
  evalCase: EvalCase,
  options: {
    settings: Settings;
    env: Readonly<Record<string, string | undefined>>;
    provider?: Provider;
    signal?: AbortSignal;
  },
): Promise<RecordResult> {
  if (evalCase.real === false) {
    throw new EvalError(
      `case "${evalCase.id}" cannot be recorded: it scripts what a real model cannot do (faults, ` +
      'a cancel point, a stored session or a canary); pick a case that runs in `claw-eval real`',
      { code: 'case_invalid', userError: true },
    );
  }
  const recorder = new RecordingProvider(options.provider ?? settingsProvider(options.settings));
  const run = await runCase(evalCase, {
    mode: 'real',
    settings: options.settings,
    provider: recorder,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  if (run.infraError !== undefined || run.folders === undefined) {
    throw new EvalError(`the recording run failed: ${run.infraError ?? 'no workspace'}`, {
      code: 'harness_failed',
    });
  }
  const secrets = [
    ...secretValues(options.env),
    ...(options.settings.apiKey === undefined ? [] : [options.settings.apiKey]),
  ];
  const rounds = normalizeRecording(recorder.replies, {
    places: { ...run.folders, home: os.homedir() },
    secrets,
  });
  const recording = recordingSchema.parse({
    format: 'claw-eval-recording',
    version: 1,
    case: evalCase.id,
    model: options.settings.model,
    recordedAt: new Date().toISOString(),
    rounds,
  });
  return { recording, run };
}

/** Writes a recording as `<folder>/<case>.recorded.json` (or to `file`); returns the path. */
export async function writeRecording(
  recording: Recording,
  target: { folder?: string; file?: string },
): Promise<string> {
  const file = target.file ?? path.join(target.folder ?? '.', `${recording.case}.recorded.json`);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(recording, null, 2)}\n`);
  return file;
}
