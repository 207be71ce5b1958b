/**
 * The fields servers use for the model's reasoning, on a streamed `delta` or a whole `message`
 * (REAL-4). The SDK's types declare none of them, so they are read through this narrow type:
 * - `reasoning_content`: DeepSeek, older vLLM, llama.cpp, LM Studio;
 * - `reasoning`: OpenRouter, vLLM ≥ 0.10, Ollama, Groq;
 * - `reasoning_details`: OpenRouter's structured form, `[{ type: "reasoning.text", text }, …]`.
 */
interface ReasoningFields {
  reasoning_content?: unknown;
  reasoning?: unknown;
  reasoning_details?: unknown;
}

/**
 * The reasoning text in one delta or message, or `''`. One source per delta: servers that send
 * the same text under two names (OpenRouter's `reasoning` next to `reasoning_details`) must not
 * have it counted twice, so the first field that holds text wins, in the order
 * `reasoning_content`, `reasoning`, `reasoning_details` (only entries with a string `text`:
 * summaries and encrypted entries carry none).
 */
export function reasoningOf(part: object | null | undefined): string {
  if (part === null || part === undefined) return '';
  const fields = part as ReasoningFields;
  if (typeof fields.reasoning_content === 'string' && fields.reasoning_content !== '') {
    return fields.reasoning_content;
  }
  if (typeof fields.reasoning === 'string' && fields.reasoning !== '') return fields.reasoning;
  if (!Array.isArray(fields.reasoning_details)) return '';
  let text = '';
  for (const detail of fields.reasoning_details as unknown[]) {
    if (typeof detail !== 'object' || detail === null) continue;
    const piece = (detail as { text?: unknown }).text;
    if (typeof piece === 'string') text += piece;
  }
  return text;
}
