import type { ModelPrice, Usage } from '@claw/core';

/** Prices in US dollars per million tokens, by model name. */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/**
 * List prices of common OpenAI models (US dollars per million input / output tokens) as published
 * when this table was written. Prices change: set current ones under `prices` in
 * `.claw/config.json` (they take precedence), and for any other model or server.
 */
export const defaultPrices: PriceTable = {
  'gpt-4o': { inputPerMillion: 2.5, outputPerMillion: 10 },
  'gpt-4o-mini': { inputPerMillion: 0.15, outputPerMillion: 0.6 },
  'gpt-4.1': { inputPerMillion: 2, outputPerMillion: 8 },
  'gpt-4.1-mini': { inputPerMillion: 0.4, outputPerMillion: 1.6 },
  'gpt-4.1-nano': { inputPerMillion: 0.1, outputPerMillion: 0.4 },
  'gpt-5': { inputPerMillion: 1.25, outputPerMillion: 10 },
  'gpt-5-mini': { inputPerMillion: 0.25, outputPerMillion: 2 },
  'gpt-5-nano': { inputPerMillion: 0.05, outputPerMillion: 0.4 },
  o3: { inputPerMillion: 2, outputPerMillion: 8 },
  'o4-mini': { inputPerMillion: 1.1, outputPerMillion: 4.4 },
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

/** The cost of one call's usage, or `undefined` when the model has no price. */
export function costOf(price: ModelPrice | undefined, usage: Usage): number | undefined {
  if (price === undefined) return undefined;
  return (
    (usage.promptTokens * price.inputPerMillion + usage.completionTokens * price.outputPerMillion) /
    1_000_000
  );
}
