import { z } from 'zod';
import { ClawUserError } from './errors.js';
import { approvalModes } from './events.js';

const positiveInt = z.number().int().positive();
/** Budgets: a number ≤ 0 means unlimited. */
const budget = z.number().int();
const milliseconds = z.number().int().nonnegative();

/** Price of a model in US dollars per million tokens. */
export const modelPriceSchema = z
  .object({
    inputPerMillion: z.number().nonnegative(),
    outputPerMillion: z.number().nonnegative(),
    /**
     * Input tokens the server read from its prompt cache (REAL-5). Absent: they cost as much as
     * other input tokens (never less than they may).
     */
    cachedInputPerMillion: z.number().nonnegative().optional(),
  })
  .strict();

/**
 * `<workDir>/.claw/config.json`. Every key is optional; flags and environment variables override
 * it, and defaults fill the rest. Unknown keys are an error, so a typo never goes unnoticed.
 */
export const clawConfigSchema = z
  .object({
    model: z.string().min(1),
    baseUrl: z.url(),
    maxTurns: positiveInt,
    maxSessionTokens: budget,
    maxRunTokens: budget,
    maxSubagents: budget,
    maxSessionCostUsd: z.number(),
    maxRunCostUsd: z.number(),
    toolTimeBudgetMs: budget,
    callTimeoutMs: milliseconds,
    firstTokenTimeoutMs: milliseconds,
    streamIdleTimeoutMs: milliseconds,
    /** A file whose text replaces claw's own system prompt (REAL-1), relative to the workspace. */
    systemPromptFile: z.string().min(1),
    /** Text added at the end of the system prompt (REAL-1). */
    appendSystemPrompt: z.string().min(1),
    retries: z.number().int().nonnegative(),
    contextWindowTokens: positiveInt,
    /** Compact the conversation once a request would fill this share of the window (CMP-1). */
    compactAtRatio: z.number().gt(0.1).max(1),
    approval: z.enum(approvalModes),
    prices: z.record(z.string().min(1), modelPriceSchema),
    /**
     * Workspace files the file tools may use although claw guards them as secrets (`.env*`):
     * workspace-relative patterns, `*` within a name and `**` across folders (TRUST-4).
     */
    allowFiles: z.array(z.string().min(1)),
    /** Bash isolation (SBX-4): `required` refuses to run bash without it. */
    sandbox: z
      .object({
        isolation: z.enum(['auto', 'required', 'off']),
        allowNetwork: z.boolean(),
      })
      .partial()
      .strict(),
  })
  .partial()
  .strict();

export type ClawConfig = z.infer<typeof clawConfigSchema>;
export type ModelPrice = z.infer<typeof modelPriceSchema>;

/**
 * Validates parsed config JSON. `source` names where it came from (a file path) for the message.
 *
 * @throws ClawError with code `config_invalid`, naming each bad key and what is wrong with it.
 */
export function parseClawConfig(value: unknown, source: string): ClawConfig {
  const result = clawConfigSchema.safeParse(value);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const key = issue.path.length > 0 ? issue.path.map(String).join('.') : '(top level)';
    if (issue.code === 'unrecognized_keys') {
      const prefix = key === '(top level)' ? '' : `${key}.`;
      return `unknown key ${issue.keys.map((k) => `"${prefix}${k}"`).join(', ')}`;
    }
    return `"${key}": ${issue.message}`;
  });
  throw new ClawUserError(`invalid configuration in ${source}: ${problems.join('; ')}`, {
    code: 'config_invalid',
    cause: result.error,
  });
}
