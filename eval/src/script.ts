import { z } from 'zod';

/**
 * The script of a case (EVAL-1): what the model answers, round by round. A round is one attempt
 * at a model call: normally a reply (text, tool calls, usage, timing); with a `fault` an attempt
 * that fails (an HTTP status such as 429, or a model that hangs until a timeout stops it), which
 * a retrying provider follows with the next round. Call ids are not part of a script: the harness
 * assigns them (`call_<round>_<n>`), so scripts, recordings and results compare across runs.
 *
 * Text and arguments may hold `{{workspace}}` (the run's workspace folder) and `{{outside}}` (a
 * folder next to it that the run must never change); recordings use them for temporary paths.
 */
export const roundFaultSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('status'),
    status: z.number().int().min(400).max(599),
    retryAfterMs: z.number().int().min(0).optional(),
    message: z.string().optional(),
    /**
     * The error's `code` as the server names it (openai-http), e.g. `context_length_exceeded`:
     * the body is then `{"error":{"message","type":"invalid_request_error","code"}}`, as OpenAI
     * sends it. Without it the fake server's own error body is sent.
     */
    code: z.string().min(1).optional(),
  }),
  z.object({ type: z.literal('hang') }),
]);

export const scriptToolCallSchema = z.object({
  name: z.string().min(1),
  /** An object (sent as JSON) or the raw argument text the model sent. */
  arguments: z.union([z.record(z.string(), z.unknown()), z.string()]).optional(),
});

export const usageSchema = z
  .object({
    promptTokens: z.number().int().min(0),
    completionTokens: z.number().int().min(0),
    /**
     * Of `promptTokens`, those the server read from its prompt cache (REAL-5): sent as
     * `prompt_tokens_details.cached_tokens` over HTTP, as `cachedPromptTokens` in process.
     */
    cachedTokens: z.number().int().min(0).optional(),
  })
  .refine((usage) => (usage.cachedTokens ?? 0) <= usage.promptTokens, {
    message: 'cachedTokens are a part of promptTokens: they cannot be more',
    path: ['cachedTokens'],
  });

/**
 * What the request a round answers must hold (checked by the requests scorer): a request that does
 * not fails the case, so that a script cannot answer a call it was not written for (a summary
 * call where a turn was meant, a turn that lost the task). Texts may hold `{{workspace}}` and
 * `{{outside}}`.
 */
export const requestExpectationSchema = z
  .object({
    /** Texts the request's messages carry (each in some message, any role). */
    contains: z.array(z.string().min(1)).optional(),
    /** Texts no message of the request carries (negative: the request was made, as evidence). */
    absent: z.array(z.string().min(1)).optional(),
    /** The first message after the system message is a user message of exactly this text. */
    firstUser: z.string().min(1).optional(),
    /**
     * `true`: the request is claw's summary call (CMP-2: no tools, claw's summary instructions as
     * its system message); `false`: it is an ordinary turn.
     */
    isSummary: z.boolean().optional(),
  })
  .strict();

export const roundSchema = z
  .object({
    text: z.string().optional(),
    /** The text as streamed, piece by piece (joined, it is the text). */
    chunks: z.array(z.string()).optional(),
    /**
     * The model's reasoning (REAL-4), streamed piece by piece before the text: as
     * `reasoning_content` deltas over HTTP, as `reasoning_delta` events in process.
     */
    reasoning: z.array(z.string()).optional(),
    toolCalls: z.array(scriptToolCallSchema).optional(),
    usage: usageSchema.optional(),
    /** Milliseconds before the first stream event (time to first token). */
    ttfbMs: z.number().min(0).optional(),
    /** Milliseconds between stream events. */
    chunkGapMs: z.number().min(0).optional(),
    fault: roundFaultSchema.optional(),
    /** What the request this round answers must hold (scripted runs). */
    expectRequest: requestExpectationSchema.optional(),
  })
  .strict();

export type RequestExpectation = z.infer<typeof requestExpectationSchema>;
export type RoundFault = z.infer<typeof roundFaultSchema>;
export type ScriptToolCall = z.infer<typeof scriptToolCallSchema>;
export type ScriptUsage = z.infer<typeof usageSchema>;
export type Round = z.infer<typeof roundSchema>;

/**
 * The rounds with the prompt tokens the model reports on each answer, in order: `promptTokens[i]`
 * goes to the i-th round that answers (a round that is a fault answers nothing), 0 past the end;
 * each keeps its completion tokens. For cases that make a small window fill up as they go.
 */
export function withPromptTokens(
  rounds: readonly Round[],
  promptTokens: readonly number[],
): Round[] {
  let answered = 0;
  return rounds.map((round): Round => {
    if (round.fault !== undefined) return round;
    const prompt = promptTokens[answered] ?? 0;
    answered += 1;
    const completionTokens = round.usage?.completionTokens ?? 0;
    return { ...round, usage: { promptTokens: prompt, completionTokens } };
  });
}

/** The id the harness gives the `index`-th (0-based) tool call of round `round` (1-based). */
export function callId(round: number, index: number): string {
  return `call_${round}_${index + 1}`;
}

/** The text of a round: its chunks joined, else its text. */
export function roundText(round: Round): string {
  return round.chunks?.join('') ?? round.text ?? '';
}

/** The reasoning of a round, its pieces joined ('' when it has none). */
export function roundReasoning(round: Round): string {
  return round.reasoning?.join('') ?? '';
}

/** The round's text cut as it is streamed (no pieces when it has no text). */
export function roundChunks(round: Round): string[] {
  if (round.chunks !== undefined) return round.chunks;
  return round.text === undefined || round.text === '' ? [] : [round.text];
}

/** A round's tool-call arguments as the JSON text the model sends. */
export function argumentsText(call: ScriptToolCall): string {
  return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {});
}

/** The parsed arguments of a tool call (an empty object when they are not a JSON object). */
export function parseArguments(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** Where `{{workspace}}` and `{{outside}}` point in one run. */
export interface ScriptPlaces {
  workspace: string;
  outside: string;
}

/** Replaces the placeholders in `text` with the run's folders. */
export function fillPlaceholders(text: string, places: ScriptPlaces): string {
  return text.replaceAll('{{workspace}}', places.workspace).replaceAll('{{outside}}', places.outside);
}

/** A round with its placeholders filled in, ready to be replayed in one run. */
export function fillRound(round: Round, places: ScriptPlaces): Round {
  const fill = (text: string): string => fillPlaceholders(text, places);
  return {
    ...round,
    ...(round.text === undefined ? {} : { text: fill(round.text) }),
    ...(round.chunks === undefined ? {} : { chunks: round.chunks.map(fill) }),
    ...(round.reasoning === undefined ? {} : { reasoning: round.reasoning.map(fill) }),
    ...(round.toolCalls === undefined
      ? {}
      : {
          toolCalls: round.toolCalls.map((call) => ({
            name: call.name,
            arguments: fill(argumentsText(call)),
          })),
        }),
    ...(round.expectRequest === undefined
      ? {}
      : { expectRequest: fillRequestExpectation(round.expectRequest, fill) }),
  };
}

function fillRequestExpectation(
  expectation: RequestExpectation,
  fill: (text: string) => string,
): RequestExpectation {
  return {
    ...expectation,
    ...(expectation.contains === undefined ? {} : { contains: expectation.contains.map(fill) }),
    ...(expectation.absent === undefined ? {} : { absent: expectation.absent.map(fill) }),
    ...(expectation.firstUser === undefined ? {} : { firstUser: fill(expectation.firstUser) }),
  };
}

/** The sum of the usage of the rounds that are replies. */
export function scriptUsage(rounds: readonly Round[]): ScriptUsage {
  let promptTokens = 0;
  let completionTokens = 0;
  for (const round of rounds) {
    if (round.fault !== undefined) continue;
    promptTokens += round.usage?.promptTokens ?? 0;
    completionTokens += round.usage?.completionTokens ?? 0;
  }
  return { promptTokens, completionTokens };
}

/** How many rounds of the script are replies (not failed attempts). */
export function replyCount(rounds: readonly Round[]): number {
  return rounds.filter((round) => round.fault === undefined).length;
}
