import type { ModelPrice, Usage } from '@claw/core';

/** Prices in US dollars per million tokens, by model name. */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/**
 * List prices of common OpenAI models (US dollars per million input, cached input and output
 * tokens) as published when this table was written. Prices change: set current ones under
 * `prices` in `.claw/config.json` (they take precedence), and for any other model or server.
 */
export const defaultPrices: PriceTable = {
  'gpt-4o': { inputPerMillion: 2.5, cachedInputPerMillion: 1.25, outputPerMillion: 10 },
  'gpt-4o-mini': { inputPerMillion: 0.15, cachedInputPerMillion: 0.075, outputPerMillion: 0.6 },
  'gpt-4.1': { inputPerMillion: 2, cachedInputPerMillion: 0.5, outputPerMillion: 8 },
  'gpt-4.1-mini': { inputPerMillion: 0.4, cachedInputPerMillion: 0.1, outputPerMillion: 1.6 },
  'gpt-4.1-nano': { inputPerMillion: 0.1, cachedInputPerMillion: 0.025, outputPerMillion: 0.4 },
  'gpt-5': { inputPerMillion: 1.25, cachedInputPerMillion: 0.125, outputPerMillion: 10 },
  'gpt-5-mini': { inputPerMillion: 0.25, cachedInputPerMillion: 0.025, outputPerMillion: 2 },
  'gpt-5-nano': { inputPerMillion: 0.05, cachedInputPerMillion: 0.005, outputPerMillion: 0.4 },
  o3: { inputPerMillion: 2, cachedInputPerMillion: 0.5, outputPerMillion: 8 },
  'o4-mini': { inputPerMillion: 1.1, cachedInputPerMillion: 0.275, outputPerMillion: 4.4 },
};

/**
 * The price of `model`: an exact entry, else the longest entry the name starts with followed by
 * `-` (so `gpt-4o-2024-08-06` is priced as `gpt-4o`, and `gpt-4o-mini` never as `gpt-4o`).
 * `undefined` when the model is not in the table: its cost is unknown, never a made-up zero.
 */
export function priceOf(table: PriceTable, model: string | undefined): ModelPrice | undefined {
  if (model === undefined) return undefined;
  const exact = table[model];
  if (exact !== undefined) return exact;
  let best: string | undefined;
  for (const name of Object.keys(table)) {
    if (model.startsWith(`${name}-`) && (best === undefined || name.length > best.length)) {
      best = name;
    }
  }
  return best === undefined ? undefined : table[best];
}

/**
 * The cost of one call's usage, or `undefined` when the model has no price. Prompt tokens the
 * server read from its cache (REAL-5) cost the cached input price, or the input price when the
 * model has none (never less than they may cost).
 */
export function costOf(price: ModelPrice | undefined, usage: Usage): number | undefined {
  if (price === undefined) return undefined;
  const cached = Math.min(usage.cachedPromptTokens ?? 0, usage.promptTokens);
  const uncached = usage.promptTokens - cached;
  return (
    (uncached * price.inputPerMillion +
      cached * (price.cachedInputPerMillion ?? price.inputPerMillion) +
      usage.completionTokens * price.outputPerMillion) /
      1_000_000
  );
}
