import { thinkingSummaryText } from '../state/selectors.js';
import type { ThinkingItem } from '../state/types.js';

/**
 * What the model reasoned in one call (REAL-4), folded to one line and dimmed so the answer stands
 * out; it opens on demand (a native, keyboard-usable toggle). Plain text, like the answer.
 */
export function ThinkingBlock({ item }: { item: ThinkingItem }) {
  return (
    <details data-testid="thinking" className="thinking" aria-busy={item.streaming}>
      <summary>{thinkingSummaryText(item)}</summary>
      <p className="thinking-text">{item.text}</p>
    </details>
  );
}
