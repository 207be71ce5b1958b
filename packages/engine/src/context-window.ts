/**
 * The context windows of well-known models, in tokens (CMP-1), as their makers publish them.
 * A name matches an entry exactly, or as the longest entry it starts with followed by `-`, `:`,
 * `/` or `.` (so `gpt-4o-2024-08-06` is `gpt-4o`, `qwen2.5-coder:32b` is `qwen2.5-coder`). Set
 * `contextWindowTokens` for any other model, or where a server runs a model with less context
 * than it can take (local servers often do).
 */
export const knownContextWindows: Readonly<Record<string, number>> = {
  'gpt-4o': 128_000,
  'gpt-4o-mini': 128_000,
  'gpt-4.1': 1_047_576,
  'gpt-4.1-mini': 1_047_576,
  'gpt-4.1-nano': 1_047_576,
  'gpt-5': 400_000,
  'gpt-5-mini': 400_000,
  'gpt-5-nano': 400_000,
  o3: 200_000,
  'o3-mini': 200_000,
  'o4-mini': 200_000,
  'deepseek-chat': 128_000,
  'deepseek-reasoner': 128_000,
  'claude-sonnet-4': 200_000,
  'claude-opus-4': 200_000,
  'claude-3-5-haiku': 200_000,
  'gemini-2.5-pro': 1_048_576,
  'gemini-2.5-flash': 1_048_576,
  'llama-3.3-70b-versatile': 131_072,
  'qwen2.5-coder': 32_768,
  'qwen3-coder': 262_144,
};

/**
 * The context window of `model` by {@link knownContextWindows}, or `undefined` when the table
 * does not know it. A provider prefix (`openai/gpt-4o`, as OpenRouter names models) is looked
 * past.
 */
export function contextWindowOf(model: string | undefined): number | undefined {
  if (model === undefined || model === '') return undefined;
  const name = model.includes('/') ? model.slice(model.lastIndexOf('/') + 1) : model;
  const exact = knownContextWindows[name];
  if (exact !== undefined) return exact;
  let best: string | undefined;
  for (const known of Object.keys(knownContextWindows)) {
    const next = name.charAt(known.length);
    if (name.startsWith(known) && '-:.'.includes(next) && next !== '' &&
      (best === undefined || known.length > best.length)) {
      best = known;
    }
  }
  return best === undefined ? undefined : knownContextWindows[best];
}
