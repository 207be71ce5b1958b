import { z } from 'zod';
import { defineCase, type EvalCase, type Expectations } from './case.js';
import { EvalError } from './errors.js';
import { argumentsText, callId, parseArguments, roundSchema, type Round } from './script.js';

/** A recorded session file (`claw-eval record`): the rounds a real model gave, as a script. */
export const recordingSchema = z.object({
  format: z.literal('claw-eval-recording'),
  version: z.literal(1),
  /** The case the session was recorded on. */
  case: z.string(),
  /** The model that answered. */
  model: z.string(),
  recordedAt: z.string(),
  rounds: z.array(roundSchema),
});

export type Recording = z.infer<typeof recordingSchema>;

/**
 * The expectations of a case for a replayed recording or a real model: the model may take other
 * steps than the script did, so trajectories only require the expected tools (forbidden tools
 * stay forbidden), and exact model-call, retry and compaction counts are dropped (a model that
 * writes more or less compacts at other points); so are the cost (of other usage) and what
 * depends on the model reasoning (it may not), except that no reasoning may show in the answer.
 */
export function relaxedExpectations(expect: Expectations): Expectations {
  const { trajectory, budget, trace, requests, thinking, compaction, ...rest } = expect;
  const expectedTools = [
    ...new Set([
      ...(trajectory?.strict ?? []),
      ...(trajectory?.unordered ?? []),
      ...(trajectory?.inOrder ?? []),
      ...(trajectory?.subset ?? []),
      ...Object.entries(trajectory?.counts ?? {})
        .filter(([, count]) => count > 0)
        .map(([name]) => name),
    ]),
  ];
  const relaxedTrajectory = {
    ...(expectedTools.length > 0 ? { subset: expectedTools } : {}),
    ...(trajectory?.forbidden === undefined ? {} : { forbidden: trajectory.forbidden }),
  };
  const { modelCalls: _calls, costUsd: _cost, ...keptBudget } = budget ?? {};
  const { retries: _retries, ...keptTrace } = trace ?? {};
  const { reasoningNotSent: _reasoning, ...keptRequests } = requests ?? {};
  const keptCompaction = compaction?.storedUpTo === undefined
    ? {}
    : { storedUpTo: compaction.storedUpTo };
  return {
    ...rest,
    ...(Object.keys(relaxedTrajectory).length > 0 ? { trajectory: relaxedTrajectory } : {}),
    ...(Object.keys(keptBudget).length > 0 ? { budget: keptBudget } : {}),
    ...(Object.keys(keptTrace).length > 0 ? { trace: keptTrace } : {}),
    ...(Object.keys(keptRequests).length > 0 ? { requests: keptRequests } : {}),
    ...(Object.keys(keptCompaction).length > 0 ? { compaction: keptCompaction } : {}),
    ...(thinking?.notInAnswer === true ? { thinking: { notInAnswer: true } } : {}),
  };
}

/**
 * A recorded session as a case of its own: the case it was recorded on, with the recording as its
 * script and relaxed trajectory expectations, id `<case>-recorded`.
 *
 * @throws EvalError `script_invalid` when `json` is not a recording, `case_invalid` when the case
 *   it names is not among `cases`.
 */
export function recordedCase(json: unknown, cases: readonly EvalCase[], source: string): EvalCase {
  const parsed = recordingSchema.safeParse(json);
  if (!parsed.success) {
    throw new EvalError(`${source} is not a claw-eval recording: ${z.prettifyError(parsed.error)}`, {
      code: 'script_invalid',
      userError: true,
    });
  }
  const recording = parsed.data;
  const base = cases.find((candidate) => candidate.id === recording.case);
  if (base === undefined) {
    throw new EvalError(
      `${source} was recorded on case "${recording.case}", which is not in this folder; put it ` +
      'next to the case files (eval/cases/) or record it again',
      { code: 'case_invalid', userError: true },
    );
  }
  const { kind: _kind, ...input } = base;
  return defineCase({
    ...input,
    id: `${base.id}-recorded`,
    title: `${base.title} (replayed from ${recording.model}, ${recording.recordedAt})`,
    tags: [...base.tags, 'recorded'],
    script: recording.rounds,
    real: false,
    expect: relaxedExpectations(base.expect),
  });
}

/** Where the paths of a recorded run were, to be replaced by placeholders. */
export interface RecordingPlaces {
  workspace: string;
  outside: string;
  /** The run's root (holding workspace/ and outside/). */
  root: string;
  /** The user's home folder, shown as `~`. */
  home?: string;
}

const secretName = /(?:key|token|secret|password|passwd|auth|credential)/i;

/**
 * Secret values to redact: every environment variable whose name suggests a secret and whose
 * value is long enough to be one.
 */
export function secretValues(env: Readonly<Record<string, string | undefined>>): string[] {
  return Object.entries(env)
    .filter(([name, value]) => secretName.test(name) && value !== undefined && value.length >= 6)
    .map(([, value]) => value as string);
}

const secretPatterns: Array<[RegExp, string]> = [
  [/\bsk-[A-Za-z0-9_-]{8,}/g, '[redacted]'],
  [/\bBearer\s+[A-Za-z0-9._~+/-]{8,}=*/g, 'Bearer [redacted]'],
  [/\b(api[_-]?key|access[_-]?token|secret|password)(["']?\s*[:=]\s*["']?)([^\s"',}]{6,})/gi, '$1$2[redacted]'],
];

/** `text` with secrets and this run's paths replaced, and the model's call ids by the harness's. */
export function normalizeText(
  text: string,
  options: {
    places: RecordingPlaces;
    secrets: readonly string[];
    ids: ReadonlyMap<string, string>;
  },
): string {
  let out = text;
  for (const secret of [...options.secrets].sort((a, b) => b.length - a.length)) {
    out = out.replaceAll(secret, '[redacted]');
  }
  for (const [pattern, replacement] of secretPatterns) out = out.replace(pattern, replacement);
  const { places } = options;
  // Longest first: the workspace and outside folders sit inside the root.
  const paths: Array<[string, string]> = [
    [places.workspace, '{{workspace}}'],
    [places.outside, '{{outside}}'],
    [places.root, '{{workspace}}/..'],
    ...(places.home === undefined || places.home.length < 2 ? [] : [[places.home, '~'] as [string, string]]),
  ];
  for (const [place, placeholder] of paths.sort((a, b) => b[0].length - a[0].length)) {
    out = out.replaceAll(place, placeholder);
  }
  for (const [original, normalized] of options.ids) out = out.replaceAll(original, normalized);
  return out;
}

/** One model reply as the recorder saw it. */
export interface RecordedReply {
  text: string;
  /** Text deltas as they arrived. */
  chunks: string[];
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  /** Reasoning deltas as they arrived (REAL-4); empty when the model streamed none. */
  reasoning?: string[];
  usage?: { promptTokens: number; completionTokens: number; cachedTokens?: number };
  /** Milliseconds from the call's start to its first stream event. */
  ttfbMs?: number;
  /** Milliseconds between the stream's events. */
  gapsMs: number[];
}

function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/**
 * Replies recorded from a real model → script rounds (EVAL-6): call ids dropped (the harness
 * assigns its own; ids quoted in text are rewritten to them), the run's temporary paths replaced
 * by placeholders, secrets redacted (in the reasoning too), cached tokens kept, timing kept (time
 * to first token, the typical gap between stream events), rounded to whole milliseconds.
 */
export function normalizeRecording(
  replies: readonly RecordedReply[],
  options: { places: RecordingPlaces; secrets: readonly string[] },
): Round[] {
  const ids = new Map<string, string>();
  replies.forEach((reply, index) => {
    reply.toolCalls.forEach((call, position) => {
      if (call.id !== '') ids.set(call.id, callId(index + 1, position));
    });
  });
  const clean = (text: string): string => normalizeText(text, { ...options, ids });
  return replies.map((reply): Round => {
    const chunks = reply.chunks.map(clean);
    const joined = chunks.join('');
    const reasoning = (reply.reasoning ?? []).map(clean);
    const toolCalls = reply.toolCalls.map((call) => {
      const text = clean(call.arguments);
      const parsed = parseArguments(text);
      const asObject = argumentsText({ name: call.name, arguments: parsed }) === text ||
        (Object.keys(parsed).length > 0 && safeJson(text));
      return { name: call.name, arguments: asObject ? parsed : text };
    });
    const gap = Math.round(median(reply.gapsMs));
    return {
      ...(chunks.length > 1 ? { chunks } : joined === '' ? {} : { text: joined }),
      ...(reasoning.length > 0 ? { reasoning } : {}),
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
      ...(reply.usage === undefined ? {} : { usage: reply.usage }),
      ...(reply.ttfbMs === undefined ? {} : { ttfbMs: Math.round(reply.ttfbMs) }),
      ...(gap > 0 ? { chunkGapMs: gap } : {}),
    };
  });
}

function safeJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
